//===- PreLnTransformer.cpp - a pre-LN Transformer in one model file -----===//
//
// The encoder-decoder Transformer with LayerNorm before each sublayer,
// x + Dropout(Sublayer(LayerNorm(x))), and a final LayerNorm after each
// stack: the arrangement that trains without a long warmup. One file, as a
// user writes a model (docs/writing-models.md):
//
//   tgc --model-file PreLnTransformer.cpp -o train && ./train --task reverse
//
// or a driver built with find_package(tgc) and tgc_add_model (README).
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
    return Config{1000, 128, 4, 512, 3, 0.1, 0.1, 32, 32, 32, 1000};
  return std::nullopt;
}

class PreLnTransformer {
public:
  PreLnTransformer(Builder &b, const Config &c) : b(b), c(c) {}

  void build() {
    // The names and shapes the training program feeds: [batch, length] ids.
    Tensor source = b.input("source_ids", {c.batch, c.sourceLength}, DType::I32);
    Tensor targetIn = b.input("target_in_ids", {c.batch, c.targetLength}, DType::I32);
    Tensor targetOut = b.input("target_out_ids", {c.batch, c.targetLength}, DType::I32);

    table = b.param("embedding", {c.vocab, c.dModel},
                    Init::normal(std::pow(double(c.dModel), -0.5)));
    Tensor sourcePadding = paddingMask(source, /*padId=*/0);
    Tensor memory = encoder(embed(source), sourcePadding);
    Tensor decoded = decoder(embed(targetIn), memory, sourcePadding);
    Tensor logits = matmul(decoded, table, /*transposeB=*/true);
    LossAndTokens loss =
        crossEntropy(logits, targetOut, c.labelSmoothing, /*ignoreIndex=*/0);
    b.setLoss(loss.loss, loss.tokens);
    b.setOptimizer({0.9f, 0.98f, 1e-9f});
    b.setSchedule({c.dModel, c.warmup, 1.0});
  }

private:
  Tensor embed(Tensor ids) {
    Tensor scaled = scale(embedding(table, ids), std::sqrt(double(c.dModel)));
    return dropout(scaled + positionalEncoding(b, ids.dim(1), c.dModel),
                   c.dropout);
  }

  Tensor encoder(Tensor x, Tensor sourcePadding) {
    auto scope = b.scope("encoder");
    for (int64_t i = 0; i < c.layers; ++i) {
      auto layer = b.scope("layer" + std::to_string(i));
      Tensor normed = norm("self_attn_norm", x);
      x = x + dropout(attention("self_attn", normed, normed, sourcePadding,
                                /*causal=*/false),
                      c.dropout);
      x = x + dropout(feedForward(norm("ffn_norm", x)), c.dropout);
    }
    return norm("final_norm", x);
  }

  Tensor decoder(Tensor y, Tensor memory, Tensor sourcePadding) {
    auto scope = b.scope("decoder");
    for (int64_t i = 0; i < c.layers; ++i) {
      auto layer = b.scope("layer" + std::to_string(i));
      Tensor normed = norm("self_attn_norm", y);
      y = y + dropout(attention("self_attn", normed, normed, Tensor(),
                                /*causal=*/true),
                      c.dropout);
      y = y + dropout(attention("cross_attn", norm("cross_attn_norm", y),
                                memory, sourcePadding, /*causal=*/false),
                      c.dropout);
      y = y + dropout(feedForward(norm("ffn_norm", y)), c.dropout);
    }
    return norm("final_norm", y);
  }

  Tensor norm(const char *name, Tensor x) {
    auto scope = b.scope(name);
    Tensor gamma = b.param("gamma", {c.dModel}, Init::ones());
    Tensor beta = b.param("beta", {c.dModel}, Init::zeros());
    return layerNorm(x, gamma, beta, 1e-6);
  }

  Tensor feedForward(Tensor x) {
    auto scope = b.scope("ffn");
    Tensor w1 = b.param("w1", {c.dModel, c.dFF}, Init::xavierUniform());
    Tensor b1 = b.param("b1", {c.dFF}, Init::zeros());
    Tensor w2 = b.param("w2", {c.dFF, c.dModel}, Init::xavierUniform());
    Tensor b2 = b.param("b2", {c.dModel}, Init::zeros());
    return matmul(relu(matmul(x, w1) + b1), w2) + b2;
  }

  /// [B, S, d] -> [B, h, S, d / h]
  Tensor splitHeads(Tensor x) {
    return transpose(reshape(x, {x.dim(0), x.dim(1), c.heads, c.dModel / c.heads}),
                     {0, 2, 1, 3});
  }

  /// softmax(Q K^T / sqrt(d_k) + masks) V per head, heads merged, then W^O.
  Tensor attention(const char *name, Tensor queries, Tensor keysValues,
                   Tensor keyPadding, bool causal) {
    auto scope = b.scope(name);
    int64_t d = c.dModel;
    Tensor wq = b.param("w_q", {d, d}, Init::xavierUniform());
    Tensor wk = b.param("w_k", {d, d}, Init::xavierUniform());
    Tensor wv = b.param("w_v", {d, d}, Init::xavierUniform());
    Tensor wo = b.param("w_o", {d, d}, Init::xavierUniform());
    Tensor q = splitHeads(matmul(queries, wq));
    Tensor k = splitHeads(matmul(keysValues, wk));
    Tensor v = splitHeads(matmul(keysValues, wv));
    Tensor scores = scale(matmul(q, k, /*transposeB=*/true),
                          1.0 / std::sqrt(double(d / c.heads)));
    llvm::SmallVector<int64_t> shape(scores.shape());
    if (keyPadding) // [B, Sk] over [B, h, Sq, Sk]
      scores = scores + broadcast(keyPadding, shape, {0, 3});
    if (causal) // [T, T] over [B, h, T, T]
      scores = scores + broadcast(causalMask(b, scores.dim(2)), shape, {2, 3});
    Tensor heads = transpose(matmul(softmax(scores, -1), v), {0, 2, 1, 3});
    return matmul(reshape(heads, {heads.dim(0), heads.dim(1), d}), wo);
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
    error() << "pre_ln_transformer has no preset '" << options.preset
            << "' (presets: tiny, small)";
    return mlir::failure();
  }
  if (!options.configFile.empty()) {
    error() << "pre_ln_transformer reads no --config: edit its presets";
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
                    [&](Builder &b) { PreLnTransformer(b, *config).build(); });
}

} // namespace

TGC_REGISTER_MODEL({"pre_ln_transformer",
                    "encoder-decoder Transformer with pre-LN sublayers and "
                    "final LayerNorms",
                    {"tiny", "small"},
                    "tiny",
                    buildModel});
