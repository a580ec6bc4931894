// Registers a model whose build function throws.
#include "frontend/ModelRegistry.h"

#include <stdexcept>

static mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
build(mlir::MLIRContext &, const tgc::ModelOptions &) {
  throw std::runtime_error("preset table missing");
}

TGC_REGISTER_MODEL({"throws", "throws while building", {"tiny"}, "tiny", build});
