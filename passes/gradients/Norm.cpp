//===- Norm.cpp - gradients of the normalizations -------------------------===//
//
// Softmax and the norms differentiate through their own backward ops
// (tg.softmax_grad, tg.layer_norm_grad, tg.rms_norm_grad,
// tg.residual_layer_norm_grad), one kernel each instead of many small ops.
//
//===----------------------------------------------------------------------===//
#include "passes/gradients/GradientModel.h"

#include "ir/TgOps.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace tgc::gradients {
namespace {

LogicalResult softmaxRule(GradientBuilder &r, tg::SoftmaxOp softmax) {
  r.set(0, r.make<tg::SoftmaxGradOp>(softmax.getResult(), r.dy(),
                                     softmax.getAxisAttr()));
  return success();
}

LogicalResult layerNormRule(GradientBuilder &r, tg::LayerNormOp norm) {
  Type gammaType = norm.getGamma().getType();
  auto grad = r.b.create<tg::LayerNormGradOp>(
      r.loc, norm.getInput().getType(), gammaType, gammaType, r.dy(),
      norm.getInput(), norm.getGamma(), norm.getEpsilonAttr());
  r.set(0, grad.getInputGrad());
  r.set(1, grad.getGammaGrad());
  r.set(2, grad.getBetaGrad());
  return success();
}

LogicalResult rmsNormRule(GradientBuilder &r, tg::RmsNormOp norm) {
  auto grad = r.b.create<tg::RmsNormGradOp>(
      r.loc, norm.getInput().getType(), norm.getGamma().getType(), r.dy(),
      norm.getInput(), norm.getGamma(), norm.getEpsilonAttr());
  r.set(0, grad.getInputGrad());
  r.set(1, grad.getGammaGrad());
  return success();
}

LogicalResult residualLayerNormRule(GradientBuilder &r,
                                    tg::ResidualLayerNormOp norm) {
  // Besides the result, only a kept sum carries a gradient: the saved
  // statistics have none.
  SmallVector<unsigned> differentiable{0};
  Value sumGrad;
  if (Value sum = norm.getSum()) {
    unsigned index = cast<OpResult>(sum).getResultNumber();
    differentiable.push_back(index);
    sumGrad = r.dy(index);
  }
  if (failed(r.onlyThrough(differentiable)))
    return failure();
  auto rows = cast<RankedTensorType>(norm.getResult().getType());
  Type columns = norm.getGamma().getType();
  // Where only the sum reaches the loss, the norm's part of h's gradient
  // is that of a zero result gradient.
  Value dy = r.dy() ? r.dy()
                    : r.make<tg::ConstantOp>(DenseElementsAttr::get(rows, 0.0f));
  bool layer = norm.getKind() == tg::NormKind::layer;
  auto grad = r.b.create<tg::ResidualLayerNormGradOp>(
      r.loc, rows, rows, columns, layer ? columns : Type(),
      /*sublayer_grad_rounded=*/Type(), dy, norm.getResult(), norm.getGamma(),
      norm.getBeta(), norm.getRstd(), norm.getKey(), sumGrad,
      norm.getRateValue(), norm.getKindAttr(), norm.getRateAttr(), norm.getOpIdAttr(),
      norm.getEpsilonAttr());
  r.set(0, grad.getResidualGrad());
  r.set(1, grad.getSublayerGrad());
  r.set(2, grad.getGammaGrad());
  if (layer) // beta, a LayerNorm's operand 3
    r.set(3, grad.getBetaGrad());
  return success();
}

} // namespace

void attachNormGradients(MLIRContext *context) {
  attachGradientRule<tg::SoftmaxOp, softmaxRule>(context);
  attachGradientRule<tg::LayerNormOp, layerNormRule>(context);
  attachGradientRule<tg::RmsNormOp, rmsNormRule>(context);
  attachGradientRule<tg::ResidualLayerNormOp, residualLayerNormRule>(context);
}

} // namespace tgc::gradients
