//===- GradientRules.h - the backward of each tg op --------------*- C++ -*-===//
//
// One rule per differentiable op: given the gradients reaching its results,
// emit the ops that compute the gradients of its operands. tg-autodiff
// (Autodiff.cpp) walks the forward ops in reverse and calls these. Every tg
// op either has a rule or is marked non-differentiable with a reason; both
// are asked by TypeID, so tests can check coverage without building ops.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_PASSES_GRADIENTRULES_H
#define TGC_PASSES_GRADIENTRULES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/TypeID.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

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

/// Whether buildOperandGradients has a rule for the op class `op` (e.g.
/// `mlir::TypeID::get<tg::MatmulOp>()`, or an op's `getName().getTypeID()`).
bool hasGradientRule(mlir::TypeID op);

/// Why the op class `op` deliberately has no gradient rule (e.g. it only
/// exists after autodiff, or tg-autodiff never asks for it); nullopt when it
/// has a rule or is not a tg op. Every tg op is in exactly one of the two.
std::optional<llvm::StringRef> nonDifferentiableReason(mlir::TypeID op);

} // namespace tgc

#endif // TGC_PASSES_GRADIENTRULES_H
