//===- TgVerify.cpp - helpers shared by the tg op verifiers -------------===//
#include "ir/TgVerify.h"
#include "ir/TgOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdint>

using namespace mlir;

namespace tgc::tg {

std::string formatShape(llvm::ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '[';
  llvm::interleaveComma(shape, os, [&](int64_t dim) {
    if (ShapedType::isDynamic(dim))
      os << '?';
    else
      os << dim;
  });
  os << ']';
  return text;
}

std::string formatNumber(double value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", value);
  return text;
}

llvm::ArrayRef<int64_t> shapeOf(Type type) {
  return llvm::cast<ShapedType>(type).getShape();
}

llvm::ArrayRef<int64_t> shapeOf(Value value) { return shapeOf(value.getType()); }

LogicalResult verifyTensorRules(Operation *op) {
  auto check = [&](Type type, llvm::StringRef kind,
                   unsigned index) -> LogicalResult {
    auto tensor = llvm::dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return success();
    if (!tensor.hasStaticShape())
      return op->emitOpError() << kind << " #" << index << " has type " << type
                               << ": tg tensors must have a static shape";
    if (std::string why = checkTensorSize(tensor.getShape()); !why.empty())
      return op->emitOpError() << kind << " #" << index << " has type " << type
                               << ": " << why;
    return success();
  };
  for (auto [index, type] : llvm::enumerate(op->getOperandTypes()))
    if (failed(check(type, "operand", index)))
      return failure();
  for (auto [index, type] : llvm::enumerate(op->getResultTypes()))
    if (failed(check(type, "result", index)))
      return failure();
  // Generated C++ spells these numbers as literals: inf or nan is no C++.
  for (NamedAttribute attr : op->getAttrs()) {
    if (auto number = llvm::dyn_cast<FloatAttr>(attr.getValue())) {
      if (!number.getValue().isFinite())
        return op->emitOpError()
               << attr.getName().getValue() << " must be finite but is "
               << formatNumber(number.getValueAsDouble());
    } else if (auto dense = llvm::dyn_cast<DenseFPElementsAttr>(attr.getValue())) {
      for (auto [index, value] : llvm::enumerate(dense.getValues<APFloat>())) {
        if (!value.isFinite())
          return op->emitOpError()
                 << "attribute '" << attr.getName().getValue()
                 << "' holds " << formatNumber(value.convertToDouble())
                 << " at element " << index << ": tg constants must be finite";
        if (dense.isSplat())
          break;
      }
    }
  }
  return success();
}

LogicalResult verifyTgFunctions(Operation *module) {
  LogicalResult result = success();
  module->walk([&](func::FuncOp function) {
    if (function.isExternal()) {
      function.emitError() << "function @" << function.getName()
                           << " is a declaration (it has no body): tgc "
                              "compiles, runs and writes function bodies";
      result = failure();
      return;
    }
    auto check = [&](Type type, llvm::StringRef kind, unsigned index) {
      auto tensor = llvm::dyn_cast<RankedTensorType>(type);
      Type element = tensor ? tensor.getElementType() : Type();
      std::string why =
          !tensor ? "tgc's functions take and return ranked tensors"
          : !(element.isF32() || element.isBF16() || element.isInteger(32))
              ? "tg tensors hold f32, bf16 or i32"
              : !tensor.hasStaticShape() ? "tg tensors must have a static shape"
                                         : checkTensorSize(tensor.getShape());
      if (why.empty())
        return;
      function.emitError() << kind << " #" << index << " of @"
                           << function.getName() << " has type " << type
                           << ": " << why;
      result = failure();
    };
    for (auto [index, type] : llvm::enumerate(function.getArgumentTypes()))
      check(type, "argument", index);
    for (auto [index, type] : llvm::enumerate(function.getResultTypes()))
      check(type, "result", index);
    if (failed(checkDropoutSites(function)))
      result = failure();
  });
  return result;
}

LogicalResult checkDropoutSites(func::FuncOp function) {
  // The sites that draw a mask (tg.dropout, tg.attention,
  // tg.residual_layer_norm with a rate); gradients redraw their forward's
  // mask by its op_id, so they share it by design.
  llvm::DenseMap<int64_t, Operation *> sites;
  LogicalResult result = success();
  function.walk([&](Operation *op) {
    auto id = op->getAttrOfType<IntegerAttr>("op_id");
    if (!id || op->getName().getStringRef().ends_with("_grad"))
      return;
    auto rate = op->getAttrOfType<FloatAttr>("rate");
    if (!rate)
      rate = op->getAttrOfType<FloatAttr>("dropout_rate");
    if (!rate || !(rate.getValueAsDouble() > 0.0))
      return;
    auto [first, added] = sites.try_emplace(id.getInt(), op);
    if (added || failed(result))
      return;
    InFlightDiagnostic error = op->emitOpError()
        << "draws its dropout mask with op_id " << id.getInt()
        << ", as another site of @" << function.getName()
        << " does: each dropout site needs its own op_id (two sites with one "
           "draw the same mask)";
    error.attachNote(first->second->getLoc()) << "the other site";
    result = failure();
  });
  return result;
}

std::string checkTensorSize(llvm::ArrayRef<int64_t> shape) {
  // An empty tensor has no element to compute on, and the passes divide by
  // dimension sizes (mean gradients, reshapes).
  if (llvm::any_of(shape, [](int64_t dim) { return dim < 1; }))
    return "every dimension of a tg tensor must be >= 1";
  if (shape.size() > static_cast<size_t>(kMaxTensorRank))
    return "a tg tensor has at most " + std::to_string(kMaxTensorRank) +
           " dimensions";
  int64_t elements = 1;
  for (int64_t dim : shape) {
    if (dim > kMaxTensorElements / elements)
      return "a tg tensor holds at most 2^40 elements";
    elements *= dim;
  }
  return "";
}

LogicalResult expectShape(Operation *op, llvm::StringRef what, Value value,
                          llvm::ArrayRef<int64_t> expected) {
  auto actual = shapeOf(value);
  if (actual == expected)
    return success();
  return op->emitOpError() << what << " must have shape "
                           << formatShape(expected) << " but has "
                           << formatShape(actual);
}

LogicalResult expectRank(Operation *op, llvm::StringRef what, Value value,
                         int64_t rank) {
  auto actual = shapeOf(value);
  if (static_cast<int64_t>(actual.size()) == rank)
    return success();
  return op->emitOpError() << what << " must have rank " << rank
                           << " but has shape " << formatShape(actual);
}

LogicalResult verifyRate(Operation *op, llvm::StringRef name, float rate) {
  if (rate >= 0.0f && rate < 1.0f)
    return success();
  return op->emitOpError() << name << " must be in [0, 1) but is " << formatNumber(rate);
}

LogicalResult verifyRunTimeRate(Operation *op, llvm::StringRef name,
                                float rate, Value runTime) {
  if (!runTime || rate > 0.0f)
    return success();
  return op->emitOpError() << "takes its " << name
                           << " at run time, so its compiled " << name
                           << " (the default) must be above 0, not "
                           << formatNumber(rate);
}

LogicalResult verifyOpId(Operation *op, int64_t opId) {
  if (opId < 0)
    return op->emitOpError() << "op_id must be >= 0 but is " << opId;
  // The generated code and the runtime's Philox counter hold it in 32 bits.
  if (opId > int64_t(UINT32_MAX))
    return op->emitOpError() << "op_id must fit in 32 bits (at most "
                             << UINT32_MAX << ") but is " << opId;
  return success();
}

LogicalResult verifyPositive(Operation *op, llvm::StringRef name, float value) {
  if (value > 0.0f && std::isfinite(value))
    return success();
  return op->emitOpError() << name << " must be positive and finite but is "
                           << formatNumber(value);
}

LogicalResult verifyDimList(Operation *op, llvm::StringRef name,
                            llvm::ArrayRef<int64_t> dims, int64_t rank) {
  if (dims.empty())
    return op->emitOpError() << name << " must not be empty";
  for (auto [index, dim] : llvm::enumerate(dims)) {
    if (dim < 0 || dim >= rank)
      return op->emitOpError()
             << name << " " << formatShape(dims) << " holds " << dim
             << ", outside [0, " << rank << ")";
    if (index > 0 && dim <= dims[index - 1])
      return op->emitOpError() << name << " " << formatShape(dims)
                               << " must be strictly increasing";
  }
  return success();
}

LogicalResult verifyAxis(Operation *op, int64_t axis, int64_t rank,
                         llvm::StringRef name) {
  if (axis >= 0 && axis < rank)
    return success();
  return op->emitOpError() << name << " " << axis << " is outside [0, "
                           << rank << ")";
}

LogicalResult verifyNormParam(Operation *op, llvm::StringRef name, Value param,
                              llvm::StringRef inputName, Value input) {
  auto inputShape = shapeOf(input);
  if (inputShape.empty())
    return op->emitOpError() << inputName << " must have rank >= 1";
  return expectShape(op, name, param, {inputShape.back()});
}

llvm::SmallVector<int64_t> dropLast(llvm::ArrayRef<int64_t> shape) {
  return llvm::SmallVector<int64_t>(shape.drop_back());
}

Type rowStatisticsType(Type type) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() == 0)
    return type; // The verifier reports the bad rank.
  return RankedTensorType::get(dropLast(tensor.getShape()),
                               tensor.getElementType());
}

