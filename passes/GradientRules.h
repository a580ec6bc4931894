//===- GradientRules.h - the backward of each tg op --------------*- C++ -*-===//
//
// One rule per differentiable op: given the gradients reaching its results,
// emit the ops that compute the gradients of its operands. tg-autodiff
// (Autodiff.cpp) walks the forward ops in reverse and calls these.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_PASSES_GRADIENTRULES_H
#define TGC_PASSES_GRADIENTRULES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/SmallVector.h"

namespace tgc {

/// What a rule is asked: the gradient of each result of `op` (null where none
/// reaches it) and which operands need a gradient.
struct GradientRequest {
  mlir::Operation *op;
  llvm::ArrayRef<mlir::Value> resultGrads;
  llvm::SmallBitVector wanted;
};

/// Emits, at `b`'s insertion point and `op`'s location, the gradients of the
/// wanted operands; the others are null. Fails with a diagnostic at the op
/// when it has no rule, or when a gradient reaches a result the rule cannot
/// differentiate through (e.g. an attention's log-sum-exp).
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
buildOperandGradients(mlir::OpBuilder &b, const GradientRequest &request);

} // namespace tgc

#endif // TGC_PASSES_GRADIENTRULES_H
