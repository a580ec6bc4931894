//===- OpConcerns.cpp - which op needs which concern ---------------------===//
#include "ir/OpConcerns.h"

#include "ir/TgOps.h"

using namespace mlir;

namespace tgc::tg {

std::vector<MissingConcern> missingOpConcerns(MLIRContext &context) {
  context.getOrLoadDialect<TGDialect>();
  std::vector<MissingConcern> missing;
  for (RegisteredOperationName op : context.getRegisteredOperations()) {
    if (op.getDialectNamespace() != TGDialect::getDialectNamespace())
      continue;
    auto lacks = [&](const char *concern, const char *home) {
      missing.push_back({op.getStringRef().str(), concern, home});
    };
    // Declarations (tg.variable) and terminators (tg.yield, read by the
    // group that holds it) are not executed or emitted on their own.
    bool standalone = !op.hasTrait<OpTrait::IsTerminator>() &&
                      !op.hasInterface<SymbolOpInterface>();

    // Every op has a gradient rule or says why it has none.
    if (!op.hasInterface<GradientOpInterface>())
      lacks("GradientOpInterface", "passes/gradients/");
    if (standalone && !op.hasInterface<ReferenceOpInterface>())
      lacks("ReferenceOpInterface", "codegen/interpreter/ops/");
    // The emitters write an elementwise loop, nothing (views, state and
    // constants) or a kernel call.
    bool loop = op.hasTrait<traits::ElementwiseLoop>();
    bool noCode = op.hasTrait<traits::ResultIsView>() ||
                  op.hasTrait<traits::ResultOutsideArena>();
    if (standalone && !loop && !noCode &&
        !op.hasInterface<KernelCallOpInterface>())
      lacks("KernelCallOpInterface", "codegen/calls/");
    // What may be in @predict (a differentiable forward op) says how it
    // runs one position at a time, or why it cannot; elementwise ops keep
    // the axis where it is.
    auto *gradient = op.getInterface<GradientOpInterface>();
    bool forward = gradient && !gradient->getNoGradientReason();
    if (forward && !op.hasTrait<OpTrait::Elementwise>() &&
        !op.hasInterface<DecoderAxesOpInterface>())
      lacks("DecoderAxesOpInterface", "passes/decoder/");
    // Elementwise ops run as loops, which may write over a dying operand:
    // the in-place rule of tg-plan-memory.
    if (op.hasTrait<OpTrait::Elementwise>() && !loop)
      lacks("the ElementwiseLoop trait", "ir/TgBase.td");
  }
  return missing;
}

} // namespace tgc::tg
