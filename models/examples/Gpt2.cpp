//===- Gpt2.cpp - a GPT-2-style language model in one file --------------===//
//
// A decoder-only Transformer as GPT-2 has it: token and learned position
// embeddings, pre-LN blocks of causal self-attention and a GELU MLP, a
// final LayerNorm, the output projection tied to the token embedding; the
// next-token cross-entropy over every position; AdamW with cosine decay.
// A language model: it reads token windows only (no source), which a
// training program cuts from a corpus of documents (tgc-data encode --text)
// or, without one, from the built-in tasks' sentences.
//
//   tgc --model-file Gpt2.cpp --preset tiny -o train_gpt
//   ./train_gpt --train-data lm.tok --valid-data valid.tok
//
// Presets: tiny (tests), small (CPU runs), 124m (GPT-2 small: 12 layers,
// d 768, 12 heads, context 1024, vocabulary 50257 padded to 50304, a
// multiple of 64 for the GEMMs).
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
  int64_t vocab, dModel, heads, layers, context, batch;
  double dropout, weightDecay, peakLr;
  int64_t warmup;
};

std::optional<Config> preset(llvm::StringRef name) {
  if (name == "tiny")
    return Config{16, 32, 4, 2, 16, 8, 0.0, 0.1, 3e-3, 20};
  if (name == "small")
    return Config{1024, 256, 4, 4, 128, 16, 0.1, 0.1, 1e-3, 200};
  if (name == "124m")
    return Config{50304, 768, 12, 12, 1024, 8, 0.0, 0.1, 6e-4, 2000};
  return std::nullopt;
}

class Gpt2 {
public:
  Gpt2(Builder &b, const Config &c) : b(b), c(c) {}

  void build() {
    Tensor tokens = b.input("target_in_ids", {c.batch, c.context}, DType::I32);
    Tensor next = b.input("target_out_ids", {c.batch, c.context}, DType::I32);
    Tensor table = b.param("wte", {c.vocab, c.dModel}, Init::normal(0.02));
    // Not decayed, as the token table (an embedding) is not.
    Tensor positions = b.param("wpe", {c.context, c.dModel}, Init::normal(0.01),
                               ParamOptions{.weightDecay = false});
    Tensor x = dropout(embedding(table, tokens) + positions, c.dropout);
    Tensor causal = reshape(causalMask(b, c.context), {1, 1, c.context, c.context});
    for (int64_t i = 0; i < c.layers; ++i) {
      auto block = b.scope("h" + std::to_string(i));
      x = x + dropout(attention(layerNorm("ln_1", x), causal), c.dropout);
      x = x + dropout(mlp(layerNorm("ln_2", x)), c.dropout);
    }
    Tensor logits = matmul(layerNorm("ln_f", x), table, /*transposeB=*/true);
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
  Tensor layerNorm(const char *name, Tensor x) {
    auto scope = b.scope(name);
    return tgc::layerNorm(x, b.param("gamma", {c.dModel}, Init::ones()),
                          b.param("beta", {c.dModel}, Init::zeros()), 1e-5);
  }

  Tensor linear(const char *name, Tensor x, int64_t out, double std = 0.02) {
    auto scope = b.scope(name);
    return matmul(x, b.param("w", {x.dim(-1), out}, Init::normal(std))) +
           b.param("b", {out}, Init::zeros());
  }

  /// GPT-2 scales the residual projections' initialization by
  /// 1/sqrt(2 * layers).
  double residualStd() const { return 0.02 / std::sqrt(2.0 * c.layers); }

  Tensor mlp(Tensor x) {
    auto scope = b.scope("mlp");
    return linear("c_proj", gelu(linear("c_fc", x, 4 * c.dModel), /*tanhApprox=*/true),
                  c.dModel, residualStd());
  }

  /// [B, T, d] -> [B, h, T, d / h]
  Tensor splitHeads(Tensor x) {
    return transpose(reshape(x, {c.batch, c.context, c.heads, c.dModel / c.heads}),
                     {0, 2, 1, 3});
  }

  Tensor attention(Tensor x, Tensor causal) {
    auto scope = b.scope("attn");
    Tensor q = splitHeads(linear("q", x, c.dModel));
    Tensor k = splitHeads(linear("k", x, c.dModel));
    Tensor v = splitHeads(linear("v", x, c.dModel));
    Tensor scores =
        matmul(q, k, /*transposeB=*/true) / std::sqrt(double(c.dModel / c.heads)) +
        causal;
    Tensor heads = matmul(dropout(softmax(scores, -1), c.dropout), v);
    Tensor merged = reshape(transpose(heads, {0, 2, 1, 3}),
                            {c.batch, c.context, c.dModel});
    return linear("c_proj", merged, c.dModel, residualStd());
  }

  Builder &b;
  const Config &c;
};

mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
buildModel(mlir::MLIRContext &context, const ModelOptions &options) {
  auto error = [&] { return mlir::emitError(mlir::UnknownLoc::get(&context)); };
  std::optional<Config> config = preset(options.preset);
  if (!config) {
    error() << "gpt2 has no preset '" << options.preset
            << "' (presets: tiny, small, 124m)";
    return mlir::failure();
  }
  if (!options.configFile.empty()) {
    error() << "gpt2 reads no --config: edit its presets";
    return mlir::failure();
  }
  // tgc --buckets BxT (a language model's shape: batch x context) and
  // --corpus set the batch, the context and the vocabulary.
  if (options.batchSize)
    config->batch = options.batchSize;
  if (options.targetLength)
    config->context = options.targetLength;
  if (options.vocabulary)
    config->vocab = options.vocabulary;
  return buildGraph(context, "loss", [&](Builder &b) { Gpt2(b, *config).build(); });
}

} // namespace

TGC_REGISTER_MODEL({"gpt2",
                    "GPT-2-style language model: learned positions, pre-LN, "
                    "GELU, tied embeddings, AdamW with cosine decay",
                    {"tiny", "small", "124m"},
                    "tiny",
                    buildModel});
