//===- State.cpp - decoder axes of constants -----------------------------===//
//
// A splat constant that reaches the target is rebuilt with one position;
// an f32 one whose elements differ along the time axis (an iota table of
// positions) is built whole and its row at the step's position gathered,
// and so is an f32 variable indexed by the positions (a table of learned
// positions as long as the context: GPT-2's wpe); other constants and
// loads are only recomputed whole.
//
//===----------------------------------------------------------------------===//
#include "passes/decoder/AxisRequest.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace tgc {
namespace {

/// `whole`'s row at the step's position along the request's axis.
Value rowAtPosition(const PositionRequest &r, Value whole, Location loc) {
  Value index = r.b.create<tg::ReshapeOp>(
      loc, RankedTensorType::get({1}, r.b.getI32Type()), r.position);
  return r.b.create<tg::GatherOp>(loc, onePosition(r.value, r.axis), whole,
                                  index, r.b.getI64IntegerAttr(r.axis));
}

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
  return PositionRecipe{{}, rowAtPosition(r, whole, loc)};
}

FailureOr<PositionRecipe> loadPosition(const PositionRequest &r,
                                       tg::LoadOp load) {
  auto type = llvm::cast<RankedTensorType>(load.getResult().getType());
  if (!type.getElementType().isF32())
    return r.cannot("only f32 tables are gathered at one position");
  Value whole = r.b.clone(*load)->getResult(0);
  return PositionRecipe{{}, rowAtPosition(r, whole, load.getLoc())};
}

} // namespace

void attachStateAxes(MLIRContext &context) {
  // Recomputed only: built directly for the one position.
  tg::ConstantOp::attachInterface<
      DecoderAxesModel<tg::ConstantOp, nullptr, constantPosition>>(context);
  tg::LoadOp::attachInterface<
      DecoderAxesModel<tg::LoadOp, nullptr, loadPosition>>(context);
}

} // namespace tgc
