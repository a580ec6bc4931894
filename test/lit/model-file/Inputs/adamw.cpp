// A model trained with AdamW (weight decay 0.05 by default) whose
// parameters show each case of adamw.test: matrices that decay, one marked
// not to, the embedding table, a bias and a LayerNorm (no decay by rule),
// and a frozen matrix (no gradient, no moments, no update). No dropout, so
// the interpreter runs the program's function.
#include "frontend/ModelRegistry.h"
#include "frontend/Ops.h"

using namespace tgc;

namespace {

constexpr int64_t kBatch = 4, kLength = 8, kVocab = 16, kWidth = 16;

void buildAdamW(Builder &b) {
  Tensor source = b.input("source_ids", {kBatch, kLength}, DType::I32);
  b.input("target_in_ids", {kBatch, kLength}, DType::I32);
  Tensor targetOut = b.input("target_out_ids", {kBatch, kLength}, DType::I32);
  Tensor table = b.param("embedding", {kVocab, kWidth}, Init::normal(0.3));
  Tensor frozen = b.param("frozen", {kWidth, kWidth}, Init::xavierUniform(),
                          ParamOptions{.frozen = true});
  Tensor w1 = b.param("ffn.w1", {kWidth, kWidth}, Init::xavierUniform());
  Tensor b1 = b.param("ffn.b1", {kWidth}, Init::zeros());
  Tensor w2 = b.param("ffn.w2", {kWidth, kWidth}, Init::xavierUniform(),
                      ParamOptions{.weightDecay = false});
  Tensor gamma = b.param("norm.gamma", {kWidth}, Init::ones());
  Tensor beta = b.param("norm.beta", {kWidth}, Init::zeros());
  Tensor x = matmul(embedding(table, source), frozen);
  x = x + matmul(relu(matmul(x, w1) + b1), w2);
  Tensor h = layerNorm(x, gamma, beta);
  LossAndTokens loss =
      crossEntropy(matmul(h, table, /*transposeB=*/true), targetOut, 0.0, 0);
  b.setLoss(loss.loss, loss.tokens);
  b.setSchedule({kWidth, 4, 1.0});
  AdamConfig adam;
  adam.weightDecay = 0.05f;
  b.setOptimizer(adam);
}

mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
build(mlir::MLIRContext &context, const ModelOptions &) {
  return buildGraph(context, "loss", buildAdamW);
}

} // namespace

TGC_REGISTER_MODEL({"adamw", "AdamW, parameters that decay or not, frozen",
                    {"tiny"}, "tiny", build});
