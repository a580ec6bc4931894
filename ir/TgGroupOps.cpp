//===- TgGroupOps.cpp - verifiers of the post-autodiff fused ops --------===//
#include "ir/TgOps.h"
#include "ir/TgVerify.h"

using namespace mlir;

namespace tgc::tg {

bool isElementwiseFusible(Operation *op) {
  return op->hasTrait<traits::ElementwiseLoop>() && op->getNumRegions() == 0;
}

bool writesNoCode(Operation *op) {
  return op->hasTrait<traits::ResultIsView>() ||
         op->hasTrait<traits::ResultOutsideArena>();
}

Value viewSource(Value value) {
  while (Operation *view = value.getDefiningOp()) {
    if (!view->hasTrait<traits::ResultIsView>())
      break;
    value = view->getOperand(0);
  }
  return value;
}

bool isDropoutRateInput(BlockArgument arg) {
  auto type = llvm::dyn_cast<RankedTensorType>(arg.getType());
  if (!type || type.getRank() != 0 || !type.getElementType().isF32() ||
      arg.use_empty())
    return false;
  return llvm::all_of(arg.getUses(), [](OpOperand &use) {
    if (auto drop = llvm::dyn_cast<DropoutOp>(use.getOwner()))
      return drop.getRateValue() == use.get() &&
             use.getOperandNumber() == 2;
    if (auto drop = llvm::dyn_cast<DropoutGradOp>(use.getOwner()))
      return drop.getRateValue() == use.get() &&
             use.getOperandNumber() == 2;
    return false;
  });
}

YieldOp FusedElementwiseOp::getYield() {
  return llvm::cast<YieldOp>(getBody().front().getTerminator());
}

LogicalResult FusedElementwiseOp::verify() {
  if (getResults().empty())
    return emitOpError() << "must have at least one result";
  // verify() runs before the region's own checks: the terminator may be
  // missing or of another kind.
  if (getBody().empty() || getBody().front().empty() ||
      !llvm::isa<YieldOp>(getBody().front().back()))
    return emitOpError() << "body must end in tg.yield";
  // Values of the group's shape are f32, or bf16 (tg-mixed-precision's
  // copies read by the loop, and copies it writes: tg.to_bf16 in the body).
  RankedTensorType group = getGroupType();
  auto ofGroupShape = [&](Type type) {
    auto tensor = llvm::dyn_cast<RankedTensorType>(type);
    return tensor && tensor.getShape() == group.getShape() &&
           (tensor.getElementType().isF32() || tensor.getElementType().isBF16());
  };
  for (Type type : getResultTypes())
    if (!ofGroupShape(type))
      return emitOpError() << "results must all have the group's shape "
                           << formatShape(group.getShape())
                           << " with f32 or bf16 elements but one is " << type;
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "body has " << body.getNumArguments()
                         << " arguments for " << getInputs().size()
                         << " inputs";
  for (auto [i, input, arg] :
       llvm::enumerate(getInputs(), body.getArguments())) {
    if (input.getType() != arg.getType())
      return emitOpError() << "body argument #" << i << " has type "
                           << arg.getType() << " but input #" << i
                           << " has type " << input.getType();
    auto inputType = llvm::cast<RankedTensorType>(input.getType());
    bool isKey = inputType.getElementType().isInteger(32) &&
                 inputType.getShape() == llvm::ArrayRef<int64_t>{2};
    // A dropout's run-time rate: an f32 scalar the body reads only as that.
    bool isRate = isDropoutRateInput(arg);
    if (!ofGroupShape(input.getType()) && !isKey && !isRate)
      return emitOpError() << "input #" << i << " must have the group's shape "
                           << formatShape(group.getShape())
                           << " with f32 or bf16 elements (or be a "
                              "tensor<2xi32> dropout key, or a tensor<f32> "
                              "read only as dropouts' run-time rate) but has "
                              "type "
                           << input.getType();
  }
  for (Operation &op : body.without_terminator()) {
    bool rounding = llvm::isa<ToBf16Op>(op);
    if (!rounding && !isElementwiseFusible(&op))
      return op.emitOpError()
             << "cannot be part of a tg.fused_elementwise body: only "
                "elementwise tg ops, tg.dropout, tg.dropout_grad and "
                "tg.to_bf16 can";
    for (Type type : op.getResultTypes()) {
      auto tensor = llvm::cast<RankedTensorType>(type);
      if (tensor.getShape() != group.getShape() ||
          !(rounding ? tensor.getElementType().isBF16()
                     : tensor.getElementType().isF32()))
        return op.emitOpError() << "result has type " << type
                                << " but the group's shape is "
                                << formatShape(group.getShape());
    }
  }
  if (getYield().getValues().getTypes() != getResultTypes())
    return emitOpError() << "tg.yield must yield one value per result, of "
                            "the results' types";
  return success();
}

LogicalResult LinearOp::verify() {
  if (failed(expectSameElementType(*this, "input", getInput(), "weight",
                                   getWeight())) ||
      failed(expectGemmResultType(*this, getInput(), getResult())))
    return failure();
  auto input = shapeOf(getInput()), weight = shapeOf(getWeight());
  if (input.size() < 2)
    return emitOpError() << "input must have rank >= 2 but has shape "
                         << formatShape(input);
  if (failed(expectRank(*this, "weight", getWeight(), 2)))
    return failure();
  if (input.back() != weight[0])
    return emitOpError() << "input's last dimension " << input.back()
                         << " must equal weight's rows " << weight[0]
                         << " (input " << formatShape(input) << ", weight "
                         << formatShape(weight) << ")";
  if (failed(expectShape(*this, "bias", getBias(), {weight[1]})))
    return failure();
  // A bf16 bias is tg-mixed-precision's, for a bf16 GEMM whose only reader
  // is the result's bf16 copy (so no kept pre-activation either).
  bool bf16Bias = getBias().getType().getElementType().isBF16();
  if (bf16Bias && !getInput().getType().getElementType().isBF16())
    return emitOpError() << "a bf16 bias needs bf16 operands but input is "
                         << getInput().getType();
  if (bf16Bias && getPreActivation())
    return emitOpError()
           << "a bf16 bias is for a linear without a pre_activation result";
  SmallVector<int64_t> expected(input.begin(), input.end());
  expected.back() = weight[1];
  if (failed(expectShape(*this, "result", getResult(), expected)))
    return failure();
  Value pre = getPreActivation();
  if (!pre)
    return success();
  // Without an activation the result is already x W + b.
  if (getActivation() == Activation::none)
    return emitOpError() << "pre_activation result needs an activation";
  if (failed(expectGemmResultType(*this, getInput(), pre)))
    return failure();
  return expectShape(*this, "pre_activation", pre, expected);
}

} // namespace tgc::tg
