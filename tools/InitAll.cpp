//===- InitAll.cpp - what the tgc tools register -------------------------===//
#include "tools/InitAll.h"

#include "ir/TgDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace tgc {

void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<tg::TGDialect, mlir::func::FuncDialect>();
}

void registerAllPasses() {
  mlir::registerTransformsPasses();
  registerPasses();
}

} // namespace tgc
