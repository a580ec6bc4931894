//===- Norm.cpp - decoder axes of softmax and the norms ------------------===//
//
// A normalization (softmax, LayerNorm, RMSNorm, the fused residual norms)
// runs one position at a time unless it normalizes over the positions; its
// parameters (gamma, beta) are read whole.
//
//===----------------------------------------------------------------------===//
#include "passes/decoder/AxisRequest.h"

#include <algorithm>

using namespace mlir;

namespace tgc {
namespace {

/// The first kRows operands (the rows normalized: an input, or a residual
/// and a sublayer) and every result keep the axis; the parameters (gamma,
/// beta) and a dropout key have none.
template <typename NormOp, unsigned kRows>
FailureOr<OpAxes> normAxes(const AxisRequest &r, NormOp op) {
  if (!r.notLast())
    return r.unsupported("it normalizes over positions");
  OpAxes a = r.all(r.axis);
  a.operands.assign(op->getNumOperands(), kNoAxis);
  std::fill_n(a.operands.begin(), kRows, r.axis);
  return a;
}

FailureOr<OpAxes> softmaxAxes(const AxisRequest &r, tg::SoftmaxOp op) {
  if (static_cast<int64_t>(op.getAxis()) == r.axis)
    return r.unsupported("it normalizes over positions");
  return r.all(r.axis);
}

} // namespace

void attachNormAxes(MLIRContext &context) {
  // Target ops only (recomputed, if at all, whole).
  tg::SoftmaxOp::attachInterface<
      DecoderAxesModel<tg::SoftmaxOp, softmaxAxes, nullptr>>(context);
  tg::LayerNormOp::attachInterface<DecoderAxesModel<
      tg::LayerNormOp, normAxes<tg::LayerNormOp, 1>, nullptr>>(context);
  tg::RmsNormOp::attachInterface<
      DecoderAxesModel<tg::RmsNormOp, normAxes<tg::RmsNormOp, 1>, nullptr>>(
      context);
  tg::ResidualLayerNormOp::attachInterface<
      DecoderAxesModel<tg::ResidualLayerNormOp,
                       normAxes<tg::ResidualLayerNormOp, 2>, nullptr>>(context);
}

} // namespace tgc
