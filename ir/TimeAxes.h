//===- TimeAxes.h - what DecoderAxesOpInterface answers ----------*- C++ -*-===//
//
// tg-derive-decoder runs @predict one target position at a time. A value's
// "time axis" is its dimension that indexes target positions; these are the
// answers of each op's DecoderAxesOpInterface (passes/decoder/ has the
// models and the requests they are asked with).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_IR_TIMEAXES_H
#define TGC_IR_TIMEAXES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <functional>

namespace tgc {

/// No time axis: a value without positions, or an operand read whole.
constexpr int64_t kNoAxis = -1;

/// The time axes of an op's operands and results; `takePosition`, for an op
/// that must know which target position it runs at (a rotary embedding),
/// gives its clone in @decode_step that step's position.
struct OpAxes {
  llvm::SmallVector<int64_t> operands, results;
  std::function<void(mlir::Operation *clone, mlir::Value position)>
      takePosition = nullptr;
};

/// How @decode_step recomputes one position of a value that depends on
/// neither input: either `built`, emitted by the rule; or, with
/// `fromOperands`, what it builds from the operands recomputed at
/// `operandAxes` (a slice along the positions: a gather at the position);
/// or the op cloned over those operands (kNoAxis: the whole operand).
struct PositionRecipe {
  llvm::SmallVector<int64_t> operandAxes;
  mlir::Value built;
  std::function<mlir::Value(mlir::OpBuilder &, mlir::ValueRange)> fromOperands =
      nullptr;
};

struct AxisRequest;
struct PositionRequest;

} // namespace tgc

#endif // TGC_IR_TIMEAXES_H
