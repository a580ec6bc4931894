// A model whose code prints while loading and while building, through C's
// and C++'s streams: that text landed in the middle of --emit=tg's module on
// stdout.
#include "frontend/ModelRegistry.h"
#include "frontend/Ops.h"

#include <cstdio>
#include <iostream>

using namespace tgc;

static mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
build(mlir::MLIRContext &context, const ModelOptions &) {
  std::printf("printf while building\n");
  std::cout << "cout while building" << std::endl;
  return buildGraph(context, "loss", [&](Builder &b) {
    Tensor ids = b.input("target_out_ids", {2, 4}, DType::I32);
    Tensor table = b.param("embedding", {8, 8}, Init::normal(0.1));
    LossAndTokens ce =
        crossEntropy(matmul(embedding(table, ids), table, true), ids, 0.0, 0);
    b.setLoss(ce.loss, ce.tokens);
    b.setSchedule({8, 10, 1.0});
  });
}

static int printed = [] {
  std::printf("printf while loading\n");
  return 0;
}();

TGC_REGISTER_MODEL({"prints", "prints to stdout", {"tiny"}, "tiny", build});
