// A model that ignores the bucket it is asked for: always 2 x 4.
#include "frontend/ModelRegistry.h"
#include "frontend/Ops.h"

using namespace tgc;

static mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
build(mlir::MLIRContext &context, const ModelOptions &options) {
  const int64_t B = 2, T = 4, D = 8;
  const int64_t V = options.vocabulary ? options.vocabulary : 8;
  return buildGraph(context, "loss", [&](Builder &b) {
    Tensor src = b.input("source_ids", {B, T}, DType::I32);
    Tensor in = b.input("target_in_ids", {B, T}, DType::I32);
    Tensor out = b.input("target_out_ids", {B, T}, DType::I32);
    Tensor table = b.param("embedding", {V, D}, Init::normal(0.1));
    Tensor x = embedding(table, in) + embedding(table, src);
    LossAndTokens ce = crossEntropy(matmul(x, table, true), out, 0.0, 0);
    b.setLoss(ce.loss, ce.tokens);
    b.setSchedule({D, 10, 1.0});
  });
}

TGC_REGISTER_MODEL({"fixed-shape", "ignores its bucket", {"tiny"}, "tiny",
                    build});
