//===- Loss.cpp - cross-entropy and the output loss as kernel calls -------===//
//
// The losses read the gradient seed of the loss on the host (a constant),
// so they pass it by value, and so is a run-time label smoothing (a host
// input of the step on both targets).
//
//===----------------------------------------------------------------------===//
#include "codegen/calls/KernelArgs.h"
#include "codegen/calls/KernelCallModels.h"

#include "ir/TgOps.h"

using namespace mlir;

namespace tgc::cpp {

namespace {

/// The smoothing a loss op passes: its run-time input, else the literal.
template <typename LossLike>
std::string smoothingOf(KernelArgs &p, LossLike o) {
  if (Value value = o.getSmoothingValue())
    return "*" + p(value);
  return floatLiteral(o.getSmoothing().convertToFloat());
}

FailureOr<std::string> emitCrossEntropy(KernelArgs &p, EmitContext &context,
                                        tg::CrossEntropyOp o) {
  return std::string("  kernels::crossEntropy(" + p(o.getLogits()) + ", " +
                     p(o.getTargets()) + ", " + p(o.getLoss()) + ", " +
                     p(o.getTokens()) + ", " + rowsWidth(o.getLogits()) + ", " +
                     smoothingOf(p, o) + ", " +
                     std::to_string(o.getIgnoreIndexAttr().getInt()) + ");\n");
}

FailureOr<std::string> emitCrossEntropyGrad(KernelArgs &p, EmitContext &context,
                                            tg::CrossEntropyGradOp o) {
  auto lossGrad = context.hostPointer(o.getLossGrad());
  if (failed(lossGrad))
    return failure();
  return std::string("  kernels::crossEntropyGrad(*" + *lossGrad + ", " +
                     p(o.getLogits()) + ", " + p(o.getTargets()) + ", " +
                     p(o.getResult()) + ", " + rowsWidth(o.getLogits()) + ", " +
                     smoothingOf(p, o) + ", " +
                     std::to_string(o.getIgnoreIndexAttr().getInt()) + ");\n");
}

FailureOr<std::string> emitOutputLoss(KernelArgs &p, EmitContext &context,
                                      tg::OutputLossOp o) {
  auto lossGrad = context.hostPointer(o.getLossGrad());
  if (failed(lossGrad))
    return failure();
  auto weight =
      llvm::cast<RankedTensorType>(o.getWeight().getType()).getShape();
  return std::string(
      "  kernels::outputLoss(" + p(o.getHidden()) + ", " + p(o.getWeight()) +
      ", " + p(o.getTargets()) + ", *" + *lossGrad + ", " + p(o.getLoss()) +
      ", " + p(o.getTokens()) + ", " + p(o.getHiddenGrad()) + ", " +
      p(o.getWeightGrad()) + ", " + p(o.getWorkspace()) + ", " +
      std::to_string(numElements(o.getTargets())) + ", " +
      std::to_string(weight[1]) + ", " + std::to_string(weight[0]) + ", " +
      std::to_string(o.getChunkRows()) + ", " +
      smoothingOf(p, o) + ", " +
      std::to_string(o.getIgnoreIndexAttr().getInt()) + ");\n");
}

} // namespace

void attachLossCalls(MLIRContext &context) {
  tg::CrossEntropyOp::attachInterface<
      KernelCallModel<tg::CrossEntropyOp, emitCrossEntropy>>(context);
  tg::CrossEntropyGradOp::attachInterface<
      KernelCallModel<tg::CrossEntropyGradOp, emitCrossEntropyGrad>>(context);
  tg::OutputLossOp::attachInterface<
      KernelCallModel<tg::OutputLossOp, emitOutputLoss>>(context);
}

} // namespace tgc::cpp
