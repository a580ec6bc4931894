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

namespace tgc::tg {
mlir::LogicalResult verifyStepDeclaration(mlir::Location loc,
                                          mlir::NamedAttribute attribute) {
  auto dictionary = llvm::dyn_cast<mlir::DictionaryAttr>(attribute.getValue());
  llvm::StringRef name = attribute.getName().getValue();
  if (!dictionary)
    return mlir::emitError(loc) << name << " must be a dictionary";
  auto bad = [&](mlir::NamedAttribute entry, llvm::StringRef rule) {
    return mlir::emitError(loc) << name << " " << entry.getName().getValue()
                                << " = " << entry.getValue() << ": " << rule;
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
      if (schedule && (key == "peak" || key == "minimum") && !(value >= 0.0))
        return bad(entry, "must be >= 0");
    } else if (auto integer =
                   llvm::dyn_cast<mlir::IntegerAttr>(entry.getValue())) {
      if (schedule && (key == "d_model" || key == "warmup") &&
          integer.getValue().getSExtValue() < 1)
        return bad(entry, "must be positive");
    }
  }
  // A decay's floor lies below its peak.
  auto peak = dictionary.getAs<mlir::FloatAttr>("peak");
  auto minimum = dictionary.getAs<mlir::FloatAttr>("minimum");
  if (schedule && peak && minimum && peak.getValueAsDouble() > 0 &&
      minimum.getValueAsDouble() >= peak.getValueAsDouble())
    return mlir::emitError(loc)
           << name << " minimum = " << minimum << " must be below its peak = "
           << peak;
  return mlir::success();
}
} // namespace tgc::tg

mlir::LogicalResult
TGDialect::verifyOperationAttribute(mlir::Operation *op,
                                    mlir::NamedAttribute attribute) {
  llvm::StringRef name = attribute.getName().getValue();
  if (name == "tg.optimizer" || name == "tg.schedule")
    return verifyStepDeclaration(op->getLoc(), attribute);
  if (name == kBesideNextAttr)
    return verifyBesideNext(op, attribute.getValue());
  return mlir::success();
}
