//===- LossParts.cpp - the cross-entropy inside a model's loss -----------===//
#include "passes/LossParts.h"

using namespace mlir;

namespace tgc {

tg::CrossEntropyOp modelCrossEntropy(Value loss) {
  SmallVector<tg::CrossEntropyOp> found;
  SmallVector<Value> pending{loss};
  while (!pending.empty() && found.size() < 2) {
    Value v = pending.pop_back_val();
    Operation *op = v.getDefiningOp();
    if (auto ce = llvm::dyn_cast_or_null<tg::CrossEntropyOp>(op)) {
      if (v == ce.getLoss() && !llvm::is_contained(found, ce))
        found.push_back(ce);
    } else if (llvm::isa_and_nonnull<tg::AddOp, tg::SubOp>(op)) {
      pending.append(op->operand_begin(), op->operand_end());
    } else if (auto scale = llvm::dyn_cast_or_null<tg::ScaleOp>(op)) {
      pending.push_back(scale.getInput());
    }
  }
  return found.size() == 1 ? found.front() : tg::CrossEntropyOp();
}

} // namespace tgc
