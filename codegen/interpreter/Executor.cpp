//===- Executor.cpp - the op dispatch of the reference interpreter ------===//
#include "codegen/interpreter/Executor.h"
#include "ir/TgInterfaces.h"

#include "runtime/kernels/KernelTypes.h"

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
  if (tensor.getElementType().isBF16())
    return ElementType::BF16;
  return std::nullopt;
}

void roundToFloat(HostTensor &tensor) {
  if (tensor.type != ElementType::F32)
    return;
  for (double &x : tensor.data)
    x = static_cast<float>(x);
}

void roundToBf16(HostTensor &tensor) {
  for (double &x : tensor.data)
    x = runtime::widen(runtime::roundToBf16(static_cast<float>(x)));
}

void Executor::bind(Value value, HostTensor tensor) {
  tensor.type = elementTypeOf(value.getType()).value_or(tensor.type);
  // A bf16 value is rounded in either precision: that rounding is the op's
  // meaning (tg.to_bf16), not an artifact of the f32 arithmetic modelled.
  if (tensor.type == ElementType::BF16)
    roundToBf16(tensor);
  else if (precision == Precision::F32)
    roundToFloat(tensor);
  values[value] = std::move(tensor);
}

LogicalResult Executor::execute(Operation *op) {
  // The models are attached by registerReferenceModels
  // (interpreter/ops/ReferenceModels.h).
  auto reference = llvm::dyn_cast<tg::ReferenceOpInterface>(op);
  if (!reference)
    return op->emitOpError()
           << "is not supported by the reference interpreter";
  return reference.executeReference(*this);
}

} // namespace tgc::interp
