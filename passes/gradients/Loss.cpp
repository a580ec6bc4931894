//===- Loss.cpp - the gradient of the loss --------------------------------===//
//
// tg.cross_entropy differentiates through its fused backward,
// tg.cross_entropy_grad, at the same (compiled or run-time) smoothing; tg.output_loss, built after autodiff, holds its
// gradients itself (NoGradient.cpp).
//
//===----------------------------------------------------------------------===//
#include "passes/gradients/GradientModel.h"

#include "ir/TgOps.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace tgc::gradients {
namespace {

LogicalResult crossEntropyRule(GradientBuilder &r, tg::CrossEntropyOp loss) {
  r.set(0, r.make<tg::CrossEntropyGradOp>(
               r.dy(), loss.getLogits(), loss.getTargets(),
               loss.getSmoothingValue(), loss.getSmoothingAttr(), loss.getIgnoreIndexAttr()));
  return success();
}

} // namespace

void attachLossGradients(MLIRContext *context) {
  attachGradientRule<tg::CrossEntropyOp, crossEntropyRule>(context);
}

} // namespace tgc::gradients
