// Mistakes the DSL reports at this file's line, not as a crash: a Tensor
// used before it is set (in an operator with a number, as a norm's gamma)
// and a dimension past the rank. One preset each.
#include "frontend/ModelRegistry.h"
#include "frontend/Ops.h"

using namespace tgc;

static mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
build(mlir::MLIRContext &context, const ModelOptions &options) {
  return buildGraph(context, "loss", [&](Builder &b) {
    Tensor ids = b.input("source_ids", {4, 8}, DType::I32);
    Tensor table = b.param("embedding", {16, 32}, Init::normal(0.1));
    Tensor x = embedding(table, ids);
    Tensor unset;
    if (options.preset == "plus")
      x = unset + 1.0;
    else if (options.preset == "norm")
      x = layerNorm(x, unset, unset, 1e-5);
    else
      x = reshape(x, {x.dim(5), 8});
    (void)x;
  });
}

TGC_REGISTER_MODEL({"unset_tensor", "mistakes reported at their line",
                    {"plus", "norm", "dim"}, "plus", build});
