// Registrations that cannot work: no build function (a crash when the
// model was built), and a default preset that is not one of the presets
// (an error about a preset the command line never named).
#include "frontend/ModelRegistry.h"

static mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
build(mlir::MLIRContext &, const tgc::ModelOptions &) {
  return mlir::failure();
}

TGC_REGISTER_MODEL({"no-build", "no build function", {"tiny"}, "tiny", nullptr});
TGC_REGISTER_MODEL({"bad-default", "default preset not listed", {"tiny"},
                    "small", build});
