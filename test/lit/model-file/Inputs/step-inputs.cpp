// Inputs the training runtime fills by name, declared wrongly by a model: f32
// token ids, an input named as one of the step's own ("lr"), ids into a table
// too small for the vocabulary. One preset each; "ok" has no mistake.
#include "frontend/ModelRegistry.h"
#include "frontend/Ops.h"

using namespace tgc;

static mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
build(mlir::MLIRContext &context, const ModelOptions &options) {
  return buildGraph(context, "loss", [&](Builder &b) {
    Tensor ids = b.input("target_in_ids", {2, 4}, DType::I32);
    Tensor out = b.input("target_out_ids", {2, 4}, DType::I32);
    Tensor table = b.param("embedding", {16, 8}, Init::normal(0.1));
    Tensor x = embedding(table, ids);
    if (options.preset == "f32-ids") {
      Tensor source = b.input("source_ids", {2, 4}, DType::F32);
      x = x + reduceMean(source, {0, 1});
    } else if (options.preset == "own-lr") {
      Tensor lr = b.input("lr", {}, DType::F32);
      x = x * lr;
    }
    if (options.preset == "small-table" || options.preset == "small-reshaped") {
      Tensor small = b.param("small", {4, 8}, Init::normal(0.1));
      Tensor rows = options.preset == "small-table"
                        ? embedding(small, ids)
                        : reshape(embedding(small, reshape(ids, {8})), {2, 4, 8});
      x = x + rows;
    }
    Tensor logits = matmul(x, table, /*transposeB=*/true);
    LossAndTokens loss = crossEntropy(logits, out, 0.0, 0);
    b.setLoss(loss.loss, loss.tokens);
    b.setSchedule({8, 50, 1.0});
  });
}

TGC_REGISTER_MODEL({"step_inputs", "inputs the runtime fills, declared wrongly",
                    {"ok", "f32-ids", "own-lr", "small-table", "small-reshaped"},
                    "ok", build});
