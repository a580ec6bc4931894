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

constexpr char kLossCrossEntropyReason[] =
    "the loss reads every position's target, and @predict ends at the "
    "logits";

} // namespace

void attachLossAxes(MLIRContext &context) {
  tg::CrossEntropyOp::attachInterface<
      NoDecoderAxes<tg::CrossEntropyOp, kLossCrossEntropyReason>>(context);
}

} // namespace tgc
