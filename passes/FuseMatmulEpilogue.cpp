//===- FuseMatmulEpilogue.cpp - tg-fuse-matmul-epilogue -------------------===//
#include "passes/Passes.h"

#include "ir/TgOps.h"

#include "mlir/IR/PatternMatch.h"

namespace tgc {

#define GEN_PASS_DEF_TGFUSEMATMULEPILOGUE
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

/// `add`'s operands as (a plain x W product, a bias broadcast along the last
/// dimension), in either order.
static std::optional<std::pair<tg::MatmulOp, tg::BroadcastOp>>
matchBiasAdd(tg::AddOp add) {
  for (auto [product, bias] : {std::pair(add.getLhs(), add.getRhs()),
                               std::pair(add.getRhs(), add.getLhs())}) {
    auto matmul = product.getDefiningOp<tg::MatmulOp>();
    auto broadcast = bias.getDefiningOp<tg::BroadcastOp>();
    if (!matmul || !broadcast || !matmul->hasOneUse() ||
        matmul.getTransposeLhs() || matmul.getTransposeRhs())
      continue;
    auto weight = llvm::cast<RankedTensorType>(matmul.getRhs().getType());
    auto vector = llvm::cast<RankedTensorType>(broadcast.getInput().getType());
    int64_t rank = llvm::cast<RankedTensorType>(add.getType()).getRank();
    // A size-1 bias broadcast to N is legal but not tg.linear's [N] bias.
    if (weight.getRank() != 2 || vector.getRank() != 1 ||
        vector.getDimSize(0) != weight.getDimSize(1) ||
        broadcast.getDims() != llvm::ArrayRef<int64_t>{rank - 1})
      continue;
    return std::pair(matmul, broadcast);
  }
  return std::nullopt;
}

struct TgFuseMatmulEpiloguePass
    : impl::TgFuseMatmulEpilogueBase<TgFuseMatmulEpiloguePass> {
  using TgFuseMatmulEpilogueBase::TgFuseMatmulEpilogueBase;

  void runOnOperation() override {
    SmallVector<tg::AddOp> adds;
    getOperation().walk([&](tg::AddOp add) { adds.push_back(add); });
    IRRewriter rewriter(&getContext());
    unsigned fused = 0, withRelu = 0;
    for (tg::AddOp add : adds) {
      auto match = matchBiasAdd(add);
      if (!match)
        continue;
      auto [matmul, broadcast] = *match;
      tg::ReluOp relu;
      if (add->hasOneUse())
        relu = llvm::dyn_cast<tg::ReluOp>(*add->user_begin());
      Operation *last = relu ? relu.getOperation() : add.getOperation();
      SmallVector<Location> locs = {matmul.getLoc(), add.getLoc()};
      if (relu)
        locs.push_back(relu.getLoc());
      rewriter.setInsertionPoint(last);
      auto linear = rewriter.create<tg::LinearOp>(
          rewriter.getFusedLoc(locs), add.getType(), matmul.getLhs(),
          matmul.getRhs(), broadcast.getInput(), /*relu=*/bool(relu));
      rewriter.replaceOp(last, linear.getResult());
      if (relu)
        rewriter.eraseOp(add);
      rewriter.eraseOp(matmul);
      if (broadcast->use_empty())
        rewriter.eraseOp(broadcast);
      ++fused;
      withRelu += bool(relu);
    }
    numFused = fused;
    numRelu = withRelu;
    if (report)
      getOperation().emitRemark()
          << "tg-fuse-matmul-epilogue: folded " << fused
          << " bias adds into their GEMM, " << withRelu << " with a ReLU";
  }
};

} // namespace
} // namespace tgc
