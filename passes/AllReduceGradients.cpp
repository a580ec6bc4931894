//===- AllReduceGradients.cpp - tg-all-reduce-gradients -------------------===//
//
// Data parallelism in the graph: the optimizer step reads the gradients
// summed over every process (tg.all_reduce), so the emitted step reduces
// them between the backward and Adam.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "ir/TgOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace tgc {

#define GEN_PASS_DEF_TGALLREDUCEGRADIENTS
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

struct TgAllReduceGradientsPass
    : impl::TgAllReduceGradientsBase<TgAllReduceGradientsPass> {
  using TgAllReduceGradientsBase::TgAllReduceGradientsBase;

  void runOnOperation() override {
    unsigned reduced = 0;
    getOperation().walk([&](tg::MultiAdamUpdateOp update) {
      // A constant gradient is the same in every process: nothing to sum.
      SmallVector<unsigned> positions;
      SmallVector<Value> gradients;
      for (auto [i, grad] : llvm::enumerate(update.getGrads())) {
        if (grad.getDefiningOp<tg::ConstantOp>() ||
            grad.getDefiningOp<tg::AllReduceOp>())
          continue;
        positions.push_back(i);
        gradients.push_back(grad);
      }
      if (gradients.empty())
        return;
      OpBuilder b(update);
      auto sums = b.create<tg::AllReduceOp>(update.getLoc(), gradients);
      unsigned firstGrad = update.getGrads().getBeginOperandIndex();
      for (auto [position, sum] : llvm::zip(positions, sums.getResults()))
        update->setOperand(firstGrad + position, sum);
      reduced += gradients.size();
    });
    numReduced = reduced;
  }
};

} // namespace
} // namespace tgc
