//===- tgc-opt.cpp - runs tg passes on .mlir files (lit tests use it) ----===//
#include "tools/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  tgc::registerAllDialects(registry);
  tgc::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "tgc-opt: runs tg dialect passes on .mlir files\n",
      registry));
}
