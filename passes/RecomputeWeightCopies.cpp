//===- RecomputeWeightCopies.cpp - tg-recompute-weight-copies -----------===//
#include "passes/Passes.h"

#include "ir/TgOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace tgc {

#define GEN_PASS_DEF_TGRECOMPUTEWEIGHTCOPIES
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

struct RecomputeWeightCopiesPass
    : public impl::TgRecomputeWeightCopiesBase<RecomputeWeightCopiesPass> {
  void runOnOperation() override {
    int64_t recomputed = 0;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.getBody().empty())
        continue;
      Block &block = func.getBody().front();
      auto ret = llvm::dyn_cast<func::ReturnOp>(block.getTerminator());
      Operation *loss = ret && ret.getNumOperands() > 0
                            ? ret.getOperand(0).getDefiningOp()
                            : nullptr;
      if (!loss || loss->getBlock() != &block)
        continue;
      SmallVector<tg::ToBf16Op> copies;
      for (auto copy : block.getOps<tg::ToBf16Op>())
        if (copy.getInput().getDefiningOp<tg::LoadOp>() &&
            copy->isBeforeInBlock(loss))
          copies.push_back(copy);
      for (tg::ToBf16Op copy : copies) {
        // The backward's readers, in program order; a reader inside a
        // region counts where its op at the block's level is.
        SmallVector<OpOperand *> backward;
        Operation *first = nullptr;
        for (OpOperand &use : copy->getUses()) {
          Operation *reader = block.findAncestorOpInBlock(*use.getOwner());
          if (!reader || !loss->isBeforeInBlock(reader))
            continue;
          backward.push_back(&use);
          if (!first || reader->isBeforeInBlock(first))
            first = reader;
        }
        if (backward.empty() ||
            backward.size() == static_cast<size_t>(std::distance(
                                   copy->use_begin(), copy->use_end())))
          continue; // read on one side of the loss only: nothing to gain
        OpBuilder builder(first);
        Operation *again = builder.clone(*copy);
        for (OpOperand *use : backward)
          use->set(again->getResult(0));
        ++recomputed;
      }
    }
    numRecomputed = recomputed;
  }
};

} // namespace
} // namespace tgc
