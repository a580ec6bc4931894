//===- FuseOutputLoss.cpp - tg-fuse-output-loss ---------------------------===//
#include "passes/Passes.h"

#include "ir/TgOps.h"

#include "mlir/IR/PatternMatch.h"

namespace tgc {

#define GEN_PASS_DEF_TGFUSEOUTPUTLOSS
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

/// The ops one tg.output_loss replaces; the gradient GEMMs may be missing
/// (a frozen weight has no weight gradient).
struct OutputLossGroup {
  tg::MatmulOp projection;
  tg::CrossEntropyOp loss;
  tg::CrossEntropyGradOp lossGrad;
  tg::MatmulOp hiddenGrad;        ///< dl W
  tg::ReshapeOp flatGrad;         ///< dl as [rows, V]
  tg::MatmulOp weightGrad;        ///< dl^T h, rows flattened
};

/// Whether `value` is `hidden` seen as [rows, d].
static bool isFlatHidden(Value value, Value hidden) {
  if (value == hidden)
    return true;
  auto reshape = value.getDefiningOp<tg::ReshapeOp>();
  return reshape && reshape.getInput() == hidden;
}

static std::optional<OutputLossGroup> match(tg::CrossEntropyOp loss) {
  OutputLossGroup g;
  g.loss = loss;
  g.projection = loss.getLogits().getDefiningOp<tg::MatmulOp>();
  if (!g.projection || !g.projection.getTransposeRhs() ||
      g.projection.getTransposeLhs() ||
      llvm::cast<RankedTensorType>(g.projection.getRhs().getType()).getRank() != 2)
    return std::nullopt;
  for (Operation *user : loss.getLogits().getUsers()) {
    if (user == loss)
      continue;
    auto grad = llvm::dyn_cast<tg::CrossEntropyGradOp>(user);
    if (!grad || g.lossGrad)
      return std::nullopt;
    g.lossGrad = grad;
  }
  if (!g.lossGrad || g.lossGrad.getTargets() != loss.getTargets() ||
      g.lossGrad.getSmoothing() != loss.getSmoothing() ||
      g.lossGrad.getSmoothingValue() != loss.getSmoothingValue() ||
      g.lossGrad.getIgnoreIndex() != loss.getIgnoreIndex())
    return std::nullopt;
  Value weight = g.projection.getRhs(), hidden = g.projection.getLhs();
  for (Operation *user : g.lossGrad.getResult().getUsers()) {
    auto matmul = llvm::dyn_cast<tg::MatmulOp>(user);
    auto reshape = llvm::dyn_cast<tg::ReshapeOp>(user);
    if (matmul && !g.hiddenGrad && matmul.getRhs() == weight &&
        !matmul.getTransposeLhs() && !matmul.getTransposeRhs() &&
        matmul.getType() == hidden.getType()) {
      g.hiddenGrad = matmul;
      continue;
    }
    if (!reshape || g.flatGrad || !reshape->hasOneUse())
      return std::nullopt;
    auto outer = llvm::dyn_cast<tg::MatmulOp>(*reshape->user_begin());
    if (!outer || outer.getLhs() != reshape.getResult() ||
        !outer.getTransposeLhs() || outer.getTransposeRhs() ||
        !isFlatHidden(outer.getRhs(), hidden) ||
        outer.getType() != weight.getType())
      return std::nullopt;
    g.flatGrad = reshape;
    g.weightGrad = outer;
  }
  // The fused op takes the loss's place, so its seed must already exist,
  // and what reads the gradient products it replaces must come after it
  // (autodiff puts the backward after the loss; hand-written IR may not).
  Value seed = g.lossGrad.getLossGrad();
  if (Operation *def = seed.getDefiningOp())
    if (def->getBlock() != loss->getBlock() || !def->isBeforeInBlock(loss))
      return std::nullopt;
  auto readAfterLoss = [&](Operation *product) {
    return !product ||
           llvm::all_of(product->getUsers(), [&](Operation *user) {
             Operation *reader = loss->getBlock()->findAncestorOpInBlock(*user);
             return reader && loss->isBeforeInBlock(reader);
           });
  };
  if (!readAfterLoss(g.hiddenGrad) || !readAfterLoss(g.weightGrad))
    return std::nullopt;
  return g;
}

struct TgFuseOutputLossPass
    : impl::TgFuseOutputLossBase<TgFuseOutputLossPass> {
  using TgFuseOutputLossBase::TgFuseOutputLossBase;

  void runOnOperation() override {
    if (chunkRows < 0) {
      getOperation().emitError() << "tg-fuse-output-loss: chunk-rows must be "
                                    "0 (off) or positive, not "
                                 << static_cast<int64_t>(chunkRows);
      return signalPassFailure();
    }
    SmallVector<tg::CrossEntropyOp> losses;
    if (chunkRows > 0)
      getOperation().walk([&](tg::CrossEntropyOp op) { losses.push_back(op); });
    IRRewriter rewriter(&getContext());
    unsigned fused = 0;
    for (tg::CrossEntropyOp loss : losses) {
      std::optional<OutputLossGroup> g = match(loss);
      if (!g)
        continue;
      fuse(rewriter, *g);
      ++fused;
    }
    numFused = fused;
    if (report)
      getOperation().emitRemark()
          << "tg-fuse-output-loss: fused " << fused
          << " output projections with their loss, in chunks of "
          << static_cast<int64_t>(chunkRows) << " rows";
  }

  void fuse(IRRewriter &rewriter, OutputLossGroup &g) {
    Value hidden = g.projection.getLhs(), weight = g.projection.getRhs();
    auto hiddenType = llvm::cast<RankedTensorType>(hidden.getType());
    auto weightType = llvm::cast<RankedTensorType>(weight.getType());
    int64_t rows = hiddenType.getNumElements() / hiddenType.getShape().back();
    int64_t chunk = std::min<int64_t>(chunkRows, rows);
    auto workspace = RankedTensorType::get({chunk, weightType.getDimSize(0)},
                                           hiddenType.getElementType());
    SmallVector<Location> locs = {g.projection.getLoc(), g.loss.getLoc()};
    rewriter.setInsertionPoint(g.loss);
    auto op = rewriter.create<tg::OutputLossOp>(
        rewriter.getFusedLoc(locs),
        TypeRange{g.loss.getLoss().getType(), g.loss.getTokens().getType(),
                  hiddenType, weightType, workspace},
        hidden, weight, g.loss.getTargets(), g.lossGrad.getLossGrad(),
        g.loss.getSmoothingValue(), g.loss.getSmoothingAttr(), g.loss.getIgnoreIndexAttr(),
        rewriter.getI64IntegerAttr(chunk));
    rewriter.replaceAllUsesWith(g.loss.getLoss(), op.getLoss());
    rewriter.replaceAllUsesWith(g.loss.getTokens(), op.getTokens());
    if (g.hiddenGrad)
      rewriter.replaceOp(g.hiddenGrad, op.getHiddenGrad());
    if (g.weightGrad) {
      Value flatHidden = g.weightGrad.getRhs();
      rewriter.replaceOp(g.weightGrad, op.getWeightGrad());
      rewriter.eraseOp(g.flatGrad);
      if (Operation *def = flatHidden.getDefiningOp<tg::ReshapeOp>())
        if (def->use_empty())
          rewriter.eraseOp(def);
    }
    rewriter.eraseOp(g.lossGrad);
    rewriter.eraseOp(g.loss);
    rewriter.eraseOp(g.projection);
  }
};

} // namespace
} // namespace tgc
