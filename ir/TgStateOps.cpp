//===- TgStateOps.cpp - variables, loads, stores, constants, Adam -------===//
#include "ir/TgOps.h"
#include "ir/TgVerify.h"

#include <cmath>

using namespace mlir;

namespace tgc::tg {

LogicalResult VariableOp::verify() {
  auto tensor = llvm::dyn_cast<RankedTensorType>(getType());
  if (!tensor || !tensor.hasStaticShape())
    return emitOpError() << "type must be a statically shaped tensor but is "
                         << getType();
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
  if (init == InitKind::xavier_uniform && tensor.getRank() < 2)
    return emitOpError() << "xavier_uniform needs rank >= 2 (fan-in, fan-out) "
                            "but the shape is "
                         << formatShape(tensor.getShape());
  if (!element.isF32() && init != InitKind::zeros && init != InitKind::ones)
    return emitOpError() << "an i32 variable can only be initialized with "
                            "zeros or ones, not "
                         << stringifyInitKind(init);
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

LogicalResult StoreOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyVariableUse(*this, symbolTable, getVariableAttr(),
                           getValue().getType(), "variable");
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult AdamUpdateOp::verify() {
  if (failed(verifyRate(*this, "beta1", getBeta1().convertToFloat())) ||
      failed(verifyRate(*this, "beta2", getBeta2().convertToFloat())))
    return failure();
  return verifyPositive(*this, "epsilon", getEpsilon().convertToFloat());
}

LogicalResult
AdamUpdateOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Type type = getGrad().getType();
  if (failed(verifyVariableUse(*this, symbolTable, getParamAttr(), type,
                               "param")) ||
      failed(verifyVariableUse(*this, symbolTable, getMoment1Attr(), type,
                               "moment1")) ||
      failed(verifyVariableUse(*this, symbolTable, getMoment2Attr(), type,
                               "moment2")))
    return failure();
  auto param = symbolTable.lookupNearestSymbolFrom<VariableOp>(
      *this, getParamAttr().getAttr());
  if (!param.getTrainable())
    return emitOpError() << "param " << getParamAttr()
                         << " must be a trainable variable";
  if (getParam() == getMoment1() || getParam() == getMoment2() ||
      getMoment1() == getMoment2())
    return emitOpError() << "param, moment1 and moment2 must be three "
                            "different variables but are "
                         << getParamAttr() << ", " << getMoment1Attr() << ", "
                         << getMoment2Attr();
  return success();
}

} // namespace tgc::tg
