//===- Attention.cpp - the gradient of attention --------------------------===//
//
// tg.attention differentiates through tg.attention_grad, which recomputes
// the probabilities from the saved log-sum-exp; only the output has a
// gradient, and the mask must not depend on a trainable variable. A score
// bias that does (a learned relative-position bias) gets its gradient from
// the same op; a constant one (ALiBi) costs the backward nothing.
//
//===----------------------------------------------------------------------===//
#include "passes/gradients/GradientModel.h"

#include "ir/TgOps.h"

#include "mlir/IR/BuiltinTypes.h"

#include <optional>

using namespace mlir;

namespace tgc::gradients {
namespace {

LogicalResult attentionRule(GradientBuilder &r, tg::AttentionOp attention) {
  if (failed(r.onlyThrough({0})))
    return failure();
  auto operandNumber = [](MutableOperandRange optional) -> std::optional<unsigned> {
    if (optional.empty())
      return std::nullopt;
    return optional[0].getOperandNumber();
  };
  if (auto mask = operandNumber(attention.getMaskMutable()); mask && r.wants(*mask))
    return attention.emitError()
           << "cannot differentiate w.r.t. the attention mask: it must "
              "not depend on a trainable variable";
  // A decoder step's attention (queries at a cache position) is never
  // trained: tg.attention_grad recomputes causal scores from position 0.
  if (attention.getPosition())
    return attention.emitError()
           << "cannot differentiate an attention with a position (one step "
              "of an incremental decoder): train the whole sequence";
  std::optional<unsigned> bias = operandNumber(attention.getBiasMutable());
  Type biasGrad;
  if (bias && r.wants(*bias))
    biasGrad = attention.getBias().getType();
  auto grad = r.b.create<tg::AttentionGradOp>(
      r.loc, tg::withF32Elements(attention.getQuery().getType()),
      tg::withF32Elements(attention.getKeyIn().getType()),
      tg::withF32Elements(attention.getValue().getType()), biasGrad, r.dy(),
      attention.getQuery(), attention.getKeyIn(), attention.getValue(),
      attention.getOutput(), attention.getLse(), attention.getMask(),
      attention.getBias(), attention.getRngKey(), attention.getDropoutValue(),
      attention.getCausalAttr(),
      attention.getSequenceMajorAttr(), attention.getBf16ProductsAttr(),
      attention.getScaleAttr(), attention.getDropoutRateAttr(),
      attention.getOpIdAttr());
  r.set(0, grad.getQueryGrad());
  r.set(1, grad.getKeyGrad());
  r.set(2, grad.getValueGrad());
  if (biasGrad)
    r.set(*bias, grad.getBiasGrad());
  return success();
}

} // namespace

void attachAttentionGradients(MLIRContext *context) {
  attachGradientRule<tg::AttentionOp, attentionRule>(context);
}

} // namespace tgc::gradients
