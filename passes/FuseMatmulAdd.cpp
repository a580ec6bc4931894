//===- FuseMatmulAdd.cpp - tg-fuse-matmul-add ----------------------------===//
#include "passes/Passes.h"

#include "ir/TgOps.h"
#include "passes/SumTerms.h"

#include "mlir/IR/PatternMatch.h"

namespace tgc {

#define GEN_PASS_DEF_TGFUSEMATMULADD
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

/// `value`'s tg.matmul if the add is its only reader and it makes f32 in
/// the add's block.
static tg::MatmulOp soleProduct(Value value, tg::AddOp add) {
  auto matmul = value.getDefiningOp<tg::MatmulOp>();
  if (!matmul || !matmul->hasOneUse() || matmul->getBlock() != add->getBlock())
    return {};
  if (value.getType() != add.getType() ||
      !llvm::cast<RankedTensorType>(value.getType()).getElementType().isF32())
    return {};
  return matmul;
}

/// Whether `value` is ready before `op` in `op`'s block.
static bool readyBefore(Value value, Operation *op) {
  if (auto arg = llvm::dyn_cast<BlockArgument>(value))
    return arg.getOwner() == op->getBlock();
  Operation *def = value.getDefiningOp();
  return def->getBlock() == op->getBlock() && def->isBeforeInBlock(op);
}

struct TgFuseMatmulAddPass : impl::TgFuseMatmulAddBase<TgFuseMatmulAddPass> {
  using TgFuseMatmulAddBase::TgFuseMatmulAddBase;

  void runOnOperation() override {
    SmallVector<tg::AddOp> adds;
    getOperation().walk([&](tg::AddOp add) { adds.push_back(add); });
    IRRewriter rewriter(&getContext());
    unsigned fused = 0;
    for (tg::AddOp add : adds) {
      // The later product takes the earlier value as its summand: it is
      // ready by then, so the fused op can stay where the product was.
      auto term = producedTerm<tg::MatmulOp>(add, soleProduct);
      if (!term)
        continue;
      auto [product, addend] = *term;
      if (readyBefore(addend, product))
        rewriter.setInsertionPoint(product);
      else
        rewriter.setInsertionPoint(add);
      auto sum = rewriter.create<tg::MatmulAddOp>(
          rewriter.getFusedLoc({product.getLoc(), add.getLoc()}),
          add.getType(), product.getLhs(), product.getRhs(), addend,
          product.getTransposeLhs(), product.getTransposeRhs());
      rewriter.replaceOp(add, sum.getResult());
      rewriter.eraseOp(product);
      ++fused;
    }
    numFused = fused;
    if (report)
      getOperation().emitRemark()
          << "tg-fuse-matmul-add: added " << fused
          << " sums in the GEMM of one of their summands";
  }
};

} // namespace
} // namespace tgc
