// Registers a model whose build function calls _exit(0), which runs no hook
// at all: tgc ended with status 0 and no word, nothing written.
#include "frontend/ModelRegistry.h"

#include <unistd.h>

static mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
build(mlir::MLIRContext &, const tgc::ModelOptions &) {
  _exit(0);
}

TGC_REGISTER_MODEL({"underscore-exits", "calls _exit() while building", {"tiny"}, "tiny", build});
