//===- DataParallel.cpp - all-reduce calls, dropout offsets ---------------===//
#include "codegen/lowering/DataParallel.h"

#include "passes/MemoryPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <algorithm>
#include <vector>

using namespace mlir;

namespace tgc::cpp {

FailureOr<std::string> allReduceCalls(tg::AllReduceOp op) {
  // The sums share their operands' bytes (tg-plan-memory), so the op's own
  // offsets say where the operands lie.
  auto offsets = op->getAttrOfType<DenseI64ArrayAttr>(kArenaOffsetsAttr);
  if (!offsets || offsets.size() != static_cast<int64_t>(op.getNumResults()))
    return op.emitOpError()
           << "has no arena offsets (run tg-plan-memory before emitting)";
  struct Run {
    int64_t begin, end; ///< bytes
  };
  std::vector<Run> runs;
  for (auto [i, sum] : llvm::enumerate(op.getSums())) {
    if (offsets[i] < 0)
      return op.emitOpError()
             << "operand #" << i
             << " does not live in the arena (an input, a variable or a "
                "constant); only computed gradients can be all-reduced";
    int64_t bytes =
        llvm::cast<RankedTensorType>(sum.getType()).getNumElements() * 4;
    runs.push_back({offsets[i], offsets[i] + bytes});
  }
  // Runs separated by no more than the alignment padding merge: the padding
  // is summed too, and nothing reads it.
  std::sort(runs.begin(), runs.end(),
            [](const Run &a, const Run &b) { return a.begin < b.begin; });
  std::vector<Run> merged;
  for (const Run &run : runs) {
    if (!merged.empty() && run.begin <= (merged.back().end + kArenaAlignment - 1) /
                                            kArenaAlignment * kArenaAlignment)
      merged.back().end = std::max(merged.back().end, run.end);
    else
      merged.push_back(run);
  }
  // The token count slot the plan put right after the gradients ends the
  // one run that is summed: gradients and tokens in one call.
  auto slot = op->getAttrOfType<IntegerAttr>(kTokenCountOffsetAttr);
  if (!slot || slot.getInt() < 0)
    return op.emitOpError()
           << "has no token count slot (run tg-plan-memory before emitting)";
  const int64_t slotOffset = slot.getInt();
  if (merged.size() != 1 || slotOffset < merged[0].end ||
      slotOffset - merged[0].end >= kArenaAlignment)
    return op.emitOpError()
           << "sums gradients that do not lie in one run of the arena ending "
              "at the token count slot (byte "
           << slotOffset << "): tg-plan-memory lays them out so";
  const int64_t floats = (slotOffset - merged[0].begin) / 4 + 1;
  return std::string("  // This process's gradients and, in the float after "
                     "them, its target tokens:\n") +
         "  // summed over the data-parallel processes in one call, in place "
         "(no call\n  // in one process).\n  if (f.allReduceSum)\n"
         "    f.allReduceSum(f, F(f, " + std::to_string(merged[0].begin) +
         "), " + std::to_string(floats) + ");\n";
}

namespace {

/// Each updated parameter and its gradient's byte offset from the start of
/// the region the all-reduce sums, in the optimizer step's order; empty
/// without an all-reduce.
std::vector<std::pair<std::string, int64_t>> gradientLayout(func::FuncOp step,
                                                            Operation *&reduce) {
  std::vector<std::pair<std::string, int64_t>> layout;
  step.walk([&](tg::MultiAdamUpdateOp update) {
    int64_t start = -1;
    for (auto [param, grad] : llvm::zip(update.getParams(), update.getGrads())) {
      auto sums = grad.getDefiningOp<tg::AllReduceOp>();
      if (!sums)
        continue;
      reduce = sums;
      auto offsets = sums->getAttrOfType<DenseI64ArrayAttr>(kArenaOffsetsAttr);
      if (!offsets)
        continue;
      int64_t offset = offsets[llvm::cast<OpResult>(grad).getResultNumber()];
      if (start < 0)
        for (int64_t o : offsets.asArrayRef())
          start = start < 0 ? o : std::min(start, o);
      layout.push_back(
          {llvm::cast<FlatSymbolRefAttr>(param).getValue().str(), offset - start});
    }
  });
  return layout;
}

} // namespace

LogicalResult checkSameGradientLayout(func::FuncOp first, func::FuncOp step) {
  Operation *firstReduce = nullptr, *reduce = nullptr;
  auto expected = gradientLayout(first, firstReduce);
  auto layout = gradientLayout(step, reduce);
  if (expected == layout)
    return success();
  Operation *at = reduce ? reduce : step.getOperation();
  for (size_t i = 0; i < std::min(expected.size(), layout.size()); ++i)
    if (expected[i] != layout[i])
      return at->emitError()
             << "this bucket sums the gradient of @" << layout[i].first
             << " at byte " << layout[i].second
             << " of its gradient region, the first bucket that of @"
             << expected[i].first << " at byte " << expected[i].second
             << ": processes in different buckets would add different "
                "parameters' gradients";
  return at->emitError() << "this bucket sums " << layout.size()
                         << " gradients, the first bucket " << expected.size();
}

std::string dropoutIndexOffset(Operation *op, int64_t elements) {
  auto function = op->getParentOfType<func::FuncOp>();
  if (!function)
    return "0";
  for (unsigned i = 0; i < function.getNumArguments(); ++i) {
    auto name = function.getArgAttrOfType<StringAttr>(i, "tg.name");
    if (!name || (name.getValue() != "source_ids" &&
                  name.getValue() != "target_in_ids"))
      continue;
    auto type = llvm::dyn_cast<RankedTensorType>(function.getArgument(i).getType());
    if (!type || type.getRank() == 0 || type.getShape()[0] <= 0 ||
        elements % type.getShape()[0] != 0)
      return "0";
    return "uint64_t(f.firstExample) * " +
           std::to_string(elements / type.getShape()[0]) + "u";
  }
  return "0";
}

bool isStepDropoutKey(Value key) {
  auto arg = llvm::dyn_cast<BlockArgument>(key);
  if (!arg)
    return false;
  auto function = llvm::dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  auto name = function ? function.getArgAttrOfType<StringAttr>(
                             arg.getArgNumber(), "tg.name")
                       : StringAttr();
  return name && name.getValue() == "dropout_key";
}

} // namespace tgc::cpp
