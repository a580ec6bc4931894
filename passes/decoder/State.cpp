//===- State.cpp - decoder axes of constants -----------------------------===//
//
// A splat constant that reaches the target is rebuilt with one position;
// an f32 one whose elements differ along the time axis (an iota table of
// positions) is built whole and its row at the step's position gathered;
// other constants, and loads (which have no model), are only recomputed
// whole.
//
//===----------------------------------------------------------------------===//
#include "passes/decoder/AxisRequest.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace tgc {
namespace {

FailureOr<PositionRecipe> constantPosition(const PositionRequest &r,
                                           tg::ConstantOp constant) {
  auto type = onePosition(r.value, r.axis);
  Location loc = constant.getLoc();
  if (auto dense = llvm::dyn_cast<SplatElementsAttr>(constant.getValue())) {
    Value splat = r.b.create<tg::ConstantOp>(
        loc, type, DenseElementsAttr::get(type, dense.getSplatValue<Attribute>()));
    return PositionRecipe{{}, splat};
  }
  if (!constant.getType().getElementType().isF32())
    return r.cannot("only f32 tables are gathered at one position");
  Value whole =
      r.b.create<tg::ConstantOp>(loc, constant.getType(), constant.getValue());
  Value index = r.b.create<tg::ReshapeOp>(
      loc, RankedTensorType::get({1}, r.b.getI32Type()), r.position);
  Value row = r.b.create<tg::GatherOp>(loc, type, whole, index,
                                       r.b.getI64IntegerAttr(r.axis));
  return PositionRecipe{{}, row};
}

} // namespace

void attachStateAxes(MLIRContext &context) {
  // Recomputed only: built directly for the one position.
  tg::ConstantOp::attachInterface<
      DecoderAxesModel<tg::ConstantOp, nullptr, constantPosition>>(context);
}

} // namespace tgc
