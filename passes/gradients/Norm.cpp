//===- Norm.cpp - gradients of the normalizations -------------------------===//
//
// Softmax and the layer norms differentiate through their own backward ops
// (tg.softmax_grad, tg.layer_norm_grad, tg.residual_layer_norm_grad), one
// kernel each instead of many small ops.
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

LogicalResult residualLayerNormRule(GradientBuilder &r,
                                    tg::ResidualLayerNormOp norm) {
  if (failed(r.onlyThrough({0})))
    return failure();
  Type rows = norm.getResult().getType(), columns = norm.getGamma().getType();
  auto grad = r.b.create<tg::ResidualLayerNormGradOp>(
      r.loc, rows, rows, columns, columns, /*sublayer_grad_rounded=*/Type(),
      r.dy(), norm.getResult(), norm.getGamma(), norm.getBeta(), norm.getRstd(),
      norm.getKey(), norm.getRateAttr(), norm.getOpIdAttr(),
      norm.getEpsilonAttr());
  r.set(0, grad.getResidualGrad());
  r.set(1, grad.getSublayerGrad());
  r.set(2, grad.getGammaGrad());
  r.set(3, grad.getBetaGrad());
  return success();
}

} // namespace

void attachNormGradients(MLIRContext *context) {
  attachGradientRule<tg::SoftmaxOp, softmaxRule>(context);
  attachGradientRule<tg::LayerNormOp, layerNormRule>(context);
  attachGradientRule<tg::ResidualLayerNormOp, residualLayerNormRule>(context);
}

} // namespace tgc::gradients
