//===- Transformer.cpp - the Transformer, written in the tgc DSL ---------===//
//
// Post-LN encoder-decoder of "Attention Is All You Need": h-head scaled
// dot-product attention with W^O, causal decoder self-attention, cross
// attention, ReLU FFN, sinusoidal positions, one embedding matrix shared by
// source, target and the output projection (scaled by sqrt(d_model) on the
// way in), dropout on embeddings+positions and every sublayer output, and
// label-smoothed cross-entropy that ignores padding.
//
//===----------------------------------------------------------------------===//
#include "models/Transformer.h"

#include "frontend/Ops.h"

#include <cmath>
#include <string>

namespace tgc::models {

namespace {

class TransformerBuilder {
public:
  TransformerBuilder(Builder &b, const TransformerConfig &c) : b(b), c(c) {}

  void build() {
    int64_t batch = c.batch_size();
    Tensor source = b.input("source_ids", {batch, c.source_length()}, DType::I32);
    Tensor targetIn = b.input("target_in_ids", {batch, c.target_length()}, DType::I32);
    Tensor targetOut = b.input("target_out_ids", {batch, c.target_length()}, DType::I32);

    embeddingTable = b.param("embedding", {c.vocab_size(), c.d_model()},
                             Init::normal(std::pow(double(c.d_model()), -0.5)));
    // Additive [B, S] mask over source keys, used by encoder self-attention
    // and by cross-attention.
    Tensor sourcePadding = paddingMask(source, c.pad_id());

    Tensor memory = encoder(embed(source), sourcePadding);
    Tensor decoded = decoder(embed(targetIn), memory, sourcePadding);

    // Pre-softmax projection tied to the embedding: logits = y E^T.
    Tensor logits = matmul(decoded, embeddingTable, /*transposeB=*/true);
    LossAndTokens loss =
        crossEntropy(logits, targetOut, c.label_smoothing(), c.pad_id());
    b.setLoss(loss.loss, loss.tokens);
    b.setOptimizer({static_cast<float>(c.adam_beta1()),
                    static_cast<float>(c.adam_beta2()),
                    static_cast<float>(c.adam_epsilon())});
    b.setSchedule({c.d_model(), c.warmup_steps(), c.lr_factor()});
  }

private:
  /// dropout(E[ids] * sqrt(d) + PE)
  Tensor embed(Tensor ids) {
    int64_t length = ids.dim(1);
    Tensor scaled = scale(embedding(embeddingTable, ids),
                          std::sqrt(double(c.d_model())));
    return dropout(scaled + positionalEncoding(b, length, c.d_model()),
                   c.dropout());
  }

  Tensor encoder(Tensor x, Tensor sourcePadding) {
    auto scope = b.scope("encoder");
    for (int64_t i = 0; i < c.encoder_layers(); ++i) {
      auto layer = b.scope("layer" + std::to_string(i));
      Tensor attended = attention("self_attn", x, x, sourcePadding, false);
      x = residualNorm("self_attn_norm", x, attended);
      x = residualNorm("ffn_norm", x, feedForward(x));
    }
    return x;
  }

  Tensor decoder(Tensor y, Tensor memory, Tensor sourcePadding) {
    auto scope = b.scope("decoder");
    for (int64_t i = 0; i < c.decoder_layers(); ++i) {
      auto layer = b.scope("layer" + std::to_string(i));
      // Target padding sits after the sentence, so the causal mask already
      // keeps every real query off it.
      Tensor self = attention("self_attn", y, y, Tensor(), /*causal=*/true);
      y = residualNorm("self_attn_norm", y, self);
      Tensor cross = attention("cross_attn", y, memory, sourcePadding, false);
      y = residualNorm("cross_attn_norm", y, cross);
      y = residualNorm("ffn_norm", y, feedForward(y));
    }
    return y;
  }

  /// LayerNorm(x + Dropout(sublayer)), the post-LN wrapper of every sublayer.
  Tensor residualNorm(const char *name, Tensor x, Tensor sublayer) {
    auto scope = b.scope(name);
    Tensor gamma = b.param("gamma", {c.d_model()}, Init::ones());
    Tensor beta = b.param("beta", {c.d_model()}, Init::zeros());
    return layerNorm(x + dropout(sublayer, c.dropout()), gamma, beta,
                     c.layer_norm_epsilon());
  }

  /// max(0, x W1 + b1) W2 + b2
  Tensor feedForward(Tensor x) {
    auto scope = b.scope("ffn");
    Tensor w1 = b.param("w1", {c.d_model(), c.d_ff()}, Init::xavierUniform());
    Tensor b1 = b.param("b1", {c.d_ff()}, Init::zeros());
    Tensor w2 = b.param("w2", {c.d_ff(), c.d_model()}, Init::xavierUniform());
    Tensor b2 = b.param("b2", {c.d_model()}, Init::zeros());
    return matmul(relu(matmul(x, w1) + b1), w2) + b2;
  }

  /// [B, S, d] -> [B, h, S, d_k]
  Tensor splitHeads(Tensor x) {
    int64_t heads = c.num_heads(), dk = c.d_model() / heads;
    return transpose(reshape(x, {x.dim(0), x.dim(1), heads, dk}), {0, 2, 1, 3});
  }

  /// [B, h, S, d_k] -> [B, S, d]
  Tensor mergeHeads(Tensor x) {
    Tensor t = transpose(x, {0, 2, 1, 3});
    return reshape(t, {t.dim(0), t.dim(1), c.d_model()});
  }

  /// Multi-head attention: softmax(Q K^T / sqrt(d_k) + masks) V per head,
  /// heads concatenated and projected by W^O.
  Tensor attention(const char *name, Tensor queries, Tensor keysValues,
                   Tensor keyPadding, bool causal) {
    auto scope = b.scope(name);
    int64_t d = c.d_model();
    Tensor wq = b.param("w_q", {d, d}, Init::xavierUniform());
    Tensor wk = b.param("w_k", {d, d}, Init::xavierUniform());
    Tensor wv = b.param("w_v", {d, d}, Init::xavierUniform());
    Tensor wo = b.param("w_o", {d, d}, Init::xavierUniform());

    Tensor q = splitHeads(matmul(queries, wq));
    Tensor k = splitHeads(matmul(keysValues, wk));
    Tensor v = splitHeads(matmul(keysValues, wv));
    double dk = double(d / c.num_heads());
    Tensor scores = scale(matmul(q, k, /*transposeB=*/true), 1.0 / std::sqrt(dk));
    llvm::SmallVector<int64_t> scoreShape(scores.shape());
    if (keyPadding) // [B, Sk] over [B, h, Sq, Sk]
      scores = scores + broadcast(keyPadding, scoreShape, {0, 3});
    if (causal) // [T, T] over [B, h, T, T]
      scores = scores + broadcast(causalMask(b, scores.dim(2)), scoreShape, {2, 3});
    Tensor probabilities = dropout(softmax(scores, -1), c.attention_dropout());
    return matmul(mergeHeads(matmul(probabilities, v)), wo);
  }

  Builder &b;
  const TransformerConfig &c;
  Tensor embeddingTable;
};

} // namespace

void buildTransformer(Builder &b, const TransformerConfig &config) {
  TransformerBuilder(b, config).build();
}

} // namespace tgc::models
