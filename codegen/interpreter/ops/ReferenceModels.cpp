//===- ReferenceModels.cpp - registers the interpreter's op models -------===//
//
// The tg ops' models are attached when the tg dialect is loaded, family by
// family; func.return's, which collects the function's results, when the
// func dialect is. tg.yield has no model: its parent reads it.
//
//===----------------------------------------------------------------------===//
#include "codegen/interpreter/ops/ReferenceModels.h"
#include "codegen/interpreter/ops/OpSupport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;

namespace tgc::interp {
namespace {

LogicalResult funcReturn(Executor &x, func::ReturnOp o) {
  for (Value v : o.getOperands())
    x.results.push_back(x.get(v));
  return success();
}

} // namespace

void registerReferenceModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, tg::TGDialect *) {
    attachStateReference(context);
    attachElementwiseReference(context);
    attachTensorReference(context);
    attachGemmReference(context);
    attachNormReference(context);
    attachAttentionReference(context);
    attachLossReference(context);
    attachAdamReference(context);
  });
  registry.addExtension(+[](MLIRContext *context, func::FuncDialect *) {
    func::ReturnOp::attachInterface<ReferenceModel<func::ReturnOp, funcReturn>>(
        *context);
  });
}

} // namespace tgc::interp
