// A softmax over positions (axis 1 of [batch, length, width]), not the
// last axis: the kernels normalize rows, so the compiled step writes it
// between transposes (tg-softmax-last-axis).
#include "frontend/ModelRegistry.h"
#include "frontend/Ops.h"

using namespace tgc;

static mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
build(mlir::MLIRContext &context, const ModelOptions &options) {
  const int64_t B = options.batchSize ? options.batchSize : 4;
  const int64_t T = options.targetLength ? options.targetLength : 8;
  const int64_t V = options.vocabulary ? options.vocabulary : 16;
  const int64_t D = 16;
  return buildGraph(context, "loss", [&](Builder &b) {
    Tensor in = b.input("target_in_ids", {B, T}, DType::I32);
    Tensor out = b.input("target_out_ids", {B, T}, DType::I32);
    Tensor table = b.param("embedding", {V, D}, Init::normal(0.3));
    Tensor x = embedding(table, in);
    Tensor w = b.param("w", {D, D}, Init::normal(0.3));
    // Each feature's weights over the positions sum to 1.
    Tensor h = x + softmax(matmul(x, w), 1) * x;
    LossAndTokens ce = crossEntropy(matmul(h, table, true), out, 0.0, 0);
    b.setLoss(ce.loss, ce.tokens);
    b.setSchedule({D, 10, 1.0});
  });
}

TGC_REGISTER_MODEL({"softmax-axis", "a softmax over positions", {"tiny"},
                    "tiny", build});
