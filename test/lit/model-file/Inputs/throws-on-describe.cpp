// Registers a model that builds, but whose config description (what the
// program's manifest records) throws.
#include "frontend/ModelRegistry.h"
#include "frontend/Ops.h"

#include <stdexcept>

using namespace tgc;

static mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
build(mlir::MLIRContext &context, const ModelOptions &options) {
  const int64_t B = options.batchSize ? options.batchSize : 2;
  const int64_t T = options.targetLength ? options.targetLength : 4;
  const int64_t V = options.vocabulary ? options.vocabulary : 8, D = 8;
  return buildGraph(context, "loss", [&](Builder &b) {
    Tensor in = b.input("target_in_ids", {B, T}, DType::I32);
    Tensor out = b.input("target_out_ids", {B, T}, DType::I32);
    Tensor table = b.param("embedding", {V, D}, Init::normal(0.1));
    LossAndTokens ce =
        crossEntropy(matmul(embedding(table, in), table, true), out, 0.0, 0);
    b.setLoss(ce.loss, ce.tokens);
    b.setSchedule({D, 10, 1.0});
  });
}

static std::string describe(mlir::MLIRContext &, const ModelOptions &) {
  throw std::runtime_error("no description today");
}

TGC_REGISTER_MODEL({"throws-describing", "throws while describing its config",
                    {"tiny"}, "tiny", build, describe});
