//===- FoldBf16Roundings.cpp - tg-fold-bf16-roundings ---------------------===//
#include "passes/Passes.h"

#include "ir/TgOps.h"

namespace tgc {

#define GEN_PASS_DEF_TGFOLDBF16ROUNDINGS
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

/// Whether `value` comes from a GEMM on bf16 operands that could write it
/// rounded: its result, read by nothing but the copy.
bool isFoldableGemmResult(Value value) {
  Operation *gemm = value.getDefiningOp();
  if (!gemm || !llvm::isa<tg::MatmulOp, tg::LinearOp>(gemm) ||
      !value.hasOneUse())
    return false;
  auto operand = llvm::cast<ShapedType>(gemm->getOperand(0).getType());
  return operand.getElementType().isBF16();
}

struct FoldBf16RoundingsPass
    : public impl::TgFoldBf16RoundingsBase<FoldBf16RoundingsPass> {
  using TgFoldBf16RoundingsBase::TgFoldBf16RoundingsBase;

  void runOnOperation() override {
    int64_t folded = 0;
    getOperation().walk([&](tg::ToBf16Op copy) {
      Value result = copy.getInput();
      if (!isFoldableGemmResult(result))
        return;
      result.setType(copy.getType());
      copy.getResult().replaceAllUsesWith(result);
      copy.erase();
      ++folded;
    });
    numFolded = folded;
    if (report)
      getOperation().emitRemark()
          << "tg-fold-bf16-roundings: " << folded
          << " tg.to_bf16 copies folded into their GEMMs";
  }
};

} // namespace
} // namespace tgc
