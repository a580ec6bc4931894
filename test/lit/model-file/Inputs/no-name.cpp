// Registers a model with an empty name: no --model could pick it, and a
// program built from it was labelled "-default".
#include "frontend/ModelRegistry.h"

static mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
build(mlir::MLIRContext &, const tgc::ModelOptions &) {
  return mlir::failure();
}

TGC_REGISTER_MODEL({"", "no name", {"tiny"}, "tiny", build});
