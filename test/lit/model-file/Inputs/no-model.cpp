// Builds a graph function but never registers it.
#include "frontend/ModelRegistry.h"
#include "frontend/Ops.h"

mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
unregisteredModel(mlir::MLIRContext &context, const tgc::ModelOptions &) {
  return mlir::failure();
}
