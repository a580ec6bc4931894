//===- DecoderAxes.h - positions through each op ----------------*- C++ -*-===//
//
// tg-derive-decoder (DeriveDecoder.cpp) runs @predict one target position at
// a time. A value's "time axis" is its dimension that indexes target
// positions. Each op's DecoderAxesOpInterface model (one file per op family
// in this directory) says how the axis passes through it, in either or both
// directions:
//
//   timeAxes           an op that reads the target: from the time axis of
//                      its first target operand to those of all its operands
//                      and results;
//   recomputePosition  an op that depends on neither input (positional
//                      encodings, constants, shape ops over them), which
//                      @decode_step recomputes for one position: from the
//                      time axis of its result back to its operands'.
//
// Ops with the `Elementwise` trait keep the axis everywhere, model or not.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_PASSES_DECODER_DECODERAXES_H
#define TGC_PASSES_DECODER_DECODERAXES_H

#include "ir/TimeAxes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace tgc {

/// The static shape of a ranked tensor value.
llvm::ArrayRef<int64_t> shapeOf(mlir::Value value);

/// The time axes of `op`, a target op whose first operand that depends on
/// the target has time axis `axis`; `isTarget` says whether a value depends
/// on the target ids. Fails with a diagnostic at `op` when it cannot run one
/// target position at a time, or has no rule.
mlir::FailureOr<OpAxes>
timeAxes(mlir::Operation *op, int64_t axis,
         llvm::function_ref<bool(mlir::Value)> isTarget);

/// The recipe for the position of `value`, an op's result, along its
/// dimension `axis` (not kNoAxis). `position` is @decode_step's position
/// argument; what the rule builds goes at `b`'s insertion point. Fails with
/// a diagnostic at the op when that position cannot be recomputed alone.
mlir::FailureOr<PositionRecipe> recomputePosition(mlir::OpBuilder &b,
                                                  mlir::Value value,
                                                  int64_t axis,
                                                  mlir::Value position);

/// `value`'s type with length 1 at `axis` (unchanged without one).
mlir::RankedTensorType onePosition(mlir::Value value, int64_t axis);

/// Attaches every family's DecoderAxesOpInterface models to the tg dialect
/// when it loads; without them only elementwise ops have rules.
void registerDecoderAxisModels(mlir::DialectRegistry &registry);

} // namespace tgc

#endif // TGC_PASSES_DECODER_DECODERAXES_H
