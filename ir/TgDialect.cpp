//===- TgDialect.cpp - registration of the tg dialect -------------------===//
#include "ir/TgDialect.h"
#include "ir/TgOps.h"

#include <cmath>

#include "ir/TgDialect.cpp.inc"
#include "ir/TgEnums.cpp.inc"
#include "ir/TgInterfaces.cpp.inc"

using namespace tgc::tg;

void TGDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ir/TgOps.cpp.inc"
      >();
}

namespace {
/// Each number in a tg.optimizer or tg.schedule dictionary: within its range
/// and finite (the generated C++ spells it as a literal).
mlir::LogicalResult verifyDeclaration(mlir::Operation *op,
                                      mlir::NamedAttribute attribute) {
  auto dictionary = llvm::dyn_cast<mlir::DictionaryAttr>(attribute.getValue());
  llvm::StringRef name = attribute.getName().getValue();
  if (!dictionary)
    return op->emitError() << name << " must be a dictionary";
  auto bad = [&](mlir::NamedAttribute entry, llvm::StringRef rule) {
    return op->emitError() << name << " " << entry.getName().getValue() << " = "
                           << entry.getValue() << ": " << rule;
  };
  bool schedule = name == "tg.schedule";
  for (mlir::NamedAttribute entry : dictionary) {
    llvm::StringRef key = entry.getName().getValue();
    if (auto number = llvm::dyn_cast<mlir::FloatAttr>(entry.getValue())) {
      double value = number.getValueAsDouble();
      if (!std::isfinite(value))
        return bad(entry, "must be finite");
      if (!schedule && (key == "beta1" || key == "beta2") &&
          !(value >= 0.0 && value < 1.0))
        return bad(entry, "must be in [0, 1)");
      if (!schedule && key == "weight_decay" && !(value >= 0.0 && value <= 1.0))
        return bad(entry, "must be in [0, 1]");
      if ((key == "epsilon" || key == "factor") && !(value > 0.0))
        return bad(entry, "must be positive");
    } else if (auto integer =
                   llvm::dyn_cast<mlir::IntegerAttr>(entry.getValue())) {
      if (schedule && (key == "d_model" || key == "warmup") &&
          integer.getValue().getSExtValue() < 1)
        return bad(entry, "must be positive");
    }
  }
  return mlir::success();
}
} // namespace

mlir::LogicalResult
TGDialect::verifyOperationAttribute(mlir::Operation *op,
                                    mlir::NamedAttribute attribute) {
  llvm::StringRef name = attribute.getName().getValue();
  if (name == "tg.optimizer" || name == "tg.schedule")
    return verifyDeclaration(op, attribute);
  if (name == kBesideNextAttr)
    return verifyBesideNext(op, attribute.getValue());
  return mlir::success();
}
