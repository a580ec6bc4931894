//===- TgStateOps.cpp - variables, loads, stores, constants, Adam -------===//
#include "ir/TgOps.h"
#include "ir/TgVerify.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/ConvertUTF.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace tgc::tg {

LogicalResult VariableOp::verify() {
  // The name keys the variable's tensor in checkpoints (a protobuf string
  // field, which must be UTF-8) and in the program's table of C strings.
  StringRef name = getSymName();
  const auto *begin = reinterpret_cast<const llvm::UTF8 *>(name.data());
  if (!llvm::isLegalUTF8String(&begin, begin + name.size()))
    return emitOpError() << "name " << getSymNameAttr()
                         << " is not UTF-8: names key the tensors of "
                            "checkpoints, which hold UTF-8";
  if (name.contains('\0'))
    return emitOpError() << "name holds a NUL byte, which would end it in "
                            "the program's table of variables";
  auto tensor = llvm::dyn_cast<RankedTensorType>(getType());
  if (!tensor || !tensor.hasStaticShape())
    return emitOpError() << "type must be a statically shaped tensor but is "
                         << getType();
  if (std::string why = checkTensorSize(tensor.getShape()); !why.empty())
    return emitOpError() << "type " << getType() << ": " << why;
  Type element = tensor.getElementType();
  if (!element.isF32() && !element.isInteger(32))
    return emitOpError() << "element type must be f32 or i32 but is "
                         << element;

  InitKind init = getInit();
  bool takesScale = init == InitKind::normal || init == InitKind::uniform;
  if (takesScale && !getInitScale())
    return emitOpError() << "init " << stringifyInitKind(init)
                         << " needs a scale, e.g. init("
                         << stringifyInitKind(init) << ", 0.02)";
  if (!takesScale && getInitScale())
    return emitOpError() << "init " << stringifyInitKind(init)
                         << " takes no scale but has "
                         << formatNumber(getInitScale()->convertToDouble());
  if (takesScale && !(getInitScale()->convertToDouble() > 0.0 &&
                      std::isfinite(getInitScale()->convertToDouble())))
    return emitOpError() << "init scale must be positive and finite but is "
                         << formatNumber(getInitScale()->convertToDouble());
  // Samples reach a few times the scale: past this they would not be
  // finite f32 values (the first step read infinities).
  if (takesScale && getInitScale()->convertToDouble() >
                        std::numeric_limits<float>::max() / 16)
    return emitOpError() << "init scale " << formatNumber(getInitScale()->convertToDouble())
                         << " is too large for f32 parameters: its samples "
                            "would overflow to infinity";
  if (init == InitKind::xavier_uniform && tensor.getRank() < 2)
    return emitOpError() << "xavier_uniform needs rank >= 2 (fan-in, fan-out) "
                            "but the shape is "
                         << formatShape(tensor.getShape());
  if (!element.isF32() && init != InitKind::zeros && init != InitKind::ones)
    return emitOpError() << "an i32 variable can only be initialized with "
                            "zeros or ones, not "
                         << stringifyInitKind(init);
  if (getTrainable() && getCache())
    return emitOpError() << "a decoding cache cannot be trainable";
  // Only the optimizer reads it, and it updates trainable variables only.
  if (getWeightDecay() && !getTrainable())
    return emitOpError() << "weight_decay applies to trainable variables "
                            "only";
  if (getTrainable() && !element.isF32())
    return emitOpError() << "a trainable variable must be f32 but is "
                         << element;
  return success();
}

/// Finds the tg.variable `name` and checks that `type` is its type.
static LogicalResult verifyVariableUse(Operation *op,
                                       SymbolTableCollection &symbolTable,
                                       FlatSymbolRefAttr name, Type type,
                                       llvm::StringRef role) {
  Operation *symbol = symbolTable.lookupNearestSymbolFrom(op, name.getAttr());
  if (!symbol)
    return op->emitOpError() << role << " " << name << " is not defined";
  auto variable = llvm::dyn_cast<VariableOp>(symbol);
  if (!variable)
    return op->emitOpError() << role << " " << name << " names a '"
                             << symbol->getName() << "', not a tg.variable";
  if (variable.getType() != type)
    return op->emitOpError()
           << role << " " << name << " has type " << variable.getType()
           << " but the op uses it as " << type;
  return success();
}

