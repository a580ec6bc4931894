//===- Loss.cpp - decoder axes of cross_entropy --------------------------===//
//
// The loss is differentiable but never in @predict, which ends at the
// logits: its model only says why it cannot run one position at a time.
//
//===----------------------------------------------------------------------===//
#include "passes/decoder/AxisRequest.h"

using namespace mlir;

namespace tgc {
namespace {

constexpr const char *kLossCrossEntropyReason =
    "the loss reads every position's target, and @predict ends at the "
    "logits";

FailureOr<OpAxes> crossEntropyAxes(const AxisRequest &r, tg::CrossEntropyOp) {
  return r.unsupported(kLossCrossEntropyReason);
}

FailureOr<PositionRecipe> crossEntropyPosition(const PositionRequest &r,
                                               tg::CrossEntropyOp) {
  return r.cannot(kLossCrossEntropyReason);
}

} // namespace

void attachLossAxes(MLIRContext &context) {
  tg::CrossEntropyOp::attachInterface<DecoderAxesModel<
      tg::CrossEntropyOp, crossEntropyAxes, crossEntropyPosition>>(context);
}

} // namespace tgc
