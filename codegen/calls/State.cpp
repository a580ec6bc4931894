//===- State.cpp - stores into the state as kernel calls ------------------===//
//
// tg.store and tg.store_slice write a variable in the state buffer (or a
// decoding cache): its address comes from the emit context.
//
//===----------------------------------------------------------------------===//
#include "codegen/calls/KernelArgs.h"
#include "codegen/calls/KernelCallModels.h"

#include "ir/TgOps.h"

#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace tgc::cpp {

namespace {

FailureOr<std::string> emitStore(KernelArgs &p, EmitContext &context,
                                 tg::StoreOp o) {
  return std::string(
      context.target().copy(context.variableAddress(o.getVariable()),
                            p(o.getValue()), numElements(o.getValue()) * 4) +
      "\n");
}

FailureOr<std::string> emitStoreSlice(KernelArgs &p, EmitContext &context,
                                      tg::StoreSliceOp o) {
  auto shape = shapeOf(o.getValue());
  int64_t axis = o.getAxis();
  auto variable = SymbolTable::lookupNearestSymbolFrom<tg::VariableOp>(
      o, o.getVariableAttr());
  int64_t extent = variable.getTensorType().getShape()[axis];
  return std::string(
      "  kernels::storeSlice(" + context.variableAddress(o.getVariable()) +
      ", " + p(o.getValue()) + ", " +
      std::to_string(product(shape.take_front(axis))) + ", " +
      std::to_string(shape[axis]) + ", " + std::to_string(extent) + ", " +
      std::to_string(product(shape.drop_front(axis + 1))) + ", " +
      p.position(o.getIndex()) + ");\n");
}

} // namespace

void attachStateCalls(MLIRContext &context) {
  tg::StoreOp::attachInterface<KernelCallModel<tg::StoreOp, emitStore>>(
      context);
  tg::StoreSliceOp::attachInterface<
      KernelCallModel<tg::StoreSliceOp, emitStoreSlice>>(context);
}

} // namespace tgc::cpp
