//===- State.cpp - the interpreter's variables and constants -------------===//
//
// tg.load, tg.store and tg.store_slice read and write the interpreter's
// variables (the state kept across runs); tg.constant reads its dense
// attribute. Store-slice checks its index here: the verifier cannot see it.
//
//===----------------------------------------------------------------------===//
#include "codegen/interpreter/ops/OpSupport.h"

using namespace mlir;

namespace tgc::interp {
namespace {

LogicalResult load(Executor &x, tg::LoadOp o) {
  x.bind(o.getResult(), x.variable(o.getVariable()));
  return success();
}

LogicalResult store(Executor &x, tg::StoreOp o) {
  x.variable(o.getVariable()) = x.get(o.getValue());
  return success();
}

LogicalResult storeSlice(Executor &x, tg::StoreSliceOp o) {
  HostTensor &target = x.variable(o.getVariable());
  const HostTensor &value = x.get(o.getValue());
  int64_t axis = o.getAxis(), index = scalarOf(x.get(o.getIndex()));
  int64_t length = value.shape[axis], extent = target.shape[axis];
  if (index < 0 || index + length > extent)
    return o.emitOpError() << "index " << index << " puts a slice of " << length
                           << " outside the " << extent << " positions of @"
                           << o.getVariable();
  ref::storeSlice(target, value, axis, index);
  return success();
}

LogicalResult constant(Executor &x, tg::ConstantOp o) {
  auto dense = llvm::dyn_cast<DenseElementsAttr>(o.getValue());
  if (!dense)
    return o.emitOpError() << "holds a non-dense constant, which the "
                              "reference interpreter does not read";
  HostTensor t(shapeOf(o.getResult()));
  int64_t i = 0;
  if (dense.getElementType().isF32())
    for (const llvm::APFloat &v : dense.getValues<llvm::APFloat>())
      t[i++] = v.convertToFloat();
  else
    for (const llvm::APInt &v : dense.getValues<llvm::APInt>())
      t[i++] = static_cast<double>(v.getSExtValue());
  x.bind(o.getResult(), std::move(t));
  return success();
}

} // namespace

void attachStateReference(MLIRContext *context) {
  tg::LoadOp::attachInterface<ReferenceModel<tg::LoadOp, load>>(*context);
  tg::StoreOp::attachInterface<ReferenceModel<tg::StoreOp, store>>(*context);
  tg::StoreSliceOp::attachInterface<
      ReferenceModel<tg::StoreSliceOp, storeSlice>>(*context);
  tg::ConstantOp::attachInterface<ReferenceModel<tg::ConstantOp, constant>>(
      *context);
}

} // namespace tgc::interp
