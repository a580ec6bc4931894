//===- FoldHeadTransposes.cpp - tg-fold-head-transposes -------------------===//
//
// A head-major tg.attention between head transposes becomes a
// sequence-major one on the untransposed tensors (Passes.td says why). All
// or nothing per attention: a partly folded one would need transposes of its
// own.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "ir/TgOps.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

namespace tgc {

#define GEN_PASS_DEF_TGFOLDHEADTRANSPOSES
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

/// The one permutation that swaps positions and heads of a [B, x, y, D]
/// tensor.
bool isHeadSwap(tg::TransposeOp op) {
  return op && op.getPermutation() == ArrayRef<int64_t>{0, 2, 1, 3};
}

/// Whether `op` moves elements only: a transpose that also rounds (f32 to
/// bf16, tg-fold-bf16-roundings) cannot be dropped.
bool keepsElementType(tg::TransposeOp op) {
  return getElementTypeOrSelf(op.getInput().getType()) ==
         getElementTypeOrSelf(op.getType());
}

/// The sequence-major tensor `v` is the head transpose of, or null.
Value untransposed(Value v) {
  auto transpose = v.getDefiningOp<tg::TransposeOp>();
  return isHeadSwap(transpose) && keepsElementType(transpose)
             ? transpose.getInput()
             : Value();
}

struct TgFoldHeadTransposesPass
    : impl::TgFoldHeadTransposesBase<TgFoldHeadTransposesPass> {
  using TgFoldHeadTransposesBase::TgFoldHeadTransposesBase;

  void runOnOperation() override {
    SmallVector<tg::AttentionOp> attentions;
    getOperation().walk([&](tg::AttentionOp op) { attentions.push_back(op); });
    unsigned folded = 0, kept = 0;
    IRRewriter rewriter(&getContext());
    for (tg::AttentionOp op : attentions) {
      if (fold(rewriter, op))
        ++folded;
      else
        ++kept;
    }
    numFolded = folded;
    numKept = kept;
    if (report)
      getOperation().emitRemark()
          << "tg-fold-head-transposes: " << folded
          << " attentions read and write the sequence-major layout, " << kept
          << " kept head-major";
  }

  bool fold(IRRewriter &rewriter, tg::AttentionOp op) {
    if (op.getSequenceMajor() || op.getPosition())
      return false;
    Value query = untransposed(op.getQuery()), key = untransposed(op.getKeyIn()),
          value = untransposed(op.getValue());
    if (!query || !key || !value)
      return false;
    // The output's uses: merge transposes only (the lse goes to the
    // gradient, which autodiff makes after this pass).
    SmallVector<tg::TransposeOp> merges;
    for (Operation *user : op.getOutput().getUsers()) {
      auto merge = dyn_cast<tg::TransposeOp>(user);
      if (!isHeadSwap(merge) || !keepsElementType(merge))
        return false;
      merges.push_back(merge);
    }
    // The builder's output is f32 (a bf16 one is tg-fold-bf16-roundings'
    // work, after this pass).
    if (merges.empty() || !op.getLse().use_empty() ||
        !getElementTypeOrSelf(op.getOutput().getType()).isF32())
      return false;
    rewriter.setInsertionPoint(op);
    auto folded = rewriter.create<tg::AttentionOp>(
        op.getLoc(), query, key, value, op.getMask(), op.getRngKey(),
        op.getCausal(), op.getScale().convertToFloat(),
        op.getDropoutRate().convertToFloat(), op.getOpId(), Value(),
        /*sequenceMajor=*/true, op.getBias(), op.getDropoutValue());
    // The discardable attributes, which the builder does not take
    // (bf16_products needs bf16 operands, which no tg.transpose makes).
    for (NamedAttribute attribute : op->getDiscardableAttrs())
      folded->setAttr(attribute.getName(), attribute.getValue());
    for (tg::TransposeOp merge : merges)
      rewriter.replaceOp(merge, folded.getOutput());
    // Key and value may be one transpose (the same tensor attended twice).
    llvm::SetVector<Operation *> splits;
    for (Value operand : {op.getQuery(), op.getKeyIn(), op.getValue()})
      splits.insert(operand.getDefiningOp());
    rewriter.eraseOp(op);
    for (Operation *split : splits)
      if (split->use_empty())
        rewriter.eraseOp(split);
    return true;
  }
};

} // namespace
} // namespace tgc
