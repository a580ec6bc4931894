//===- Llama.cpp - a LLaMA-style language model in one file --------------===//
//
// A decoder-only Transformer as LLaMA has it: token embeddings and no
// position embeddings (rotary positions rotate each head's queries and
// keys), pre-norm blocks with RMSNorm, causal self-attention, a SwiGLU MLP
// (silu(x W_gate) * (x W_up)) W_down, no biases anywhere, a final RMSNorm
// and an output projection of its own (untied); the next-token
// cross-entropy over every position; AdamW with cosine decay to a tenth of
// the peak. A language model: it reads token windows only (no source).
//
//   tgc --model-file Llama.cpp --preset tiny -o train_llama
//   ./train_llama --train-data lm.tok --valid-data valid.tok
//
// Presets: tiny (tests), small (CPU runs), tiny-gqa (grouped-query
// attention as LLaMA 2 70B and LLaMA 3 have it: 4 query heads share 2 key
// and value heads).
//
//===----------------------------------------------------------------------===//
#include "frontend/ModelRegistry.h"
#include "frontend/Ops.h"

#include "mlir/IR/Diagnostics.h"

#include <cmath>
#include <optional>
#include <string>

using namespace tgc;

namespace {

struct Config {
  int64_t vocab, dModel, heads, layers, hidden, context, batch;
  double weightDecay, peakLr;
  int64_t warmup;
  /// Key and value heads, a divisor of `heads`: each serves heads / kvHeads
  /// query heads (grouped-query attention); heads: multi-head attention.
  int64_t kvHeads;
};

std::optional<Config> preset(llvm::StringRef name) {
  if (name == "tiny")
    return Config{16, 32, 4, 2, 64, 16, 8, 0.1, 3e-3, 20, 4};
  if (name == "tiny-gqa")
    return Config{16, 32, 4, 2, 64, 16, 8, 0.1, 3e-3, 20, 2};
  if (name == "small") // LLaMA's hidden size: 2/3 of 4d, to a multiple of 64
    return Config{1024, 256, 4, 4, 704, 128, 16, 0.1, 1e-3, 200, 4};
  return std::nullopt;
}

class Llama {
public:
  Llama(Builder &b, const Config &c) : b(b), c(c) {}

  void build() {
    Tensor tokens = b.input("target_in_ids", {c.batch, c.context}, DType::I32);
    Tensor next = b.input("target_out_ids", {c.batch, c.context}, DType::I32);
    Tensor x = embedding(b.param("tok_embeddings", {c.vocab, c.dModel},
                                 Init::normal(0.02)),
                         tokens);
    Tensor causal = reshape(causalMask(b, c.context), {1, 1, c.context, c.context});
    for (int64_t i = 0; i < c.layers; ++i) {
      auto block = b.scope("layers" + std::to_string(i));
      x = x + attention(norm("attention_norm", x), causal);
      x = x + feedForward(norm("ffn_norm", x));
    }
    Tensor logits = matmul(norm("norm", x),
                           b.param("output", {c.dModel, c.vocab}, Init::normal(0.02)));
    LossAndTokens loss = crossEntropy(logits, next, /*smoothing=*/0.0,
                                      /*ignoreIndex=*/0);
    b.setLoss(loss.loss, loss.tokens);
    b.setOptimizer({0.9f, 0.95f, 1e-8f, static_cast<float>(c.weightDecay)});
    WarmupSchedule schedule;
    schedule.dModel = c.dModel;
    schedule.warmupSteps = c.warmup;
    schedule.kind = LrScheduler::Cosine;
    schedule.peak = c.peakLr;
    schedule.minimum = c.peakLr / 10;
    b.setSchedule(schedule);
  }

private:
  Tensor norm(const char *name, Tensor x) {
    auto scope = b.scope(name);
    return rmsNorm(x, b.param("weight", {c.dModel}, Init::ones()), 1e-5);
  }

  Tensor weight(const char *name, int64_t in, int64_t out) {
    return b.param(name, {in, out}, Init::normal(0.02));
  }

  /// (silu(x W_gate) * (x W_up)) W_down
  Tensor feedForward(Tensor x) {
    auto scope = b.scope("feed_forward");
    Tensor gate = silu(matmul(x, weight("w1", c.dModel, c.hidden)));
    Tensor up = matmul(x, weight("w3", c.dModel, c.hidden));
    return matmul(gate * up, weight("w2", c.hidden, c.dModel));
  }

  /// [B, T, n * d / h] -> [B, n, T, d / h]
  Tensor splitHeads(Tensor x, int64_t n) {
    return transpose(reshape(x, {c.batch, c.context, n, c.dModel / c.heads}),
                     {0, 2, 1, 3});
  }

  /// [B, kvHeads, T, w] -> [B, heads, T, w]: each key or value head serves
  /// its group of query heads (a broadcast, whose gradient sums the group's).
  Tensor repeatHeads(Tensor x) {
    if (c.kvHeads == c.heads)
      return x;
    const int64_t group = c.heads / c.kvHeads, width = c.dModel / c.heads;
    Tensor grouped = reshape(x, {c.batch, c.kvHeads, 1, c.context, width});
    return reshape(broadcastTo(grouped, {c.batch, c.kvHeads, group, c.context, width}),
                   {c.batch, c.heads, c.context, width});
  }

  Tensor attention(Tensor x, Tensor causal) {
    auto scope = b.scope("attention");
    const int64_t kvWidth = c.kvHeads * (c.dModel / c.heads);
    Tensor q = rotary(splitHeads(matmul(x, weight("wq", c.dModel, c.dModel)), c.heads));
    Tensor k = repeatHeads(
        rotary(splitHeads(matmul(x, weight("wk", c.dModel, kvWidth)), c.kvHeads)));
    Tensor v = repeatHeads(splitHeads(matmul(x, weight("wv", c.dModel, kvWidth)), c.kvHeads));
    Tensor scores =
        matmul(q, k, /*transposeB=*/true) / std::sqrt(double(c.dModel / c.heads)) +
        causal;
    Tensor heads = matmul(softmax(scores, -1), v);
    Tensor merged = reshape(transpose(heads, {0, 2, 1, 3}),
                            {c.batch, c.context, c.dModel});
    return matmul(merged, weight("wo", c.dModel, c.dModel));
  }

  Builder &b;
  const Config &c;
};

mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
buildModel(mlir::MLIRContext &context, const ModelOptions &options) {
  auto error = [&] { return mlir::emitError(mlir::UnknownLoc::get(&context)); };
  std::optional<Config> config = preset(options.preset);
  if (!config) {
    error() << "llama has no preset '" << options.preset
            << "' (presets: tiny, tiny-gqa, small)";
    return mlir::failure();
  }
  if (!options.configFile.empty()) {
    error() << "llama reads no --config: edit its presets";
    return mlir::failure();
  }
  // tgc --buckets BxSxT (a language model's: batch and context T) and
  // --corpus set the batch, the context and the vocabulary.
  if (options.batchSize)
    config->batch = options.batchSize;
  if (options.targetLength)
    config->context = options.targetLength;
  if (options.vocabulary)
    config->vocab = options.vocabulary;
  return buildGraph(context, "loss", [&](Builder &b) { Llama(b, *config).build(); });
}

} // namespace

TGC_REGISTER_MODEL({"llama",
                    "LLaMA-style language model: RMSNorm, SwiGLU, rotary "
                    "positions, grouped-query attention (tiny-gqa), no "
                    "biases, untied output, AdamW with cosine decay",
                    {"tiny", "tiny-gqa", "small"},
                    "tiny",
                    buildModel});
