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
// Written before the DSL had concat, each layer keeps the two parts as two
// tensors and computes the attention of a target position over both key
// sets with one softmax, written out: a source position sees the source
// up to itself, a target position the whole source and the target up to
// itself, which is causal self-attention over the concatenated sequence.
// Positions restart at 0 in the target; a learned segment vector tells the
// two parts apart.
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

/// A LayerNorm's parameters, applied to each part.
struct LayerNorm {
  Tensor gamma, beta;
  Tensor apply(Tensor x) const { return layerNorm(x, gamma, beta, 1e-6); }
};

/// x + Dropout(FFN(LayerNorm(x))), FFN(x) = max(0, x W1 + b1) W2 + b2.
struct FeedForward {
  LayerNorm norm;
  Tensor w1, b1, w2, b2;
  Tensor apply(Tensor x, double rate) const {
    Tensor hidden = relu(matmul(norm.apply(x), w1) + b1);
    return x + dropout(matmul(hidden, w2) + b2, rate);
  }
};

/// One part of the sequence in one layer: its hidden states and, once
/// projected, its heads' queries, keys and values [B, h, L, d_k].
struct Part {
  Tensor hidden, q, k, v;
};

class DecoderOnlyLm {
public:
  DecoderOnlyLm(Builder &b, const Config &c) : b(b), c(c) {}

  void build() {
    Tensor source = b.input("source_ids", {c.batch, c.sourceLength}, DType::I32);
    Tensor targetIn = b.input("target_in_ids", {c.batch, c.targetLength}, DType::I32);
    Tensor targetOut = b.input("target_out_ids", {c.batch, c.targetLength}, DType::I32);

    table = b.param("embedding", {c.vocab, c.dModel},
                    Init::normal(std::pow(double(c.dModel), -0.5)));
    Tensor sourcePadding = paddingMask(source, /*padId=*/0);
    Part prompt{embed(source, "source_segment")};
    Part text{embed(targetIn, "target_segment")};
    // Every weight of a layer applies to both parts: they are one sequence.
    for (int64_t i = 0; i < c.layers; ++i) {
      auto layer = b.scope("layer" + std::to_string(i));
      selfAttention(prompt, text, sourcePadding);
      FeedForward ffn = feedForward();
      prompt.hidden = ffn.apply(prompt.hidden, c.dropout);
      text.hidden = ffn.apply(text.hidden, c.dropout);
    }
    Tensor logits = matmul(layerNorm("final_norm").apply(text.hidden), table,
                           /*transposeB=*/true);
    LossAndTokens loss =
        crossEntropy(logits, targetOut, c.labelSmoothing, /*ignoreIndex=*/0);
    b.setLoss(loss.loss, loss.tokens);
    b.setOptimizer({0.9f, 0.98f, 1e-9f});
    b.setSchedule({c.dModel, c.warmup, 1.0});
  }

private:
  /// dropout(E[ids] * sqrt(d) + PE + segment)
  Tensor embed(Tensor ids, const char *segmentName) {
    Tensor segment = b.param(segmentName, {c.dModel}, Init::normal(0.02));
    Tensor scaled = scale(embedding(table, ids), std::sqrt(double(c.dModel)));
    return dropout(scaled + positionalEncoding(b, ids.dim(1), c.dModel) +
                       segment,
                   c.dropout);
  }

  LayerNorm layerNorm(const char *name) {
    auto scope = b.scope(name);
    return {b.param("gamma", {c.dModel}, Init::ones()),
            b.param("beta", {c.dModel}, Init::zeros())};
  }

  FeedForward feedForward() {
    auto scope = b.scope("ffn");
    return {layerNorm("norm"),
            b.param("w1", {c.dModel, c.dFF}, Init::xavierUniform()),
            b.param("b1", {c.dFF}, Init::zeros()),
            b.param("w2", {c.dFF, c.dModel}, Init::xavierUniform()),
            b.param("b2", {c.dModel}, Init::zeros())};
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

  /// Q K^T / sqrt(d_k) plus the additive masks over [B, h, Lq, Lk].
  Tensor scores(const Part &queries, const Part &keys, Tensor keyPadding,
                bool causal) {
    Tensor s = scale(matmul(queries.q, keys.k, /*transposeB=*/true),
                     1.0 / std::sqrt(double(c.dModel / c.heads)));
    llvm::SmallVector<int64_t> shape(s.shape());
    if (keyPadding) // [B, Lk] over [B, h, Lq, Lk]
      s = s + broadcast(keyPadding, shape, {0, 3});
    if (causal) // [L, L] over [B, h, L, L]
      s = s + broadcast(causalMask(b, s.dim(2)), shape, {2, 3});
    return s;
  }

  /// x + Dropout(Attention(LayerNorm(x)) W^O) for both parts, with one set
  /// of weights: the sequence's one causal self-attention.
  void selfAttention(Part &prompt, Part &text, Tensor sourcePadding) {
    auto scope = b.scope("self_attn");
    int64_t d = c.dModel;
    Tensor wq = b.param("w_q", {d, d}, Init::xavierUniform());
    Tensor wk = b.param("w_k", {d, d}, Init::xavierUniform());
    Tensor wv = b.param("w_v", {d, d}, Init::xavierUniform());
    Tensor wo = b.param("w_o", {d, d}, Init::xavierUniform());
    LayerNorm norm = layerNorm("norm");
    auto project = [&](Part &part) {
      Tensor normed = norm.apply(part.hidden);
      part.q = splitHeads(matmul(normed, wq));
      part.k = splitHeads(matmul(normed, wk));
      part.v = splitHeads(matmul(normed, wv));
    };
    project(prompt);
    project(text);

    // Source queries see the source keys up to themselves.
    Tensor promptHeads = matmul(
        softmax(scores(prompt, prompt, sourcePadding, /*causal=*/true), -1),
        prompt.v);

    // Target queries see every source key and the target keys up to
    // themselves: one softmax over both score blocks, shifted by their
    // common row maximum max(a, b) = b + relu(a - b) to keep exp finite.
    Tensor onPrompt = scores(text, prompt, sourcePadding, /*causal=*/false);
    Tensor onText = scores(text, text, Tensor(), /*causal=*/true);
    Tensor promptMax = reduceMax(onPrompt, {3}, /*keepDims=*/true);
    Tensor textMax = reduceMax(onText, {3}, /*keepDims=*/true);
    Tensor rowMax = textMax + relu(promptMax - textMax);
    Tensor promptWeights = exp(onPrompt - rowMax);
    Tensor textWeights = exp(onText - rowMax);
    Tensor total = reduceSum(promptWeights, {3}, /*keepDims=*/true) +
                   reduceSum(textWeights, {3}, /*keepDims=*/true);
    Tensor textHeads = (matmul(promptWeights, prompt.v) +
                        matmul(textWeights, text.v)) /
                       total;

    prompt.hidden =
        prompt.hidden + dropout(matmul(mergeHeads(promptHeads), wo), c.dropout);
    text.hidden =
        text.hidden + dropout(matmul(mergeHeads(textHeads), wo), c.dropout);
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
