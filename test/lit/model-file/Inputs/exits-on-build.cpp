// Registers a model whose build function prints its reason, then calls
// exit(0): tgc ended with status 0 and no word, as if it had succeeded (and
// the reason, buffered, was lost with stdout a pipe).
#include "frontend/ModelRegistry.h"

#include <cstdio>
#include <cstdlib>

static mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
build(mlir::MLIRContext &, const tgc::ModelOptions &) {
  std::printf("the model gives up\n");
  std::exit(0);
}

TGC_REGISTER_MODEL({"exits", "calls exit() while building", {"tiny"}, "tiny", build});
