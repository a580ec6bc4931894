//===- DecoderAxes.cpp - positions through each op -----------------------===//
//
// Asks the op's DecoderAxesOpInterface model; elementwise ops, which have
// none, keep the axis where it is. The models are attached by dialect
// extension so that every context with the tg dialect has them.
//
//===----------------------------------------------------------------------===//
#include "passes/decoder/DecoderAxes.h"

#include "passes/decoder/AxisRequest.h"

#include "ir/TgDialect.h"
#include "ir/TgOps.h"

#include "mlir/IR/DialectRegistry.h"

using namespace mlir;

namespace tgc {

RankedTensorType onePosition(Value value, int64_t axis) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  if (axis == kNoAxis)
    return type;
  auto shape = llvm::to_vector(type.getShape());
  shape[axis] = 1;
  return type.clone(shape);
}

ArrayRef<int64_t> shapeOf(Value value) {
  return llvm::cast<RankedTensorType>(value.getType()).getShape();
}

FailureOr<OpAxes> timeAxes(Operation *op, int64_t axis,
                           function_ref<bool(Value)> isTarget) {
  AxisRequest request{op, axis, isTarget};
  if (auto model = llvm::dyn_cast<tg::DecoderAxesOpInterface>(op))
    return model.getTimeAxes(request);
  if (op->hasTrait<OpTrait::Elementwise>())
    return sameAxes(request, op);
  return request.unsupported("no rule for this op");
}

FailureOr<PositionRecipe> recomputePosition(OpBuilder &b, Value value,
                                            int64_t axis, Value position) {
  Operation *op = value.getDefiningOp();
  PositionRequest request{b, value, op, axis, position};
  if (auto model = llvm::dyn_cast<tg::DecoderAxesOpInterface>(op))
    return model.recomputePosition(request);
  if (op->hasTrait<OpTrait::Elementwise>())
    return samePosition(request, op);
  return request.cannot();
}

void registerDecoderAxisModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, tg::TGDialect *) {
    attachTensorAxes(*context);
    attachGemmAxes(*context);
    attachNormAxes(*context);
    attachAttentionAxes(*context);
    attachStateAxes(*context);
    attachLossAxes(*context);
  });
}

} // namespace tgc
