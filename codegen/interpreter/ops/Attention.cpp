//===- Attention.cpp - the interpreter's attention ops --------------------===//
//
// tg.attention and tg.attention_grad call the reference attention, which
// works head-major: sequence-major operands are swapped into that layout and
// the results back. Both ops read their mask, scale and dropout the same way
// (attentionConfig). A score bias is head-major in both layouts.
//
//===----------------------------------------------------------------------===//
#include "codegen/interpreter/ops/OpSupport.h"

#include <type_traits>

using namespace mlir;

namespace tgc::interp {
namespace {

/// Shared by tg.attention and tg.attention_grad.
template <typename AttentionLike>
ref::AttentionConfig attentionConfig(Executor &x, AttentionLike o) {
  ref::AttentionConfig config;
  if (o.getMask())
    config.mask = &x.get(o.getMask());
  if (o.getBias())
    config.bias = &x.get(o.getBias());
  config.causal = o.getCausal();
  if constexpr (std::is_same_v<AttentionLike, tg::AttentionOp>)
    if (o.getPosition())
      config.causalOffset = scalarOf(x.get(o.getPosition()));
  config.scale = f32Attr(o.getScale());
  config.bf16Products = o.getBf16Products();
  config.floatMaskedScores = x.getPrecision() == Precision::F32;
  if (o.getRngKey())
    config.dropout =
        dropoutOf(x.get(o.getRngKey()),
                  givenRate(x, o.getDropoutRate(), o.getDropoutValue()),
                  o.getOpId());
  return config;
}

/// A sequence-major operand or result ([B, S, H, D], lse [B, S, H]) in the
/// reference kernels' head-major layout, or back (the swap of dimensions 1
/// and 2 is its own inverse); head-major values pass as they are.
HostTensor swapHeads(const HostTensor &t, bool sequenceMajor) {
  if (!sequenceMajor)
    return t;
  static constexpr int64_t kRank4[] = {0, 2, 1, 3}, kRank3[] = {0, 2, 1};
  return t.shape.size() == 4 ? ref::transpose(t, kRank4)
                             : ref::transpose(t, kRank3);
}

LogicalResult attention(Executor &x, tg::AttentionOp o) {
  bool swap = o.getSequenceMajor();
  ref::AttentionResult r = ref::attention(
      swapHeads(x.get(o.getQuery()), swap), swapHeads(x.get(o.getKeyIn()), swap),
      swapHeads(x.get(o.getValue()), swap), attentionConfig(x, o));
  x.bind(o.getOutput(), swapHeads(r.output, swap));
  x.bind(o.getLse(), swapHeads(r.lse, swap));
  return success();
}

LogicalResult attentionGrad(Executor &x, tg::AttentionGradOp o) {
  bool swap = o.getSequenceMajor();
  ref::AttentionConfig config = attentionConfig(x, o);
  config.biasGrad = static_cast<bool>(o.getBiasGrad());
  ref::AttentionGrads g = ref::attentionGrad(
      swapHeads(x.get(o.getGrad()), swap), swapHeads(x.get(o.getQuery()), swap),
      swapHeads(x.get(o.getKeyIn()), swap), swapHeads(x.get(o.getValue()), swap),
      swapHeads(x.get(o.getLse()), swap), config);
  x.bind(o.getQueryGrad(), swapHeads(g.query, swap));
  x.bind(o.getKeyGrad(), swapHeads(g.key, swap));
  x.bind(o.getValueGrad(), swapHeads(g.value, swap));
  if (o.getBiasGrad()) // head-major in both layouts
    x.bind(o.getBiasGrad(), g.bias);
  return success();
}

} // namespace

void attachAttentionReference(MLIRContext *context) {
  tg::AttentionOp::attachInterface<ReferenceModel<tg::AttentionOp, attention>>(
      *context);
  tg::AttentionGradOp::attachInterface<
      ReferenceModel<tg::AttentionGradOp, attentionGrad>>(*context);
}

} // namespace tgc::interp