static Type withElements(Type type, Type element) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return type; // The verifier reports the bad type.
  return RankedTensorType::get(tensor.getShape(), element);
}

Type withBf16Elements(Type type) {
  return withElements(type, BFloat16Type::get(type.getContext()));
}

Type withF32Elements(Type type) {
  return withElements(type, Float32Type::get(type.getContext()));
}

LogicalResult expectSameElementType(Operation *op, StringRef lhsName,
                                    Value lhs, StringRef rhsName, Value rhs) {
  Type a = llvm::cast<ShapedType>(lhs.getType()).getElementType();
  Type b = llvm::cast<ShapedType>(rhs.getType()).getElementType();
  if (a == b)
    return success();
  return op->emitOpError() << lhsName << " and " << rhsName
                           << " must have one element type (both f32 or "
                              "both bf16) but are "
                           << a << " and " << b;
}

LogicalResult expectGemmResultType(Operation *op, Value operand,
                                   Value result) {
  Type in = llvm::cast<ShapedType>(operand.getType()).getElementType();
  Type out = llvm::cast<ShapedType>(result.getType()).getElementType();
  if (out.isF32() || (out.isBF16() && in.isBF16()))
    return success();
  return op->emitOpError() << "result must be f32, or bf16 with bf16 "
                              "operands, but is "
                           << out << " with " << in << " operands";
}

} // namespace tgc::tg
