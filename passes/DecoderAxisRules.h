//===- DecoderAxisRules.h - positions through each op -----------*- C++ -*-===//
//
// tg-derive-decoder (DeriveDecoder.cpp) runs @predict one target position at
// a time. A value's "time axis" is its dimension that indexes target
// positions. One entry per op kind, found by the op's TypeID, says how the
// axis passes through it, in either or both directions:
//
//   timeAxes           an op that reads the target: from the time axis of
//                      its first target operand to those of all its operands
//                      and results;
//   recomputePosition  an op that depends on neither input (positional
//                      encodings, constants, shape ops over them), which
//                      @decode_step recomputes for one position: from the
//                      time axis of its result back to its operands'.
//
// Ops with the `Elementwise` trait keep the axis everywhere, entry or not.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_PASSES_DECODERAXISRULES_H
#define TGC_PASSES_DECODERAXISRULES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/TypeID.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace tgc {

/// No time axis: a value without positions, or an operand read whole.
constexpr int64_t kNoAxis = -1;

/// The time axes of an op's operands and results.
struct OpAxes {
  llvm::SmallVector<int64_t> operands, results;
};

/// The static shape of a ranked tensor value.
llvm::ArrayRef<int64_t> shapeOf(mlir::Value value);

/// The time axes of `op`, a target op whose first operand that depends on
/// the target has time axis `axis`; `isTarget` says whether a value depends
/// on the target ids. Fails with a diagnostic at `op` when it cannot run one
/// target position at a time, or has no rule.
mlir::FailureOr<OpAxes>
timeAxes(mlir::Operation *op, int64_t axis,
         llvm::function_ref<bool(mlir::Value)> isTarget);

/// Whether timeAxes has an entry for the op class `op` (e.g.
/// `mlir::TypeID::get<tg::LinearOp>()`, or an op's `getName().getTypeID()`).
bool hasDecoderAxisRule(mlir::TypeID op);

/// How @decode_step recomputes one position of a value that depends on
/// neither input: either `built`, emitted by the rule, or the op cloned over
/// its operands recomputed at `operandAxes` (kNoAxis: the whole operand).
struct PositionRecipe {
  llvm::SmallVector<int64_t> operandAxes;
  mlir::Value built;
};

/// The recipe for the position of `value`, an op's result, along its
/// dimension `axis` (not kNoAxis). `position` is @decode_step's position
/// argument; what the rule builds goes at `b`'s insertion point. Fails with
/// a diagnostic at the op when that position cannot be recomputed alone.
mlir::FailureOr<PositionRecipe> recomputePosition(mlir::OpBuilder &b,
                                                  mlir::Value value,
                                                  int64_t axis,
                                                  mlir::Value position);

/// Whether recomputePosition has an entry for the op class `op`.
bool hasRecomputeRule(mlir::TypeID op);

/// `value`'s type with length 1 at `axis` (unchanged without one).
mlir::RankedTensorType onePosition(mlir::Value value, int64_t axis);

} // namespace tgc

#endif // TGC_PASSES_DECODERAXISRULES_H
