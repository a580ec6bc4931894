//===- State.cpp - decoder axes of constants -----------------------------===//
//
// A splat constant that reaches the target is rebuilt with one position;
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
  auto dense = llvm::dyn_cast<SplatElementsAttr>(constant.getValue());
  if (!dense)
    return r.cannot();
  auto type = onePosition(r.value, r.axis);
  Value splat = r.b.create<tg::ConstantOp>(
      constant.getLoc(), type,
      DenseElementsAttr::get(type, dense.getSplatValue<Attribute>()));
  return PositionRecipe{{}, splat};
}

} // namespace

void attachStateAxes(MLIRContext &context) {
  // Recomputed only: built directly for the one position.
  tg::ConstantOp::attachInterface<
      DecoderAxesModel<tg::ConstantOp, nullptr, constantPosition>>(context);
}

} // namespace tgc
