//===- GradientModel.h - how an op family attaches its rules ----*- C++ -*-===//
//
// The two tg::GradientOpInterface models every tg op gets one of: a rule
// function, or the reason it has none. Each family file (Elementwise.cpp,
// Gemm.cpp, ...) defines its rules and attaches them to its ops; Gradients.cpp
// calls every family's attach function when the tg dialect is loaded.
//
// Notation: y = op(x...), dy = dL/dy, dx = dL/dx. Rules emit tg ops only, so
// the backward is as inspectable, fusable and executable as the forward.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_PASSES_GRADIENTS_GRADIENTMODEL_H
#define TGC_PASSES_GRADIENTS_GRADIENTMODEL_H

#include "passes/gradients/GradientBuilder.h"

#include "ir/TgOps.h"

#include "mlir/IR/MLIRContext.h"

#include <optional>

namespace tgc::gradients {

/// An op whose backward is the function `Rule`.
template <typename OpT, mlir::LogicalResult (*Rule)(GradientBuilder &, OpT)>
struct GradientRule
    : tg::GradientOpInterface::ExternalModel<GradientRule<OpT, Rule>, OpT> {
  mlir::LogicalResult buildGradients(mlir::Operation *op,
                                     GradientBuilder &builder) const {
    return Rule(builder, llvm::cast<OpT>(op));
  }
  static std::optional<llvm::StringRef> getNoGradientReason() {
    return std::nullopt;
  }
};

/// An op that deliberately has no backward, for `Reason`. Asking it anyway
/// is an error at the op that names both the op and the reason.
template <typename OpT, const char *Reason>
struct NoGradient
    : tg::GradientOpInterface::ExternalModel<NoGradient<OpT, Reason>, OpT> {
  mlir::LogicalResult buildGradients(mlir::Operation *op,
                                     GradientBuilder &) const {
    // The prefix is what tg-autodiff said before ops gave a reason
    // (test/lit/passes/tg-autodiff-errors.mlir matches it).
    return op->emitError() << "no gradient rule for '" << op->getName()
                           << "', which lies on a path from a trainable "
                              "variable to the loss: "
                           << Reason;
  }
  static std::optional<llvm::StringRef> getNoGradientReason() {
    return llvm::StringRef(Reason);
  }
};

/// The rule of an op with the BlocksGradient trait (tg.stop_gradient, the
/// comparisons): tg-autodiff holds its result fixed, so its operands get
/// nothing.
template <typename OpT>
mlir::LogicalResult blockedGradient(GradientBuilder &, OpT) {
  return mlir::success();
}

/// Attaches `Rule` as the backward of OpT.
template <typename OpT, mlir::LogicalResult (*Rule)(GradientBuilder &, OpT)>
void attachGradientRule(mlir::MLIRContext *context) {
  OpT::template attachInterface<GradientRule<OpT, Rule>>(*context);
}

/// Marks OpT as having no backward, for `Reason` (a string with static
/// storage, as a template argument must be).
template <typename OpT, const char *Reason>
void attachNoGradient(mlir::MLIRContext *context) {
  OpT::template attachInterface<NoGradient<OpT, Reason>>(*context);
}

// Each family's rules, attached to its ops (one file each).
void attachElementwiseGradients(mlir::MLIRContext *context);
void attachGemmGradients(mlir::MLIRContext *context);
void attachTensorGradients(mlir::MLIRContext *context);
void attachNormGradients(mlir::MLIRContext *context);
void attachAttentionGradients(mlir::MLIRContext *context);
void attachLossGradients(mlir::MLIRContext *context);
/// The ops without a rule, each with the reason it has none.
void attachNoGradients(mlir::MLIRContext *context);

} // namespace tgc::gradients

#endif // TGC_PASSES_GRADIENTS_GRADIENTMODEL_H
