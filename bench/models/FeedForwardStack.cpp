//===- FeedForwardStack.cpp - FFN blocks with each activation, for bench/ -===//
//
// A stack of post-LN feed-forward blocks, x = LayerNorm(x + FFN(x)) with
// FFN(x) = act(x W1 + b1) W2 + b2, over embeddings of the target, with the
// tied output projection: the model of `bench/activations.py`, registered
// once per activation (ffn_relu, ffn_gelu, ffn_gelu_tanh, ffn_silu) so that
// the only difference between two programs is the activation. Presets:
// `base` is the paper's FFN (d_model 512, d_ff 2048) over 32 x 64 tokens.
//
//===----------------------------------------------------------------------===//
#include "frontend/ModelRegistry.h"
#include "frontend/Ops.h"

#include <cmath>
#include <string>

using namespace tgc;

namespace {

struct Shape {
  int64_t vocab, dModel, dFF, layers, batch, length;
};

Shape shapeOf(const ModelOptions &options) {
  Shape s = options.preset == "tiny" ? Shape{16, 32, 64, 2, 4, 8}
                                     : Shape{1000, 512, 2048, 4, 32, 64};
  if (options.batchSize)
    s.batch = options.batchSize;
  if (options.targetLength)
    s.length = options.targetLength;
  if (options.vocabulary)
    s.vocab = options.vocabulary;
  return s;
}

template <Tensor (*Activation)(Tensor)>
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
build(mlir::MLIRContext &context, const ModelOptions &options) {
  Shape s = shapeOf(options);
  return buildGraph(context, "loss", [&](Builder &b) {
    b.input("source_ids", {s.batch, s.length}, DType::I32);
    Tensor targetIn = b.input("target_in_ids", {s.batch, s.length}, DType::I32);
    Tensor targetOut =
        b.input("target_out_ids", {s.batch, s.length}, DType::I32);
    Tensor table = b.param("embedding", {s.vocab, s.dModel},
                           Init::normal(std::pow(double(s.dModel), -0.5)));
    Tensor x = scale(embedding(table, targetIn), std::sqrt(double(s.dModel)));
    for (int64_t i = 0; i < s.layers; ++i) {
      auto scope = b.scope("layer" + std::to_string(i));
      Tensor w1 = b.param("w1", {s.dModel, s.dFF}, Init::xavierUniform());
      Tensor b1 = b.param("b1", {s.dFF}, Init::zeros());
      Tensor w2 = b.param("w2", {s.dFF, s.dModel}, Init::xavierUniform());
      Tensor b2 = b.param("b2", {s.dModel}, Init::zeros());
      Tensor gamma = b.param("gamma", {s.dModel}, Init::ones());
      Tensor beta = b.param("beta", {s.dModel}, Init::zeros());
      Tensor hidden = Activation(matmul(x, w1) + b1);
      x = layerNorm(x + dropout(matmul(hidden, w2) + b2, 0.1), gamma, beta);
    }
    LossAndTokens loss = crossEntropy(matmul(x, table, /*transposeB=*/true),
                                      targetOut, 0.1, 0);
    b.setLoss(loss.loss, loss.tokens);
    b.setSchedule({s.dModel, 4000, 1.0});
  });
}

Tensor reluOf(Tensor x) { return relu(x); }
Tensor geluOf(Tensor x) { return gelu(x); }
Tensor geluTanhOf(Tensor x) { return gelu(x, /*tanhApprox=*/true); }
Tensor siluOf(Tensor x) { return silu(x); }

} // namespace

TGC_REGISTER_MODEL({"ffn_relu", "FFN stack, ReLU", {"tiny", "base"}, "base",
                    build<reluOf>});
TGC_REGISTER_MODEL({"ffn_gelu", "FFN stack, GELU (erf)", {"tiny", "base"},
                    "base", build<geluOf>});
TGC_REGISTER_MODEL({"ffn_gelu_tanh", "FFN stack, GELU (tanh)",
                    {"tiny", "base"}, "base", build<geluTanhOf>});
TGC_REGISTER_MODEL({"ffn_silu", "FFN stack, SiLU", {"tiny", "base"}, "base",
                    build<siluOf>});
