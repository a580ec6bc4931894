//===- KernelCallModels.cpp - registering and calling the writers --------===//
//
// The writers are external models of tg::KernelCallOpInterface, so the ops
// say how they are written and the emitter asks the op instead of a table
// keyed by op class. The families attach them when the tg dialect loads.
//
//===----------------------------------------------------------------------===//
#include "codegen/calls/KernelCallModels.h"
#include "codegen/calls/KernelArgs.h"

#include "ir/TgOps.h"

using namespace mlir;

namespace tgc::cpp {

void registerKernelCallModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, tg::TGDialect *) {
    attachGemmCalls(*context);
    attachTensorCalls(*context);
    attachNormCalls(*context);
    attachAttentionCalls(*context);
    attachLossCalls(*context);
    attachStateCalls(*context);
    attachAdamCalls(*context);
  });
}

LogicalResult emitKernelCall(Operation *op, EmitContext &context,
                             raw_ostream &os) {
  auto call = llvm::dyn_cast<tg::KernelCallOpInterface>(op);
  if (!call)
    return op->emitOpError() << "is not supported by the C++ emitter";
  KernelArgs p(context);
  FailureOr<std::string> code = call.writeKernelCall(p, context);
  if (failed(code) || !p.ok)
    return failure();
  os << *code;
  return success();
}

} // namespace tgc::cpp
