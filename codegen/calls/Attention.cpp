//===- Attention.cpp - attention and its gradient as kernel calls ---------===//
//
// Both share the setup of kernels::AttentionShape and AttentionConfig
// (attentionSetup): the shape, the mask, the score bias (and its gradient),
// causality, scale and dropout.
//
//===----------------------------------------------------------------------===//
#include "codegen/calls/KernelArgs.h"
#include "codegen/calls/KernelCallModels.h"

#include "ir/TgOps.h"

#include <type_traits>

using namespace mlir;

namespace tgc::cpp {

namespace {

template <typename AttentionLike>
std::string attentionSetup(KernelArgs &p, AttentionLike op) {
  auto q = shapeOf(op.getQuery()), k = shapeOf(op.getKeyIn()),
       v = shapeOf(op.getValue());
  bool sequenceMajor = op.getSequenceMajor();
  int heads = sequenceMajor ? 2 : 1, positions = sequenceMajor ? 1 : 2;
  std::string s = "  const kernels::AttentionShape shape{" +
                  std::to_string(q[0]) + ", " + std::to_string(q[heads]) +
                  ", " + std::to_string(q[positions]) + ", " +
                  std::to_string(k[positions]) + ", " + std::to_string(q[3]) +
                  ", " + std::to_string(v[3]) +
                  (sequenceMajor ? ", /*sequenceMajor=*/true" : "") + "};\n";
  s += "  kernels::AttentionConfig config;\n";
  if (op.getMask())
    s += "  config.mask = " + p(op.getMask()) + ";\n";
  if (Value bias = op.getBias()) {
    // [B or 1, H or 1, Sq, Sk]: stride 0 along a broadcast dimension.
    auto shape = shapeOf(bias);
    int64_t headStride = shape[2] * shape[3];
    s += "  config.bias = " + p(bias) + ";\n";
    s += "  config.biasBatchStride = " +
         std::to_string(shape[0] == 1 ? 0 : shape[1] * headStride) + ";\n";
    s += "  config.biasHeadStride = " +
         std::to_string(shape[1] == 1 ? 0 : headStride) + ";\n";
  }
  if constexpr (std::is_same_v<AttentionLike, tg::AttentionGradOp>)
    if (op.getBiasGrad())
      s += "  config.biasGrad = " + p(op.getBiasGrad()) + ";\n";
  s += "  config.causal = " + b(op.getCausal()) + ";\n";
  if constexpr (std::is_same_v<AttentionLike, tg::AttentionOp>)
    if (op.getPosition())
      s += "  config.causalOffset = " + p.position(op.getPosition()) + ";\n";
  s += "  config.scale = " + floatLiteral(op.getScale().convertToFloat()) +
       ";\n";
  if (op.getBf16Products())
    s += "  config.bf16Products = true;\n";
  s += "  config.dropout = " +
       dropout(p, op.getRngKey(), op.getDropoutRate(), op.getDropoutValue(),
               op.getOpId(), op,
               q[0] * q[1] * q[2] * k[positions]) +
       ";\n";
  return s;
}

FailureOr<std::string> emitAttention(KernelArgs &p, EmitContext &context,
                                     tg::AttentionOp o) {
  return std::string(attentionSetup(p, o) + "  kernels::attention(" +
                     p(o.getQuery()) + ", " + p(o.getKeyIn()) + ", " +
                     p(o.getValue()) + ", " + p(o.getOutput()) + ", " +
                     p(o.getLse()) + ", shape, config);\n");
}

FailureOr<std::string> emitAttentionGrad(KernelArgs &p, EmitContext &context,
                                         tg::AttentionGradOp o) {
  return std::string(attentionSetup(p, o) + "  kernels::attentionGrad(" +
                     p(o.getGrad()) + ", " + p(o.getQuery()) + ", " +
                     p(o.getKeyIn()) + ", " + p(o.getValue()) + ", " +
                     p(o.getOutput()) + ", " + p(o.getLse()) + ", " +
                     p(o.getQueryGrad()) + ", " + p(o.getKeyGrad()) + ", " +
                     p(o.getValueGrad()) + ", shape, config);\n");
}

} // namespace

void attachAttentionCalls(MLIRContext &context) {
  tg::AttentionOp::attachInterface<
      KernelCallModel<tg::AttentionOp, emitAttention>>(context);
  tg::AttentionGradOp::attachInterface<
      KernelCallModel<tg::AttentionGradOp, emitAttentionGrad>>(context);
}

} // namespace tgc::cpp
