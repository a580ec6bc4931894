//===- InitAll.cpp - the dialects, op models and passes of the tools -----===//
//
// The one place that lists what tgc, tgc-opt, the tests and the fuzzers
// register. The tg ops' concerns (ir/TgInterfaces.td) are external models
// that each owning library attaches when the dialect is loaded: without
// them a context could parse tg but not differentiate, run or emit it.
//
//===----------------------------------------------------------------------===//
#include "tools/InitAll.h"

#include "codegen/calls/KernelCallModels.h"
#include "codegen/interpreter/ops/ReferenceModels.h"
#include "ir/TgDialect.h"
#include "passes/Passes.h"
#include "passes/decoder/DecoderAxes.h"
#include "passes/gradients/Gradients.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace tgc {

void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<tg::TGDialect, mlir::func::FuncDialect>();
  registerGradientModels(registry);
  registerDecoderAxisModels(registry);
  interp::registerReferenceModels(registry);
  cpp::registerKernelCallModels(registry);
}

void registerAllPasses() {
  mlir::registerTransformsPasses();
  registerPasses();
}

} // namespace tgc
