//===- FuseEmbeddingGradAdd.cpp - tg-fuse-embedding-grad-add -------------===//
#include "passes/Passes.h"

#include "ir/TgOps.h"
#include "passes/SumTerms.h"

#include "mlir/IR/PatternMatch.h"

namespace tgc {

#define GEN_PASS_DEF_TGFUSEEMBEDDINGGRADADD
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

/// `value`'s tg.embedding_grad, not yet adding into anything, if the add is
/// its only reader in the add's block.
static tg::EmbeddingGradOp soleScatter(Value value, tg::AddOp add) {
  auto scatter = value.getDefiningOp<tg::EmbeddingGradOp>();
  if (!scatter || scatter.getAddend() || !scatter->hasOneUse() ||
      scatter->getBlock() != add->getBlock() ||
      value.getType() != add.getType())
    return {};
  return scatter;
}

struct TgFuseEmbeddingGradAddPass
    : impl::TgFuseEmbeddingGradAddBase<TgFuseEmbeddingGradAddPass> {
  using TgFuseEmbeddingGradAddBase::TgFuseEmbeddingGradAddBase;

  void runOnOperation() override {
    SmallVector<tg::AddOp> adds;
    getOperation().walk([&](tg::AddOp add) { adds.push_back(add); });
    IRRewriter rewriter(&getContext());
    unsigned fused = 0;
    for (tg::AddOp add : adds) {
      // Of two scatters the later adds into the earlier's table, so a chain
      // of sums (a table shared by the encoder, the decoder and the output
      // projection) becomes a chain of scatters into one table.
      auto term = producedTerm<tg::EmbeddingGradOp>(add, soleScatter);
      if (!term)
        continue;
      auto [scatter, addend] = *term;
      // At the add: the addend is ready there, and the scatter's operands
      // were ready where it was.
      rewriter.setInsertionPoint(add);
      auto sum = rewriter.create<tg::EmbeddingGradOp>(
          rewriter.getFusedLoc({scatter.getLoc(), add.getLoc()}), add.getType(),
          scatter.getGrad(), scatter.getIds(), addend);
      rewriter.replaceOp(add, sum.getResult());
      rewriter.eraseOp(scatter);
      ++fused;
    }
    numFused = fused;
    if (report)
      getOperation().emitRemark()
          << "tg-fuse-embedding-grad-add: added " << fused
          << " sums in the scatter of an embedding gradient";
  }
};

} // namespace
} // namespace tgc
