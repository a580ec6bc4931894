// A small model that uses every op the DSL gained for today's models:
// numbers as operands, constant, iota, the activations, pow, maximum,
// minimum, the comparisons and where, reduceMin, slice, split, concat,
// gather, and an extra loss term. No dropout, so --check-gradients and the
// interpreter see the same function as the program (every-op.test).
#include "frontend/ModelRegistry.h"
#include "frontend/Ops.h"

using namespace tgc;

namespace {

constexpr int64_t kBatch = 4, kLength = 8, kVocab = 16, kWidth = 16;

void buildEveryOp(Builder &b) {
  Tensor source = b.input("source_ids", {kBatch, kLength}, DType::I32);
  Tensor targetIn = b.input("target_in_ids", {kBatch, kLength}, DType::I32);
  Tensor targetOut = b.input("target_out_ids", {kBatch, kLength}, DType::I32);
  Tensor table = b.param("embedding", {kVocab, kWidth}, Init::normal(0.3));
  Tensor w1 = b.param("w1", {kWidth, 2 * kWidth}, Init::xavierUniform());
  Tensor w2 = b.param("w2", {kWidth, kWidth}, Init::xavierUniform());
  Tensor gamma = b.param("gamma", {kWidth}, Init::ones());
  Tensor beta = b.param("beta", {kWidth}, Init::zeros());

  // The source's mean embedding, as context for every target position.
  Tensor context = reduceMean(gather(table, source, 0), {1}, true);
  // Positions 0..L-1 scaled into [0, 1).
  Tensor positions = iota({kLength, 1}, 0) / double(kLength);
  Tensor x = embedding(table, targetIn) + positions + context;

  // A gated unit from two halves of one projection.
  std::vector<Tensor> halves = split(matmul(x, w1), -1, 2);
  Tensor gate = sigmoid(halves[0]) * 0.5 + silu(halves[1]) * 0.25;
  Tensor act = gelu(halves[0]) + gelu(halves[1], /*tanhApprox=*/true) +
               tanh(gate) + 0.1 * abs(halves[1]);
  // Clipping, a leaky branch and a squared one, chosen by masks.
  Tensor clipped = minimum(maximum(act, -2.0), 2.0);
  Tensor leaky = where(greater(clipped, 0.0), clipped, 0.1 * clipped);
  Tensor squared = pow(clipped, 2.0) * lessEqual(abs(clipped), 1.0);
  Tensor mixed = leaky + 0.5 * squared - constant(0.25, {kWidth});
  // The first and second half of the features, swapped.
  Tensor swapped = concat({slice(mixed, -1, kWidth / 2, kWidth / 2),
                           slice(mixed, -1, 0, kWidth / 2)},
                          -1);
  Tensor spread = reduceMax(swapped, {2}, true) - reduceMin(swapped, {2}, true);
  Tensor h = layerNorm(x + matmul(swapped, w2) / (1.0 + spread), gamma, beta);

  LossAndTokens loss =
      crossEntropy(matmul(h, table, /*transposeB=*/true), targetOut, 0.1, 0);
  // An extra term: a small L2 penalty on w2.
  Tensor l2 = reduceSum(pow(w2, 2.0), {0, 1}) * 1e-3;
  b.setLoss(loss.loss + l2, loss.tokens);
  b.setSchedule({kWidth, 50, 1.0});
}

mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
build(mlir::MLIRContext &context, const ModelOptions &) {
  return buildGraph(context, "loss", buildEveryOp);
}

} // namespace

TGC_REGISTER_MODEL({"every_op", "every new DSL op in one small model",
                    {"tiny"}, "tiny", build});
