// A one-layer decoder whose dropouts the run-time flags must find:
//  - "mixed": residual dropouts at two compiled rates (0.1 and 0.2): no
//    --dropout input can set both;
//  - "unfused": every rate 0.1, and the attention's probabilities also feed
//    an extra loss term, so attention fusion leaves their dropout as a
//    tg.dropout of a softmax, which is still --attention-dropout's;
//  - "off": the same graph with every rate 0.
#include "frontend/ModelRegistry.h"
#include "frontend/Ops.h"

#include <cmath>

using namespace tgc;

static mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
build(mlir::MLIRContext &context, const ModelOptions &options) {
  const bool off = options.preset == "off";
  const double residual = off ? 0.0 : 0.1;
  const double feedForward = options.preset == "mixed" ? 0.2 : residual;
  const double attention = off ? 0.0 : 0.1;
  const int64_t B = options.batchSize ? options.batchSize : 4;
  const int64_t T = options.targetLength ? options.targetLength : 8;
  const int64_t V = options.vocabulary ? options.vocabulary : 16;
  const int64_t D = 16, H = 2;
  return buildGraph(context, "loss", [&](Builder &b) {
    Tensor in = b.input("target_in_ids", {B, T}, DType::I32);
    Tensor out = b.input("target_out_ids", {B, T}, DType::I32);
    Tensor table = b.param("embedding", {V, D}, Init::normal(0.1));
    Tensor x = dropout(embedding(table, in), residual);
    auto heads = [&](Tensor t) {
      return transpose(reshape(t, {B, T, H, D / H}), {0, 2, 1, 3});
    };
    Tensor q = heads(matmul(x, b.param("wq", {D, D}, Init::normal(0.1))));
    Tensor k = heads(matmul(x, b.param("wk", {D, D}, Init::normal(0.1))));
    Tensor v = heads(matmul(x, b.param("wv", {D, D}, Init::normal(0.1))));
    Tensor scores = matmul(q, k, /*transposeRhs=*/true) /
                        std::sqrt(static_cast<double>(D / H)) +
                    reshape(causalMask(b, T), {1, 1, T, T});
    Tensor p = softmax(scores, -1);
    Tensor o = matmul(dropout(p, attention), v);
    x = x + dropout(reshape(transpose(o, {0, 2, 1, 3}), {B, T, D}), residual);
    Tensor w = b.param("w", {D, D}, Init::normal(0.1));
    x = x + dropout(relu(matmul(x, w)), feedForward);
    LossAndTokens ce = crossEntropy(matmul(x, table, true), out, 0.0, 0);
    // Reads the probabilities: attention fusion leaves them unfused.
    b.setLoss(ce.loss + 1e-3 * reduceSum(p, {0, 1, 2, 3}), ce.tokens);
    b.setSchedule({D, 10, 1.0});
  });
}

TGC_REGISTER_MODEL({"dropout-rates", "dropouts the run-time flags must find",
                    {"mixed", "unfused", "off"}, "unfused", build});
