//===- SoftmaxLastAxis.cpp - tg-softmax-last-axis -------------------------===//
//
// The kernels (CPU and CUDA) normalize rows: the last axis. A softmax over
// another axis becomes one over the last between two transposes that swap
// that axis with the last (a swap is its own inverse), so every target runs
// it; the gradient (tg.softmax_grad, after autodiff) likewise. Transposes
// move values without rounding: the results are the interpreter's, bit for
// bit.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "ir/TgOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <numeric>

namespace tgc {

#define GEN_PASS_DEF_TGSOFTMAXLASTAXIS
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

/// The permutation that swaps `axis` with the last of `rank` dimensions.
SmallVector<int64_t> swapWithLast(int64_t axis, int64_t rank) {
  SmallVector<int64_t> permutation(rank);
  std::iota(permutation.begin(), permutation.end(), 0);
  std::swap(permutation[axis], permutation[rank - 1]);
  return permutation;
}

/// `value` with its dimensions permuted (at `loc`, the softmax's line).
Value transposed(OpBuilder &b, Location loc, Value value,
                 ArrayRef<int64_t> permutation) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : permutation)
    shape.push_back(type.getDimSize(p));
  return b.create<tg::TransposeOp>(loc, type.clone(shape), value,
                                   b.getDenseI64ArrayAttr(permutation));
}

struct TgSoftmaxLastAxisPass
    : impl::TgSoftmaxLastAxisBase<TgSoftmaxLastAxisPass> {
  using TgSoftmaxLastAxisBase::TgSoftmaxLastAxisBase;

  void runOnOperation() override {
    SmallVector<Operation *> rewrites;
    getOperation().walk([&](Operation *op) {
      auto axisOf = [](auto typed, Value shaped) {
        return static_cast<int64_t>(typed.getAxis()) !=
               cast<RankedTensorType>(shaped.getType()).getRank() - 1;
      };
      if (auto softmax = dyn_cast<tg::SoftmaxOp>(op);
          softmax && axisOf(softmax, softmax.getInput()))
        rewrites.push_back(op);
      else if (auto grad = dyn_cast<tg::SoftmaxGradOp>(op);
               grad && axisOf(grad, grad.getOutput()))
        rewrites.push_back(op);
    });
    for (Operation *op : rewrites) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      auto type = cast<RankedTensorType>(op->getResult(0).getType());
      const int64_t rank = type.getRank();
      Value result;
      if (auto softmax = dyn_cast<tg::SoftmaxOp>(op)) {
        SmallVector<int64_t> swap =
            swapWithLast(static_cast<int64_t>(softmax.getAxis()), rank);
        Value input = transposed(b, loc, softmax.getInput(), swap);
        Value rows = b.create<tg::SoftmaxOp>(loc, input.getType(), input,
                                             b.getI64IntegerAttr(rank - 1));
        result = transposed(b, loc, rows, swap);
      } else {
        auto grad = cast<tg::SoftmaxGradOp>(op);
        SmallVector<int64_t> swap =
            swapWithLast(static_cast<int64_t>(grad.getAxis()), rank);
        Value output = transposed(b, loc, grad.getOutput(), swap);
        Value dy = transposed(b, loc, grad.getGrad(), swap);
        Value rows = b.create<tg::SoftmaxGradOp>(
            loc, output.getType(), output, dy, b.getI64IntegerAttr(rank - 1));
        result = transposed(b, loc, rows, swap);
      }
      op->getResult(0).replaceAllUsesWith(result);
      op->erase();
    }
  }
};

} // namespace
} // namespace tgc
