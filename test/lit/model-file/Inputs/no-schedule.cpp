// A model without a learning-rate schedule (registration-errors.test).
#include "frontend/ModelRegistry.h"
#include "frontend/Ops.h"

using namespace tgc;

static mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
build(mlir::MLIRContext &context, const ModelOptions &) {
  return buildGraph(context, "loss", [](Builder &b) {
    Tensor ids = b.input("target_out_ids", {2, 4}, DType::I32);
    Tensor table = b.param("embedding", {8, 4}, Init::normal(0.1));
    Tensor logits = matmul(embedding(table, ids), table, /*transposeB=*/true);
    LossAndTokens loss = crossEntropy(logits, ids, 0.1, 0);
    b.setLoss(loss.loss, loss.tokens);
  });
}

TGC_REGISTER_MODEL({"unscheduled", "no schedule", {"tiny"}, "tiny", build});
