//===- DecoderOnlyLm.cpp - a decoder-only language model in one file ----===//
//
// A GPT-style decoder-only Transformer: one stack of pre-LN layers with
// causal self-attention only (no encoder, no cross-attention) over the
// sequence "source, then target", trained with the next-token loss on the
// target part. The source is the prompt the continuation is conditioned
// on, as in a decoder-only model trained on translation pairs; with the
// built-in tasks (--task copy|reverse|digits) or token-id files the
// training program feeds both parts as it feeds any model.
//
// The two parts are embedded (a learned segment vector tells them apart)
// and concatenated into one sequence; every layer attends over it with the
// causal mask and the source's padding, which tgc fuses into one attention
// per layer. The target's positions are sliced out for the loss.
//
//   tgc --model-file DecoderOnlyLm.cpp -o train && ./train --task reverse
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
  int64_t vocab, dModel, heads, dFF, layers;
  double dropout, labelSmoothing;
  int64_t batch, sourceLength, targetLength, warmup;
};

/// tiny: for tests; small: for CPU runs.
std::optional<Config> preset(llvm::StringRef name) {
  if (name == "tiny")
    return Config{16, 32, 4, 64, 2, 0.1, 0.1, 4, 8, 8, 100};
  if (name == "small")
    return Config{1000, 128, 4, 512, 4, 0.1, 0.1, 32, 32, 32, 1000};
  return std::nullopt;
}

class DecoderOnlyLm {
public:
  DecoderOnlyLm(Builder &b, const Config &c) : b(b), c(c) {}

  void build() {
    Tensor source = b.input("source_ids", {c.batch, c.sourceLength}, DType::I32);
    Tensor targetIn = b.input("target_in_ids", {c.batch, c.targetLength}, DType::I32);
    Tensor targetOut = b.input("target_out_ids", {c.batch, c.targetLength}, DType::I32);
    const int64_t length = c.sourceLength + c.targetLength;

    table = b.param("embedding", {c.vocab, c.dModel},
                    Init::normal(std::pow(double(c.dModel), -0.5)));
    Tensor x = concat({embed(source, "source_segment"),
                       embed(targetIn, "target_segment")},
                      1);
    x = dropout(x + positionalEncoding(b, length, c.dModel), c.dropout);
    // Keys: the source's padding is hidden, the target's needs no mask (a
    // query sees no later key, and the loss ignores padded positions).
    Tensor padding = concat({paddingMask(source, /*padId=*/0),
                             constant(0.0, {c.batch, c.targetLength})},
                            1);
    Tensor keyPadding = reshape(padding, {c.batch, 1, 1, length});
    Tensor causal = reshape(causalMask(b, length), {1, 1, length, length});
    for (int64_t i = 0; i < c.layers; ++i) {
      auto layer = b.scope("layer" + std::to_string(i));
      x = x + dropout(selfAttention(layerNorm("attention_norm", x), keyPadding,
                                    causal),
                      c.dropout);
      x = x + dropout(feedForward(layerNorm("ffn_norm", x)), c.dropout);
    }
    Tensor text = slice(layerNorm("final_norm", x), 1, c.sourceLength,
                        c.targetLength);
    Tensor logits = matmul(text, table, /*transposeB=*/true);
    LossAndTokens loss =
        crossEntropy(logits, targetOut, c.labelSmoothing, /*ignoreIndex=*/0);
    b.setLoss(loss.loss, loss.tokens);
    b.setOptimizer({0.9f, 0.98f, 1e-9f});
    b.setSchedule({c.dModel, c.warmup, 1.0});
  }

private:
  /// E[ids] * sqrt(d) + segment
  Tensor embed(Tensor ids, const char *segmentName) {
    Tensor segment = b.param(segmentName, {c.dModel}, Init::normal(0.02));
    return scale(embedding(table, ids), std::sqrt(double(c.dModel))) + segment;
  }

  Tensor layerNorm(const char *name, Tensor x) {
    auto scope = b.scope(name);
    return tgc::layerNorm(x, b.param("gamma", {c.dModel}, Init::ones()),
                          b.param("beta", {c.dModel}, Init::zeros()), 1e-6);
  }

  /// max(0, x W1 + b1) W2 + b2
  Tensor feedForward(Tensor x) {
    auto scope = b.scope("ffn");
    Tensor hidden =
        relu(matmul(x, b.param("w1", {c.dModel, c.dFF}, Init::xavierUniform())) +
             b.param("b1", {c.dFF}, Init::zeros()));
    return matmul(hidden, b.param("w2", {c.dFF, c.dModel}, Init::xavierUniform())) +
           b.param("b2", {c.dModel}, Init::zeros());
  }

  /// [B, L, d] -> [B, h, L, d / h]
  Tensor splitHeads(Tensor x) {
    return transpose(reshape(x, {x.dim(0), x.dim(1), c.heads, c.dModel / c.heads}),
                     {0, 2, 1, 3});
  }

  /// [B, h, L, d / h] -> [B, L, d]
  Tensor mergeHeads(Tensor x) {
    Tensor t = transpose(x, {0, 2, 1, 3});
    return reshape(t, {t.dim(0), t.dim(1), c.dModel});
  }

  /// softmax(Q K^T / sqrt(d_k) + masks) V W^O over the whole sequence.
  Tensor selfAttention(Tensor x, Tensor keyPadding, Tensor causal) {
    auto scope = b.scope("self_attn");
    int64_t d = c.dModel;
    Tensor q = splitHeads(matmul(x, b.param("w_q", {d, d}, Init::xavierUniform())));
    Tensor k = splitHeads(matmul(x, b.param("w_k", {d, d}, Init::xavierUniform())));
    Tensor v = splitHeads(matmul(x, b.param("w_v", {d, d}, Init::xavierUniform())));
    Tensor scores = matmul(q, k, /*transposeB=*/true) /
                        std::sqrt(double(d / c.heads)) +
                    keyPadding + causal;
    Tensor heads = matmul(dropout(softmax(scores, -1), c.dropout), v);
    return matmul(mergeHeads(heads), b.param("w_o", {d, d}, Init::xavierUniform()));
  }

  Builder &b;
  const Config &c;
  Tensor table;
};

mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
buildModel(mlir::MLIRContext &context, const ModelOptions &options) {
  auto error = [&] { return mlir::emitError(mlir::UnknownLoc::get(&context)); };
  std::optional<Config> config = preset(options.preset);
  if (!config) {
    error() << "decoder_lm has no preset '" << options.preset
            << "' (presets: tiny, small)";
    return mlir::failure();
  }
  if (!options.configFile.empty()) {
    error() << "decoder_lm reads no --config: edit its presets";
    return mlir::failure();
  }
  // tgc --buckets and --corpus set the batch shape and the vocabulary.
  if (options.batchSize)
    config->batch = options.batchSize;
  if (options.sourceLength)
    config->sourceLength = options.sourceLength;
  if (options.targetLength)
    config->targetLength = options.targetLength;
  if (options.vocabulary)
    config->vocab = options.vocabulary;
  return buildGraph(context, "loss",
                    [&](Builder &b) { DecoderOnlyLm(b, *config).build(); });
}

} // namespace

TGC_REGISTER_MODEL({"decoder_lm",
                    "decoder-only language model: causal self-attention over "
                    "source then target, next-token loss on the target",
                    {"tiny", "small"},
                    "tiny",
                    buildModel});
