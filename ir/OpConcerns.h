//===- OpConcerns.h - which op needs which concern ----------------*- C++ -*-===//
//
// Each concern of an op is an interface (TgInterfaces.td) or a trait
// (TgBase.td) that a library attaches or the op declares. These are the
// rules of which tg op needs which; OpCompletenessTest checks every
// registered op against them, so an op added without one of its concerns is
// named with the concern and where its models live.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_IR_OPCONCERNS_H
#define TGC_IR_OPCONCERNS_H

#include "mlir/IR/MLIRContext.h"

#include <string>
#include <vector>

namespace tgc::tg {

/// One op without a concern it needs.
struct MissingConcern {
  std::string op;      // "tg.tanh"
  std::string concern; // "GradientOpInterface"
  std::string home;    // where its implementations live
};

/// Every concern a registered tg op of `context` lacks (with the concerns'
/// models registered: tools/InitAll.h). Empty when the dialect is whole.
std::vector<MissingConcern> missingOpConcerns(mlir::MLIRContext &context);

} // namespace tgc::tg

#endif // TGC_IR_OPCONCERNS_H
