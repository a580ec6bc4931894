// A decoder-only model with a learned position table added to its token
// embeddings (as GPT-2's), neither marked: the token table is an embedding
// (no weight decay by rule), the position table a matrix the step adds
// (decayed). The incremental decoder reads the position table at the
// step's position (a gather in @decode_step, derived before tg-adam in a
// compiled program): that read must not change the rule.
#include "frontend/ModelRegistry.h"
#include "frontend/Ops.h"

using namespace tgc;

namespace {

constexpr int64_t kBatch = 4, kLength = 8, kVocab = 16, kWidth = 16;

void buildLearnedPositions(Builder &b) {
  Tensor tokens = b.input("target_in_ids", {kBatch, kLength}, DType::I32);
  Tensor next = b.input("target_out_ids", {kBatch, kLength}, DType::I32);
  Tensor table = b.param("tokens", {kVocab, kWidth}, Init::normal(0.3));
  Tensor positions = b.param("positions", {kLength, kWidth}, Init::normal(0.1));
  Tensor out = b.param("out", {kWidth, kVocab}, Init::xavierUniform());
  Tensor x = embedding(table, tokens) + positions;
  LossAndTokens loss = crossEntropy(matmul(x, out), next, 0.0, 0);
  b.setLoss(loss.loss, loss.tokens);
  b.setSchedule({kWidth, 4, 1.0});
  AdamConfig adam;
  adam.weightDecay = 0.1f;
  b.setOptimizer(adam);
}

mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
build(mlir::MLIRContext &context, const ModelOptions &) {
  return buildGraph(context, "loss", buildLearnedPositions);
}

} // namespace

TGC_REGISTER_MODEL({"learned-positions",
                    "a learned position table beside an embedding",
                    {"tiny"}, "tiny", build});
