//===- Loss.cpp - the interpreter's loss ops ------------------------------===//
//
// Cross-entropy forward and backward, and tg.output_loss computed unfused on
// the whole batch (the oracle of its chunked kernels). Targets are checked
// here: the verifier cannot see them.
//
//===----------------------------------------------------------------------===//
#include "codegen/interpreter/ops/OpSupport.h"

using namespace mlir;

namespace tgc::interp {
namespace {

/// A loss op's smoothing: its run-time input, else its attribute.
template <typename LossLike>
double givenSmoothing(Executor &x, LossLike o) {
  if (Value value = o.getSmoothingValue())
    return static_cast<double>(static_cast<float>(x.get(value)[0]));
  return f32Attr(o.getSmoothing());
}

template <typename LossLike>
LogicalResult checkTargets(Executor &x, LossLike o) {
  return checkIds(o, x.get(o.getTargets()), x.get(o.getLogits()).shape.back(),
                  "target", o.getIgnoreIndexAttr().getInt());
}

LogicalResult crossEntropy(Executor &x, tg::CrossEntropyOp o) {
  if (failed(checkTargets(x, o)))
    return failure();
  ref::CrossEntropyResult r = ref::crossEntropy(
      x.get(o.getLogits()), x.get(o.getTargets()), givenSmoothing(x, o),
      o.getIgnoreIndexAttr().getInt());
  x.bind(o.getLoss(), std::move(r.loss));
  x.bind(o.getTokens(), std::move(r.tokens));
  return success();
}

LogicalResult crossEntropyGrad(Executor &x, tg::CrossEntropyGradOp o) {
  if (failed(checkTargets(x, o)))
    return failure();
  x.bind(o.getResult(),
         ref::crossEntropyGrad(x.get(o.getLossGrad())[0], x.get(o.getLogits()),
                               x.get(o.getTargets()), givenSmoothing(x, o),
                               o.getIgnoreIndexAttr().getInt()));
  return success();
}

/// The ops tg-fuse-output-loss replaced, on the whole batch at once: the
/// oracle of the chunked kernels. The workspace is left zero.
LogicalResult outputLoss(Executor &x, tg::OutputLossOp o) {
  const HostTensor &hidden = x.get(o.getHidden()), &weight = x.get(o.getWeight());
  const HostTensor &targets = x.get(o.getTargets());
  int64_t ignore = o.getIgnoreIndexAttr().getInt();
  if (failed(checkIds(o, targets, weight.shape[0], "target", ignore)))
    return failure();
  double smoothing = givenSmoothing(x, o);
  HostTensor logits = ref::matmul(hidden, weight, false, true);
  ref::CrossEntropyResult r =
      ref::crossEntropy(logits, targets, smoothing, ignore);
  HostTensor grad = ref::crossEntropyGrad(x.get(o.getLossGrad())[0], logits,
                                          targets, smoothing, ignore);
  // bf16 operands: the kernels round the logit gradient (computed in f32)
  // to bf16 before the two gradient GEMMs.
  if (hidden.type == ElementType::BF16) {
    roundToFloat(grad);
    roundToBf16(grad);
  }
  HostTensor hiddenGrad = ref::matmul(grad, weight, false, false);
  int64_t rows = targets.numElements();
  HostTensor flatGrad = grad, flatHidden = hidden;
  flatGrad.shape = {rows, weight.shape[0]};
  flatHidden.shape = {rows, weight.shape[1]};
  x.bind(o.getLoss(), std::move(r.loss));
  x.bind(o.getTokens(), std::move(r.tokens));
  x.bind(o.getHiddenGrad(), std::move(hiddenGrad));
  x.bind(o.getWeightGrad(), ref::matmul(flatGrad, flatHidden, true, false));
  x.bind(o.getWorkspace(), HostTensor(shapeOf(o.getWorkspace())));
  return success();
}

} // namespace

void attachLossReference(MLIRContext *context) {
  tg::CrossEntropyOp::attachInterface<
      ReferenceModel<tg::CrossEntropyOp, crossEntropy>>(*context);
  tg::CrossEntropyGradOp::attachInterface<
      ReferenceModel<tg::CrossEntropyGradOp, crossEntropyGrad>>(*context);
  tg::OutputLossOp::attachInterface<
      ReferenceModel<tg::OutputLossOp, outputLoss>>(*context);
}

} // namespace tgc::interp
