//===- Norm.cpp - decoder axes of softmax and the layer norms ------------===//
//
// A normalization runs one position at a time unless it normalizes over the
// positions; its parameters (gamma, beta) are read whole.
//
//===----------------------------------------------------------------------===//
#include "passes/decoder/AxisRequest.h"

using namespace mlir;

namespace tgc {
namespace {

FailureOr<OpAxes> layerNormAxes(const AxisRequest &r, tg::LayerNormOp) {
  if (!r.notLast())
    return r.unsupported("it normalizes over positions");
  return OpAxes{{r.axis, kNoAxis, kNoAxis}, {r.axis}};
}

FailureOr<OpAxes> residualLayerNormAxes(const AxisRequest &r,
                                        tg::ResidualLayerNormOp op) {
  if (!r.notLast())
    return r.unsupported("it normalizes over positions");
  OpAxes a = r.all(r.axis);
  a.operands.assign(op->getNumOperands(), kNoAxis);
  a.operands[0] = a.operands[1] = r.axis; // residual, sublayer
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
  tg::LayerNormOp::attachInterface<
      DecoderAxesModel<tg::LayerNormOp, layerNormAxes, nullptr>>(context);
  tg::ResidualLayerNormOp::attachInterface<DecoderAxesModel<
      tg::ResidualLayerNormOp, residualLayerNormAxes, nullptr>>(context);
}

} // namespace tgc