LogicalResult LoadOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyVariableUse(*this, symbolTable, getVariableAttr(),
                           getResult().getType(), "variable");
}

/// A parameter's one writer is the optimizer: a store into it in the loss
/// would race the update (which wins depends on the target's order) and
/// make @predict, cloned from the loss, change the model as it decodes.
static LogicalResult refuseTrainable(Operation *op, VariableOp variable) {
  if (!variable.getTrainable())
    return success();
  return op->emitOpError()
         << "writes trainable variable @" << variable.getSymName()
         << ", which only the optimizer updates (keep state in a variable "
            "without `trainable`)";
}

LogicalResult StoreOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  if (failed(verifyVariableUse(*this, symbolTable, getVariableAttr(),
                               getValue().getType(), "variable")))
    return failure();
  return refuseTrainable(*this,
                         symbolTable.lookupNearestSymbolFrom<VariableOp>(
                             *this, getVariableAttr().getAttr()));
}

LogicalResult StoreSliceOp::verify() {
  auto shape = shapeOf(getValue());
  int64_t axis = getAxis();
  if (axis < 0 || axis >= static_cast<int64_t>(shape.size()))
    return emitOpError() << "axis " << axis << " is outside the value's "
                         << formatShape(shape);
  return success();
}

LogicalResult
StoreSliceOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto variable = symbolTable.lookupNearestSymbolFrom<VariableOp>(
      *this, getVariableAttr().getAttr());
  if (!variable)
    return emitOpError() << "variable " << getVariableAttr()
                         << " is not a tg.variable";
  auto type = variable.getTensorType();
  auto value = llvm::cast<RankedTensorType>(getValue().getType());
  auto slice = llvm::to_vector(type.getShape());
  int64_t axis = getAxis();
  if (axis < type.getRank())
    slice[axis] = value.getShape()[axis];
  if (value.getElementType() != type.getElementType() ||
      value.getRank() != type.getRank() ||
      value.getShape() != ArrayRef<int64_t>(slice) ||
      value.getShape()[axis] > type.getShape()[axis])
    return emitOpError() << "value " << formatShape(value.getShape())
                         << " is not a slice along axis " << axis << " of "
                         << getVariableAttr() << " " << type;
  return refuseTrainable(*this, variable);
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

/// The rules of Adam's hyperparameters, shared by both Adam ops.
static LogicalResult verifyAdamHyperparameters(Operation *op, float beta1,
                                               float beta2, float epsilon) {
  if (failed(verifyRate(op, "beta1", beta1)) ||
      failed(verifyRate(op, "beta2", beta2)))
    return failure();
  return verifyPositive(op, "epsilon", epsilon);
}

/// Checks one (param, moment1, moment2) triple updated with a gradient of
/// type `type`.
static LogicalResult verifyAdamState(Operation *op,
                                     SymbolTableCollection &symbolTable,
                                     FlatSymbolRefAttr param,
                                     FlatSymbolRefAttr moment1,
                                     FlatSymbolRefAttr moment2, Type type) {
  if (failed(verifyVariableUse(op, symbolTable, param, type, "param")) ||
      failed(verifyVariableUse(op, symbolTable, moment1, type, "moment1")) ||
      failed(verifyVariableUse(op, symbolTable, moment2, type, "moment2")))
    return failure();
  auto variable =
      symbolTable.lookupNearestSymbolFrom<VariableOp>(op, param.getAttr());
  if (!variable.getTrainable())
    return op->emitOpError() << "param " << param
                             << " must be a trainable variable";
  if (param == moment1 || param == moment2 || moment1 == moment2)
    return op->emitOpError() << "param, moment1 and moment2 must be three "
                                "different variables but are "
                             << param << ", " << moment1 << ", " << moment2;
  return success();
}

