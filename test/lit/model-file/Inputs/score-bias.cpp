// Attention with additive score biases, as models written today have them:
// a learned bias per head and position pair in the encoder's
// self-attention, ALiBi's fixed slopes times distances in the decoder's
// causal one. Both fuse into tg.attention as its bias operand
// (score-bias.test). No dropout, so --check-gradients and the interpreter
// see the program's function.
#include "frontend/ModelRegistry.h"
#include "frontend/Ops.h"

#include <cmath>
#include <initializer_list>
#include <string>

using namespace tgc;

namespace {

constexpr int64_t kBatch = 4, kLength = 8, kVocab = 16, kWidth = 16,
                  kHeads = 2, kHeadDim = kWidth / kHeads;

/// [B, L, W] -> [B, H, L, D] and back.
Tensor splitHeads(Tensor x) {
  return transpose(reshape(x, {kBatch, kLength, kHeads, kHeadDim}),
                   {0, 2, 1, 3});
}
Tensor mergeHeads(Tensor x) {
  return reshape(transpose(x, {0, 2, 1, 3}), {kBatch, kLength, kWidth});
}

/// One attention layer of queries from `x` over keys and values from
/// `memory`, whose scores get `terms` (a bias, masks) added one by one.
Tensor attention(Builder &b, Tensor x, Tensor memory,
                 std::initializer_list<Tensor> terms, const std::string &name) {
  auto weight = [&](const char *w) {
    return b.param(name + "." + w, {kWidth, kWidth}, Init::xavierUniform());
  };
  Tensor q = splitHeads(matmul(x, weight("wq"))),
         k = splitHeads(matmul(memory, weight("wk"))),
         v = splitHeads(matmul(memory, weight("wv")));
  Tensor scores =
      matmul(q, k, /*transposeB=*/true) / std::sqrt(double(kHeadDim));
  for (Tensor term : terms)
    scores = scores + term;
  Tensor heads = matmul(softmax(scores, -1), v);
  return x + matmul(mergeHeads(heads), weight("wo"));
}

void buildScoreBias(Builder &b) {
  Tensor source = b.input("source_ids", {kBatch, kLength}, DType::I32);
  Tensor targetIn = b.input("target_in_ids", {kBatch, kLength}, DType::I32);
  Tensor targetOut = b.input("target_out_ids", {kBatch, kLength}, DType::I32);
  Tensor table = b.param("embedding", {kVocab, kWidth}, Init::normal(0.3));
  Tensor gamma = b.param("gamma", {kWidth}, Init::ones());
  Tensor beta = b.param("beta", {kWidth}, Init::zeros());
  Tensor padding = reshape(paddingMask(source, 0), {kBatch, 1, 1, kLength});
  Tensor causal = reshape(causalMask(b, kLength), {1, 1, kLength, kLength});

  // The encoder: a learned bias per head and (query, key) position pair.
  Tensor learned = b.param("relative_bias", {kHeads, kLength, kLength},
                           Init::normal(0.1));
  Tensor memory = embedding(table, source);
  memory = attention(b, memory, memory, {learned, padding}, "encoder");

  // The decoder: ALiBi, head h's slope 2^(-8 (h + 1) / H) times minus the
  // distance, on its causal self-attention; then plain cross-attention.
  Tensor slopes = exp((iota({kHeads, 1, 1}, 0) + 1.0) *
                      (-8.0 / kHeads * std::log(2.0)));
  Tensor distance =
      abs(iota({kLength, kLength}, 0) - iota({kLength, kLength}, 1));
  Tensor alibi = -1.0 * slopes * distance;
  Tensor x = embedding(table, targetIn);
  x = attention(b, x, x, {alibi, causal}, "self");
  x = attention(b, x, memory, {padding}, "cross");
  Tensor h = layerNorm(x, gamma, beta);
  LossAndTokens loss =
      crossEntropy(matmul(h, table, /*transposeB=*/true), targetOut, 0.1, 0);
  b.setLoss(loss.loss, loss.tokens);
  b.setSchedule({kWidth, 50, 1.0});
}

mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
build(mlir::MLIRContext &context, const ModelOptions &) {
  return buildGraph(context, "loss", buildScoreBias);
}

} // namespace

TGC_REGISTER_MODEL({"score_bias", "attention with learned and ALiBi score biases",
                    {"tiny"}, "tiny", build});
