//===- TgLocations.h - an op and its model source line, as text -*- C++ -*-===//
//
// How messages and generated code name an op: "tg.log at model.mlir:28:13".
// The generated step's NaN check (codegen/lowering) and the interpreter's write
// the same text.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_IR_TGLOCATIONS_H
#define TGC_IR_TGLOCATIONS_H

#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"

#include <string>

namespace tgc {

/// "models/Transformer.cpp:120:7": the first of a fused location's parts
/// with " (+N fused)", "?" when none has a file.
std::string describeLocation(mlir::Location loc);

/// "tg.OP at file:line:col"; a tg.fused_elementwise adds the ops it
/// computes, "(one of: tg.sub at ...; tg.log at ...)", one of which is the
/// culprit when the group's result is wrong.
std::string describeOp(mlir::Operation *op);

} // namespace tgc

#endif // TGC_IR_TGLOCATIONS_H
