//===- Norm.cpp - softmax and the norms as kernel calls -------------------===//
//
// Ops normalized over the last dimension: rows x width as literals (a
// softmax over another axis reaches the emitters as one over the last,
// between transposes: tg-softmax-last-axis).
//
//===----------------------------------------------------------------------===//
#include "codegen/calls/KernelArgs.h"
#include "codegen/calls/KernelCallModels.h"

#include "ir/TgOps.h"

using namespace mlir;

namespace tgc::cpp {

namespace {

FailureOr<std::string> emitSoftmax(KernelArgs &p, EmitContext &context,
                                   tg::SoftmaxOp o) {
  if (static_cast<int64_t>(o.getAxis()) !=
      static_cast<int64_t>(shapeOf(o.getInput()).size()) - 1)
    return o.emitOpError() << "is over axis " << o.getAxis()
                           << "; the kernels normalize the last axis only (tg-softmax-last-axis, in the training pipeline, rewrites the others)";
  return std::string("  kernels::softmax(" + p(o.getInput()) + ", " +
                     p(o.getResult()) + ", " + rowsWidth(o.getInput()) +
                     ");\n");
}

FailureOr<std::string> emitSoftmaxGrad(KernelArgs &p, EmitContext &context,
                                       tg::SoftmaxGradOp o) {
  if (static_cast<int64_t>(o.getAxis()) !=
      static_cast<int64_t>(shapeOf(o.getOutput()).size()) - 1)
    return o.emitOpError() << "is over axis " << o.getAxis()
                           << "; the kernels normalize the last axis only (tg-softmax-last-axis, in the training pipeline, rewrites the others)";
  return std::string("  kernels::softmaxGrad(" + p(o.getOutput()) + ", " +
                     p(o.getGrad()) + ", " + p(o.getResult()) + ", " +
                     rowsWidth(o.getOutput()) + ");\n");
}

FailureOr<std::string> emitLayerNorm(KernelArgs &p, EmitContext &context,
                                     tg::LayerNormOp o) {
  return std::string("  kernels::layerNorm(" + p(o.getInput()) + ", " +
                     p(o.getGamma()) + ", " + p(o.getBeta()) + ", " +
                     p(o.getResult()) + ", nullptr, nullptr, " +
                     rowsWidth(o.getInput()) + ", " +
                     floatLiteral(o.getEpsilon().convertToFloat()) + ");\n");
}

FailureOr<std::string> emitLayerNormGrad(KernelArgs &p, EmitContext &context,
                                         tg::LayerNormGradOp o) {
  return std::string("  kernels::layerNormGrad(" + p(o.getGrad()) + ", " +
                     p(o.getInput()) + ", " + p(o.getGamma()) + ", " +
                     p(o.getInputGrad()) + ", " + p(o.getGammaGrad()) + ", " +
                     p(o.getBetaGrad()) + ", " + rowsWidth(o.getInput()) +
                     ", " + floatLiteral(o.getEpsilon().convertToFloat()) +
                     ");\n");
}

FailureOr<std::string> emitRmsNorm(KernelArgs &p, EmitContext &context,
                                   tg::RmsNormOp o) {
  return std::string("  kernels::rmsNorm(" + p(o.getInput()) + ", " +
                     p(o.getGamma()) + ", " + p(o.getResult()) + ", nullptr, " +
                     rowsWidth(o.getInput()) + ", " +
                     floatLiteral(o.getEpsilon().convertToFloat()) + ");\n");
}

FailureOr<std::string> emitRmsNormGrad(KernelArgs &p, EmitContext &context,
                                       tg::RmsNormGradOp o) {
  return std::string("  kernels::rmsNormGrad(" + p(o.getGrad()) + ", " +
                     p(o.getInput()) + ", " + p(o.getGamma()) + ", " +
                     p(o.getInputGrad()) + ", " + p(o.getGammaGrad()) + ", " +
                     rowsWidth(o.getInput()) + ", " +
                     floatLiteral(o.getEpsilon().convertToFloat()) + ");\n");
}

/// `kernels::residualLayerNorm<suffix>(` or `kernels::residualRmsNorm<suffix>(`
/// by the fused op's kind.
std::string residualKernel(tg::NormKind kind, const char *suffix) {
  return std::string("  kernels::residual") +
         (kind == tg::NormKind::layer ? "LayerNorm" : "RmsNorm") + suffix + "(";
}

/// `value, ` where the op has it: beta, the mean and beta's gradient are
/// arguments of the LayerNorm kernels only.
std::string layerNormOnly(KernelArgs &p, Value value) {
  return value ? p(value) + ", " : "";
}

FailureOr<std::string> emitResidualLayerNorm(KernelArgs &p,
                                             EmitContext &context,
                                             tg::ResidualLayerNormOp o) {
  return residualKernel(o.getKind(), "") + p(o.getResidual()) + ", " +
         p(o.getSublayer()) + ", " + p(o.getGamma()) + ", " +
         layerNormOnly(p, o.getBeta()) + p(o.getResult()) + ", " +
         layerNormOnly(p, o.getMean()) + p(o.getRstd()) + ", " +
         rowsWidth(o.getResidual()) + ", " +
         dropout(p, o.getKey(), o.getRate(), o.getRateValue(), o.getOpId(), o,
                 numElements(o.getResidual())) +
         ", " + floatLiteral(o.getEpsilon().convertToFloat()) + ", " +
         p(o.getRounded()) + ", " + p(o.getSum()) + ");\n";
}

FailureOr<std::string>
emitResidualLayerNormGrad(KernelArgs &p, EmitContext &context,
                          tg::ResidualLayerNormGradOp o) {
  return residualKernel(o.getKind(), "Grad") + p(o.getGrad()) + ", " +
         p(o.getResult()) + ", " + p(o.getGamma()) + ", " +
         layerNormOnly(p, o.getBeta()) + p(o.getRstd()) + ", " +
         p(o.getResidualGrad()) + ", " +
         (tg::isUnwrittenResult(o.getSublayerGrad()) ? "nullptr"
                                                     : p(o.getSublayerGrad())) +
         ", " + p(o.getGammaGrad()) + ", " + layerNormOnly(p, o.getBetaGrad()) +
         rowsWidth(o.getResult()) + ", " +
         dropout(p, o.getKey(), o.getRate(), o.getRateValue(), o.getOpId(), o,
                 numElements(o.getResult())) +
         ", " + p(o.getSublayerGradRounded()) + ", " + p(o.getSumGrad()) +
         ");\n";
}

} // namespace

void attachNormCalls(MLIRContext &context) {
  tg::SoftmaxOp::attachInterface<KernelCallModel<tg::SoftmaxOp, emitSoftmax>>(
      context);
  tg::SoftmaxGradOp::attachInterface<
      KernelCallModel<tg::SoftmaxGradOp, emitSoftmaxGrad>>(context);
  tg::LayerNormOp::attachInterface<
      KernelCallModel<tg::LayerNormOp, emitLayerNorm>>(context);
  tg::LayerNormGradOp::attachInterface<
      KernelCallModel<tg::LayerNormGradOp, emitLayerNormGrad>>(context);
  tg::RmsNormOp::attachInterface<KernelCallModel<tg::RmsNormOp, emitRmsNorm>>(
      context);
  tg::RmsNormGradOp::attachInterface<
      KernelCallModel<tg::RmsNormGradOp, emitRmsNormGrad>>(context);
  tg::ResidualLayerNormOp::attachInterface<
      KernelCallModel<tg::ResidualLayerNormOp, emitResidualLayerNorm>>(context);
  tg::ResidualLayerNormGradOp::attachInterface<
      KernelCallModel<tg::ResidualLayerNormGradOp, emitResidualLayerNormGrad>>(
      context);
}

} // namespace tgc::cpp
