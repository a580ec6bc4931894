//===- Norm.cpp - the interpreter's softmax and norm ops ------------------===//
//
// Softmax, LayerNorm, RMSNorm and the fused residual norm (with its
// dropout), forward and backward, each a call of its reference kernel; the
// ops with several results bind each of them.
//
//===----------------------------------------------------------------------===//
#include "codegen/interpreter/ops/OpSupport.h"

using namespace mlir;

namespace tgc::interp {
namespace {

LogicalResult softmax(Executor &x, tg::SoftmaxOp o) {
  x.bind(o.getResult(), ref::softmax(x.get(o.getInput()), o.getAxis()));
  return success();
}

LogicalResult softmaxGrad(Executor &x, tg::SoftmaxGradOp o) {
  x.bind(o.getResult(), ref::softmaxGrad(x.get(o.getOutput()),
                                         x.get(o.getGrad()), o.getAxis()));
  return success();
}

LogicalResult layerNorm(Executor &x, tg::LayerNormOp o) {
  x.bind(o.getResult(),
         ref::layerNorm(x.get(o.getInput()), x.get(o.getGamma()),
                        x.get(o.getBeta()), f32Attr(o.getEpsilon())));
  return success();
}

LogicalResult layerNormGrad(Executor &x, tg::LayerNormGradOp o) {
  ref::NormGrads g =
      ref::layerNormGrad(x.get(o.getGrad()), x.get(o.getInput()),
                         x.get(o.getGamma()), f32Attr(o.getEpsilon()));
  x.bind(o.getInputGrad(), std::move(g.input));
  x.bind(o.getGammaGrad(), std::move(g.gamma));
  x.bind(o.getBetaGrad(), std::move(g.beta));
  return success();
}

LogicalResult rmsNorm(Executor &x, tg::RmsNormOp o) {
  x.bind(o.getResult(), ref::rmsNorm(x.get(o.getInput()), x.get(o.getGamma()),
                                     f32Attr(o.getEpsilon())));
  return success();
}

LogicalResult rmsNormGrad(Executor &x, tg::RmsNormGradOp o) {
  ref::NormGrads g =
      ref::rmsNormGrad(x.get(o.getGrad()), x.get(o.getInput()),
                       x.get(o.getGamma()), f32Attr(o.getEpsilon()));
  x.bind(o.getInputGrad(), std::move(g.input));
  x.bind(o.getGammaGrad(), std::move(g.gamma));
  return success();
}

/// The value bound to `value`, or null where the op lacks that operand.
const HostTensor *boundOrNull(Executor &x, Value value) {
  return value ? &x.get(value) : nullptr;
}

LogicalResult residualLayerNorm(Executor &x, tg::ResidualLayerNormOp o) {
  ref::ResidualNormResult r = ref::residualNorm(
      x.get(o.getResidual()), x.get(o.getSublayer()), x.get(o.getGamma()),
      boundOrNull(x, o.getBeta()),
      dropoutOf(x.get(o.getKey()),
                givenRate(x, o.getRate(), o.getRateValue()), o.getOpId()),
      f32Attr(o.getEpsilon()));
  x.bind(o.getResult(), std::move(r.result));
  if (Value mean = o.getMean())
    x.bind(mean, std::move(r.mean));
  x.bind(o.getRstd(), std::move(r.rstd));
  if (Value sum = o.getSum())
    x.bind(sum, std::move(r.sum));
  if (Value rounded = o.getRounded()) // binding to bf16 rounds
    x.bind(rounded, x.get(o.getResult()));
  return success();
}

LogicalResult residualLayerNormGrad(Executor &x,
                                    tg::ResidualLayerNormGradOp o) {
  ref::ResidualNormGrads g = ref::residualNormGrad(
      x.get(o.getGrad()), x.get(o.getResult()), x.get(o.getGamma()),
      boundOrNull(x, o.getBeta()), x.get(o.getRstd()),
      dropoutOf(x.get(o.getKey()),
                givenRate(x, o.getRate(), o.getRateValue()), o.getOpId()),
      boundOrNull(x, o.getSumGrad()));
  x.bind(o.getResidualGrad(), std::move(g.residual));
  x.bind(o.getSublayerGrad(), std::move(g.sublayer));
  x.bind(o.getGammaGrad(), std::move(g.gamma));
  if (Value betaGrad = o.getBetaGrad())
    x.bind(betaGrad, std::move(g.beta));
  if (Value rounded = o.getSublayerGradRounded()) // binding to bf16 rounds
    x.bind(rounded, x.get(o.getSublayerGrad()));
  return success();
}

} // namespace

void attachNormReference(MLIRContext *context) {
  tg::SoftmaxOp::attachInterface<ReferenceModel<tg::SoftmaxOp, softmax>>(
      *context);
  tg::SoftmaxGradOp::attachInterface<
      ReferenceModel<tg::SoftmaxGradOp, softmaxGrad>>(*context);
  tg::LayerNormOp::attachInterface<ReferenceModel<tg::LayerNormOp, layerNorm>>(
      *context);
  tg::LayerNormGradOp::attachInterface<
      ReferenceModel<tg::LayerNormGradOp, layerNormGrad>>(*context);
  tg::RmsNormOp::attachInterface<ReferenceModel<tg::RmsNormOp, rmsNorm>>(
      *context);
  tg::RmsNormGradOp::attachInterface<
      ReferenceModel<tg::RmsNormGradOp, rmsNormGrad>>(*context);
  tg::ResidualLayerNormOp::attachInterface<
      ReferenceModel<tg::ResidualLayerNormOp, residualLayerNorm>>(*context);
  tg::ResidualLayerNormGradOp::attachInterface<
      ReferenceModel<tg::ResidualLayerNormGradOp, residualLayerNormGrad>>(
      *context);
}

} // namespace tgc::interp
