// Misuses of the DSL that are errors at this file's line (or, for a build
// that fails silently, a message naming the model), one preset each: each
// once crashed, exited 0, or gave an error without a line.
#include "frontend/ModelRegistry.h"
#include "frontend/Ops.h"

#include <cstdint>
#include <limits>

using namespace tgc;

static mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
build(mlir::MLIRContext &context, const ModelOptions &options) {
  const std::string &p = options.preset;
  if (p == "silent")
    return mlir::failure();
  if (p == "outside")
    (void)constant(1.0, {2});
  return buildGraph(context, p == "not-loss" ? "train" : "loss", [&](Builder &b) {
    Tensor in = b.input("target_in_ids", {4, 8}, DType::I32);
    Tensor out = b.input("target_out_ids", {4, 8}, DType::I32);
    Tensor table = b.param("embedding", {16, 32}, Init::normal(0.1));
    Tensor x = embedding(table, in);
    Tensor unset;
    if (p == "negative")
      x = broadcastTo(reshape(x, {4, 8, 32, 1}), {4, 8, 32, -5});
    if (p == "slice")
      x = slice(x, -1, 1, std::numeric_limits<int64_t>::max());
    if (p == "caught")
      try {
        x = reshape(x, {3, 7});
      } catch (...) {
      }
    if (p == "dtype")
      (void)unset.dtype();
    if (p == "empty")
      (void)b.param("", {4}, Init::zeros());
    if (p == "scope")
      auto s = b.scope("");
    if (p == "beta")
      b.setOptimizer({1.5f, 0.98f, 1e-9f, 0.0f});
    WarmupSchedule schedule{32, 100};
    if (p == "peak") {
      schedule.kind = LrScheduler::Cosine;
      schedule.peak = 1e-3;
      schedule.minimum = 2e-3;
    }
    b.setSchedule(schedule);
    Tensor logits = matmul(x, table, /*transposeB=*/true);
    auto [loss, tokens] = crossEntropy(logits, out, 0.1, p == "ignore-other" ? -100 : 0);
    b.setLoss(loss, tokens);
    if (p == "adam-name")
      (void)b.param("adam.m.embedding", {16, 32}, Init::zeros());
    if (p == "huge-init")
      x = x * reduceMean(b.param("huge", {4}, Init::normal(1e300)), {0});
    if (p == "loss-twice")
      b.setLoss(loss, tokens);
    if (p == "nested")
      (void)buildGraph(context, "inner", [](Builder &) {});
    static Tensor kept; // kept from the build of an earlier bucket
    if (p == "stale" && kept)
      x = x + kept;
    kept = x;
    if (p == "extra-input")
      x = x + reduceMean(b.input("source_extra", {4, 8}, DType::F32), {0, 1});
    if (p == "reduce-min-ids")
      (void)reduceMin(in, {1});
    if (p == "reduce-min-dims")
      (void)reduceMin(x, {});
    if (p == "split-ids")
      (void)split(in, 1, 2);
  });
}

TGC_REGISTER_MODEL({"misuse", "DSL misuses reported at their line",
                    {"silent", "outside", "negative", "slice", "caught", "dtype",
                     "empty", "scope", "beta", "peak", "adam-name", "huge-init",
                     "extra-input", "not-loss", "loss-twice", "nested",
                     "stale", "reduce-min-ids", "reduce-min-dims", "split-ids",
                     "ignore-other"},
                    "negative", build});
