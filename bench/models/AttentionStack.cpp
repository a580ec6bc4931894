//===- AttentionStack.cpp - attention blocks with each position scheme ---===//
//
// A stack of post-LN Transformer decoder blocks (causal self-attention, then
// a ReLU FFN, each x = Norm(x + Dropout(sublayer(x)))) over embeddings of
// the target, with the tied output projection: the models of
// `bench/attention_variants.py`, one per way of giving attention its
// positions, so that two programs differ only there:
//   attn_plain     sinusoidal positions added to the embeddings
//   attn_rotary    rotary q and k (no added positions)
//   attn_alibi     ALiBi: a fixed per-head score bias, slope times distance
//   attn_relative  a learned score bias per head and position pair
//   attn_rmsnorm   attn_plain with RMSNorm for LayerNorm
// Presets: `base` is the paper's base widths (d_model 512, 8 heads, d_ff
// 2048), 4 blocks over 32 x 64 tokens.
//
//===----------------------------------------------------------------------===//
#include "frontend/ModelRegistry.h"
#include "frontend/Ops.h"

#include <cmath>
#include <string>

using namespace tgc;

namespace {

struct Shape {
  int64_t vocab, dModel, heads, dFF, layers, batch, length;
};

Shape shapeOf(const ModelOptions &options) {
  Shape s = options.preset == "tiny" ? Shape{16, 32, 2, 64, 2, 4, 8}
                                     : Shape{1000, 512, 8, 2048, 4, 32, 64};
  if (options.batchSize)
    s.batch = options.batchSize;
  if (options.targetLength)
    s.length = options.targetLength;
  if (options.vocabulary)
    s.vocab = options.vocabulary;
  return s;
}

enum class Positions { Sinusoidal, Rotary, Alibi, Relative };

struct Variant {
  Positions positions;
  bool rms;
};

mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
buildVariant(mlir::MLIRContext &context, const ModelOptions &options,
             Variant variant) {
  Shape s = shapeOf(options);
  const int64_t d = s.dModel / s.heads;
  return buildGraph(context, "loss", [&](Builder &b) {
    b.input("source_ids", {s.batch, s.length}, DType::I32);
    Tensor targetIn = b.input("target_in_ids", {s.batch, s.length}, DType::I32);
    Tensor targetOut =
        b.input("target_out_ids", {s.batch, s.length}, DType::I32);
    Tensor table = b.param("embedding", {s.vocab, s.dModel},
                           Init::normal(std::pow(double(s.dModel), -0.5)));
    Tensor x = scale(embedding(table, targetIn), std::sqrt(double(s.dModel)));
    if (variant.positions == Positions::Sinusoidal)
      x = x + positionalEncoding(b, s.length, s.dModel);
    Tensor causal =
        reshape(causalMask(b, s.length), {1, 1, s.length, s.length});
    // ALiBi: head h's slope 2^(-8 (h + 1) / H) times minus the distance.
    Tensor alibi;
    if (variant.positions == Positions::Alibi)
      alibi = -1.0 *
              exp((iota({s.heads, 1, 1}, 0) + 1.0) *
                  (-8.0 / double(s.heads) * std::log(2.0))) *
              abs(iota({s.length, s.length}, 0) -
                  iota({s.length, s.length}, 1));
    auto heads = [&](Tensor t) {
      return transpose(reshape(t, {s.batch, s.length, s.heads, d}),
                       {0, 2, 1, 3});
    };
    auto norm = [&](Tensor t) {
      Tensor gamma = b.param("gamma", {s.dModel}, Init::ones());
      if (variant.rms)
        return rmsNorm(t, gamma);
      return layerNorm(t, gamma, b.param("beta", {s.dModel}, Init::zeros()));
    };
    for (int64_t i = 0; i < s.layers; ++i) {
      auto layer = b.scope("layer" + std::to_string(i));
      Tensor attended;
      {
        auto scope = b.scope("attention");
        Tensor q = heads(matmul(x, b.param("wq", {s.dModel, s.dModel},
                                           Init::xavierUniform())));
        Tensor k = heads(matmul(x, b.param("wk", {s.dModel, s.dModel},
                                           Init::xavierUniform())));
        Tensor v = heads(matmul(x, b.param("wv", {s.dModel, s.dModel},
                                           Init::xavierUniform())));
        if (variant.positions == Positions::Rotary) {
          q = rotary(q);
          k = rotary(k);
        }
        Tensor scores = matmul(q, k, /*transposeB=*/true) / std::sqrt(double(d));
        if (variant.positions == Positions::Alibi)
          scores = scores + alibi;
        if (variant.positions == Positions::Relative)
          scores = scores + b.param("bias", {s.heads, s.length, s.length},
                                    Init::zeros());
        Tensor p = dropout(softmax(scores + causal, -1), 0.1);
        Tensor merged = reshape(transpose(matmul(p, v), {0, 2, 1, 3}),
                                {s.batch, s.length, s.dModel});
        attended = matmul(merged, b.param("wo", {s.dModel, s.dModel},
                                          Init::xavierUniform()));
        x = norm(x + dropout(attended, 0.1));
      }
      auto scope = b.scope("ffn");
      Tensor hidden = relu(
          matmul(x, b.param("w1", {s.dModel, s.dFF}, Init::xavierUniform())) +
          b.param("b1", {s.dFF}, Init::zeros()));
      Tensor out =
          matmul(hidden, b.param("w2", {s.dFF, s.dModel}, Init::xavierUniform())) +
          b.param("b2", {s.dModel}, Init::zeros());
      x = norm(x + dropout(out, 0.1));
    }
    LossAndTokens loss = crossEntropy(matmul(x, table, /*transposeB=*/true),
                                      targetOut, 0.1, 0);
    b.setLoss(loss.loss, loss.tokens);
    b.setSchedule({s.dModel, 4000, 1.0});
  });
}

template <Positions P, bool Rms>
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
build(mlir::MLIRContext &context, const ModelOptions &options) {
  return buildVariant(context, options, Variant{P, Rms});
}

} // namespace

TGC_REGISTER_MODEL({"attn_plain", "attention stack, sinusoidal positions",
                    {"tiny", "base"}, "base",
                    build<Positions::Sinusoidal, false>});
TGC_REGISTER_MODEL({"attn_rotary", "attention stack, rotary q and k",
                    {"tiny", "base"}, "base", build<Positions::Rotary, false>});
TGC_REGISTER_MODEL({"attn_alibi", "attention stack, ALiBi score bias",
                    {"tiny", "base"}, "base", build<Positions::Alibi, false>});
TGC_REGISTER_MODEL({"attn_relative", "attention stack, learned score bias",
                    {"tiny", "base"}, "base",
                    build<Positions::Relative, false>});
TGC_REGISTER_MODEL({"attn_rmsnorm", "attention stack, RMSNorm",
                    {"tiny", "base"}, "base",
                    build<Positions::Sinusoidal, true>});
