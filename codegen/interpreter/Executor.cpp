//===- Executor.cpp - the op dispatch of the reference interpreter ------===//
#include "codegen/interpreter/Executor.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace tgc::interp {

std::optional<ElementType> elementTypeOf(Type type) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return std::nullopt;
  if (tensor.getElementType().isF32())
    return ElementType::F32;
  if (tensor.getElementType().isSignlessInteger(32))
    return ElementType::I32;
  return std::nullopt;
}

void roundToFloat(HostTensor &tensor) {
  if (tensor.type != ElementType::F32)
    return;
  for (double &x : tensor.data)
    x = static_cast<float>(x);
}

void Executor::bind(Value value, HostTensor tensor) {
  tensor.type = elementTypeOf(value.getType()).value_or(tensor.type);
  if (precision == Precision::F32)
    roundToFloat(tensor);
  values[value] = std::move(tensor);
}

LogicalResult Executor::execute(Operation *op) {
  const OpHandler *handler = opHandlers().lookup(op->getName().getTypeID());
  if (!handler)
    return op->emitOpError()
           << "is not supported by the reference interpreter";
  return (*handler)(*this, op);
}

} // namespace tgc::interp
