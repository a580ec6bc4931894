//===- PlanMemory.cpp - tg-plan-memory -------------------------------------===//
#include "passes/MemoryPlan.h"
#include "passes/Passes.h"

#include "ir/TgOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace tgc {

#define GEN_PASS_DEF_TGPLANMEMORY
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

struct TgPlanMemoryPass : impl::TgPlanMemoryBase<TgPlanMemoryPass> {
  using TgPlanMemoryBase::TgPlanMemoryBase;

  void runOnOperation() override {
    if (function.empty()) {
      // Every function: what the emitters read of a compiled module.
      for (auto f : getOperation().getOps<func::FuncOp>())
        if (failed(plan(f)))
          return signalPassFailure();
      return;
    }
    auto step = getOperation().lookupSymbol<func::FuncOp>(function);
    if (!step) {
      getOperation().emitError()
          << "tg-plan-memory: no function @" << function << " to plan";
      return signalPassFailure();
    }
    if (failed(plan(step)))
      return signalPassFailure();
  }

  /// Places `step`'s intermediates and records the offsets and the report.
  LogicalResult plan(func::FuncOp step) {
    FailureOr<MemoryPlan> plan = planMemory(step);
    if (failed(plan))
      return failure();

    Builder b(&getContext());
    for (Operation &op : step.getBody().front()) {
      if (op.getNumResults() == 0)
        continue;
      SmallVector<int64_t> offsets;
      for (Value result : op.getResults())
        offsets.push_back(plan->offsets.contains(result) ? plan->offsets.lookup(result) : -1);
      op.setAttr(kArenaOffsetsAttr, b.getDenseI64ArrayAttr(offsets));
      if (llvm::isa<tg::AllReduceOp>(op))
        op.setAttr(kTokenCountOffsetAttr,
                   b.getI64IntegerAttr(plan->tokenCountOffset));
    }
    const MemoryReport &r = plan->report;
    auto entry = [&](StringRef key, int64_t value) {
      return b.getNamedAttr(key, b.getI64IntegerAttr(value));
    };
    SmallVector<NamedAttribute> entries = {
        entry("weights", r.weights),
        entry("optimizer_state", r.optimizerState),
        entry("gradients", r.gradients),
        entry("saved_activations", r.savedActivations),
        entry("scratch", r.scratch),
        entry("inputs", r.inputs),
        entry("arena", r.arena),
        entry("unplanned", r.unplanned)};
    // Only mixed-precision steps have bf16 copies to count.
    if (r.savedBf16 > 0)
      entries.push_back(entry("saved_bf16", r.savedBf16));
    step->setAttr(kMemoryAttr, b.getDictionaryAttr(entries));
    if (report)
      step.emitRemark() << "tg-plan-memory:\n" << r.format();
    return success();
  }
};

} // namespace
} // namespace tgc
