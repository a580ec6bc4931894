//===- Gradients.h - the backward of each tg op -----------------*- C++ -*-===//
//
// One rule per differentiable op: given the gradients reaching its results,
// emit the ops that compute the gradients of its operands. tg-autodiff
// (Autodiff.cpp) walks the forward ops in reverse and asks each op through
// tg::GradientOpInterface, whose models each op family attaches (one file per
// family in this folder); an op without a rule says why
// (getNoGradientReason), so tests can check coverage without building ops.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_PASSES_GRADIENTS_GRADIENTS_H
#define TGC_PASSES_GRADIENTS_GRADIENTS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir {
class DialectRegistry;
} // namespace mlir

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

/// Attaches every tg op's tg::GradientOpInterface model when the tg dialect
/// is loaded: without it, every op lacks a gradient rule.
void registerGradientModels(mlir::DialectRegistry &registry);

} // namespace tgc

#endif // TGC_PASSES_GRADIENTS_GRADIENTS_H
