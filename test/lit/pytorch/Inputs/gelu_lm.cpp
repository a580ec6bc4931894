// A language model whose GELU sees inputs of order 1 (a standard deviation
// of about 3), where tanh-GELU (GPT-2's) and erf-GELU differ by up to 4.7e-4
// (near 2.7); the examples' 0.02 initialization leaves their GELU inputs
// near 0, where the two agree to 1e-7. Token embeddings, a linear layer with
// a bias and the GELU of the preset (tanh or erf), a linear layer to the
// logits; no attention, no weight decay. gelu.test checks both forms
// against PyTorch's.
#include "frontend/ModelRegistry.h"
#include "frontend/Ops.h"

using namespace tgc;

namespace {

mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
buildModel(mlir::MLIRContext &context, const ModelOptions &options) {
  const bool tanhForm = options.preset != "erf";
  const int64_t batch = options.batchSize ? options.batchSize : 8,
                length = options.targetLength ? options.targetLength : 16,
                vocab = options.vocabulary ? options.vocabulary : 16,
                width = 32, hidden = 64;
  return buildGraph(context, "loss", [&](Builder &b) {
    Tensor tokens = b.input("target_in_ids", {batch, length}, DType::I32);
    Tensor next = b.input("target_out_ids", {batch, length}, DType::I32);
    Tensor x = embedding(b.param("table", {vocab, width}, Init::normal(1.0)), tokens);
    Tensor h = gelu(matmul(x, b.param("w1", {width, hidden}, Init::normal(0.5))) +
                        b.param("b1", {hidden}, Init::normal(0.5)),
                    tanhForm);
    Tensor logits = matmul(h, b.param("w2", {hidden, vocab}, Init::normal(0.2)));
    LossAndTokens loss = crossEntropy(logits, next, /*smoothing=*/0.0, /*ignoreIndex=*/0);
    b.setLoss(loss.loss, loss.tokens);
    b.setOptimizer({0.9f, 0.95f, 1e-8f, 0.0f});
    WarmupSchedule schedule;
    schedule.dModel = width;
    schedule.warmupSteps = 1;
    schedule.kind = LrScheduler::Constant;
    schedule.peak = 1e-3;
    schedule.minimum = 1e-4;
    b.setSchedule(schedule);
  });
}

} // namespace

TGC_REGISTER_MODEL({"gelu-lm", "a GELU layer at inputs of order 1 (gelu.test)",
                    {"tanh", "erf"}, "tanh", buildModel});
