// A model whose FFN multiplies [4, 8, 32] by a [16, 32] matrix: the DSL
// reports the matmul's line in this file.
#include "frontend/ModelRegistry.h"
#include "frontend/Ops.h"

using namespace tgc;

static mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
build(mlir::MLIRContext &context, const ModelOptions &) {
  return buildGraph(context, "loss", [](Builder &b) {
    Tensor ids = b.input("source_ids", {4, 8}, DType::I32);
    Tensor table = b.param("embedding", {16, 32}, Init::normal(0.1));
    Tensor x = embedding(table, ids);
    Tensor w = b.param("w", {16, 32}, Init::xavierUniform());
    Tensor y = matmul(x, w);
    (void)y;
  });
}

TGC_REGISTER_MODEL({"shape_error", "a matmul of mismatched shapes", {"tiny"},
                    "tiny", build});