LogicalResult AdamUpdateOp::verify() {
  return verifyAdamHyperparameters(*this, getBeta1().convertToFloat(),
                                   getBeta2().convertToFloat(),
                                   getEpsilon().convertToFloat());
}

LogicalResult
AdamUpdateOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyAdamState(*this, symbolTable, getParamAttr(), getMoment1Attr(),
                         getMoment2Attr(), getGrad().getType());
}

LogicalResult MultiAdamUpdateOp::verify() {
  size_t n = getGrads().size();
  if (n == 0)
    return emitOpError() << "must update at least one parameter";
  if (getParams().size() != n || getMoments1().size() != n ||
      getMoments2().size() != n)
    return emitOpError() << "needs one param, moment1, moment2 and grad per "
                            "entry but has "
                         << getParams().size() << ", " << getMoments1().size()
                         << ", " << getMoments2().size() << " and " << n;
  for (ArrayAttr list : {getParams(), getMoments1(), getMoments2()})
    for (Attribute ref : list)
      if (!llvm::isa<FlatSymbolRefAttr>(ref))
        return emitOpError() << "names variables by flat symbol (@name), "
                                "not "
                             << ref;
  // The optimizer-step controls come together, with the norm they produce.
  bool control = static_cast<bool>(getWeight());
  if (static_cast<bool>(getPhase()) != control ||
      static_cast<bool>(getClip()) != control ||
      static_cast<bool>(getGradNorm()) != control)
    return emitOpError() << "takes weight, phase and clip together and then "
                            "returns the gradient norm, or none of them";
  // Weight decay belongs to the optimizer step, one flag per entry.
  if (getWeightDecay() && !control)
    return emitOpError() << "takes decay only with weight, phase and clip";
  if (static_cast<bool>(getWeightDecay()) != getDecays().has_value())
    return emitOpError() << "takes decay and its per-entry flags together";
  if (getDecays() && getDecays()->size() != static_cast<int64_t>(n))
    return emitOpError() << "needs one decay flag per entry but has "
                         << getDecays()->size() << " for " << n;
  // Run-time betas and epsilon: all three, in the optimizer step.
  bool hyper = static_cast<bool>(getBeta1Value());
  if (static_cast<bool>(getBeta2Value()) != hyper ||
      static_cast<bool>(getEpsilonValue()) != hyper)
    return emitOpError() << "takes run-time beta1, beta2 and eps together, "
                            "or none of them";
  if (hyper && !control)
    return emitOpError() << "takes run-time beta1, beta2 and eps only with "
                            "weight, phase and clip";
  return verifyAdamHyperparameters(*this, getBeta1().convertToFloat(),
                                   getBeta2().convertToFloat(),
                                   getEpsilon().convertToFloat());
}

LogicalResult
MultiAdamUpdateOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  // Every variable belongs to one entry: the entries run as one kernel.
  llvm::DenseSet<Attribute> seen;
  for (auto [param, m, v, grad] :
       llvm::zip(getParams(), getMoments1(), getMoments2(), getGrads())) {
    auto paramRef = llvm::cast<FlatSymbolRefAttr>(param);
    if (failed(verifyAdamState(*this, symbolTable, paramRef,
                               llvm::cast<FlatSymbolRefAttr>(m),
                               llvm::cast<FlatSymbolRefAttr>(v),
                               grad.getType())))
      return failure();
    for (Attribute ref : {param, m, v})
      if (!seen.insert(ref).second)
        return emitOpError() << "uses variable " << ref
                             << " in more than one entry (or role)";
  }
  return success();
}

LogicalResult AllReduceOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  // Each sum has its operand's type (and bytes).
  llvm::append_range(inferred, operands.getTypes());
  return success();
}

LogicalResult AllReduceOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "must reduce at least one tensor";
  return success();
}

} // namespace tgc::tg
