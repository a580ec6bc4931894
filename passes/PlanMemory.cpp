//===- PlanMemory.cpp - tg-plan-memory -------------------------------------===//
#include "passes/MemoryPlan.h"
#include "passes/Passes.h"

#include "ir/TgOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringMap.h"

namespace tgc {

#define GEN_PASS_DEF_TGPLANMEMORY
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

/// The first reader of `value`, or of a view of it, that comes after
/// `writer` in its block (nested readers count at their op), or null.
Operation *readAfter(Value value, Operation *writer) {
  Block *block = writer->getBlock();
  SmallVector<Value> values = {value};
  while (!values.empty()) {
    Value v = values.pop_back_val();
    for (Operation *user : v.getUsers()) {
      Operation *reader = block->findAncestorOpInBlock(*user);
      if (!reader || reader == writer)
        continue;
      if (writer->isBeforeInBlock(reader))
        return user;
      if (reader->hasTrait<tg::traits::ResultIsView>())
        values.push_back(reader->getResult(0));
    }
  }
  return nullptr;
}

/// The variables `op` writes: the symbols it names, if it writes memory
/// (tg.store, tg.store_slice, the optimizer's updates).
SmallVector<StringRef> variablesWrittenBy(Operation *op) {
  SmallVector<StringRef> names;
  auto effects = llvm::dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects || !effects.hasEffect<MemoryEffects::Write>())
    return names;
  for (NamedAttribute attr : op->getAttrs()) {
    if (auto symbol = llvm::dyn_cast<FlatSymbolRefAttr>(attr.getValue()))
      names.push_back(symbol.getValue());
    if (auto array = llvm::dyn_cast<ArrayAttr>(attr.getValue()))
      for (Attribute element : array)
        if (auto symbol = llvm::dyn_cast<FlatSymbolRefAttr>(element))
          names.push_back(symbol.getValue());
  }
  return names;
}

/// A compiled step reads a tg.load's value in the variable's own bytes and
/// sums tg.all_reduce's operands where they are: a read of either after
/// the write (a tg.store to the variable, the sum) would see the new bytes
/// where the IR means the old ones (the interpreter copies), so it is
/// refused, naming both ops.
LogicalResult checkReadsAfterOverwrite(func::FuncOp function) {
  if (function.getBody().empty())
    return success();
  Block &block = function.getBody().front();
  llvm::StringMap<SmallVector<tg::LoadOp>> loads;
  for (Operation &op : block) {
    if (auto load = llvm::dyn_cast<tg::LoadOp>(op)) {
      loads[load.getVariable()].push_back(load);
      continue;
    }
    for (StringRef name : variablesWrittenBy(&op))
      for (tg::LoadOp load : loads.lookup(name))
        if (Operation *reader = readAfter(load.getResult(), &op)) {
          InFlightDiagnostic error =
              reader->emitError()
              << "reads the value of @" << name << " loaded at "
              << load.getLoc() << " after " << op.getName()
              << " wrote @" << name
              << ": a compiled step reads a loaded variable in place; read "
                 "it before the write or load it again after";
          error.attachNote(op.getLoc()) << "the write";
          return failure();
        }
    if (op.hasTrait<tg::traits::ResultsOverwriteOperands>())
      for (Value operand : op.getOperands()) {
        if (Operation *reader = readAfter(tg::viewSource(operand), &op)) {
          InFlightDiagnostic error =
              reader->emitError()
              << "reads a value that " << op.getName()
              << " overwrote in place (its result); read the result instead";
          error.attachNote(op.getLoc()) << "the overwrite";
          return failure();
        }
      }
  }
  return success();
}

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
    if (failed(checkReadsAfterOverwrite(step)))
      return failure();
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
