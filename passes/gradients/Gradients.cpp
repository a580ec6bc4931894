//===- Gradients.cpp - the backward of each tg op -------------------------===//
//
// What tg-autodiff calls: the checks every rule relies on, then the op's own
// tg::GradientOpInterface model (attached per family by
// registerGradientModels), so that adding an op's rule touches only its
// family's file.
//
//===----------------------------------------------------------------------===//
#include "passes/gradients/Gradients.h"

#include "passes/gradients/GradientBuilder.h"
#include "passes/gradients/GradientModel.h"

#include "ir/TgOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;

namespace tgc {

FailureOr<SmallVector<Value>>
buildOperandGradients(OpBuilder &b, const GradientRequest &request) {
  Operation *op = request.op;
  auto gradient = llvm::dyn_cast<tg::GradientOpInterface>(op);
  if (!gradient)
    return op->emitError() << "no gradient rule for '" << op->getName()
                           << "', which lies on a path from a trainable "
                              "variable to the loss";
  // An op without a rule fails here, before the empty-tensor check, as it
  // always has; its model's error gives the reason.
  if (!gradient.getNoGradientReason()) {
    // The rules divide by dimension sizes (rows of a shared matmul weight,
    // the count of a mean): the verifier refuses empty tensors, and this
    // keeps unverified IR from dividing by zero.
    for (TypeRange types :
         {TypeRange(op->getOperandTypes()), TypeRange(op->getResultTypes())})
      for (Type type : types)
        if (auto tensor = llvm::dyn_cast<RankedTensorType>(type);
            tensor && llvm::is_contained(tensor.getShape(), 0))
          return op->emitError() << "cannot differentiate '" << op->getName()
                                 << "': it has an empty tensor, " << type;
  }
  GradientBuilder builder(b, request);
  if (failed(gradient.buildGradients(builder)))
    return failure();
  return builder.grads;
}

void registerGradientModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, tg::TGDialect *) {
    gradients::attachElementwiseGradients(context);
    gradients::attachGemmGradients(context);
    gradients::attachTensorGradients(context);
    gradients::attachNormGradients(context);
    gradients::attachAttentionGradients(context);
    gradients::attachLossGradients(context);
    gradients::attachNoGradients(context);
  });
}

} // namespace tgc
