//===- SplitLoss.cpp - tg-split-loss --------------------------------------===//
//
// A loss with extra terms is not a cross-entropy: its exponential is no
// perplexity. The step returns the cross-entropy too, so the log can say
// which part is which.
//
//===----------------------------------------------------------------------===//
#include "passes/LossParts.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace tgc {

#define GEN_PASS_DEF_TGSPLITLOSS
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kCrossEntropyName = "cross_entropy";

struct TgSplitLossPass : impl::TgSplitLossBase<TgSplitLossPass> {
  using TgSplitLossBase::TgSplitLossBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Without a loss function, or with only its declaration, there is
    // nothing to split (tg-autodiff, next in the pipeline, says what is
    // missing).
    auto function = module.lookupSymbol<func::FuncOp>(functionName);
    if (!function || function.isExternal())
      return;
    auto ret =
        cast<func::ReturnOp>(function.getBody().front().getTerminator());
    for (unsigned i = 0; i < function.getNumResults(); ++i)
      if (auto name = function.getResultAttrOfType<StringAttr>(i, "tg.name");
          name && name.getValue() == kCrossEntropyName)
        return;
    if (ret.getNumOperands() == 0)
      return;
    tg::CrossEntropyOp crossEntropy = modelCrossEntropy(ret.getOperand(0));
    if (!crossEntropy || crossEntropy.getLoss() == ret.getOperand(0))
      return;
    Value part = crossEntropy.getLoss();
    unsigned index = function.getNumResults();
    ret->insertOperands(index, part);
    OpBuilder b(module.getContext());
    function.insertResult(
        index, part.getType(),
        b.getDictionaryAttr(b.getNamedAttr(
            "tg.name", b.getStringAttr(kCrossEntropyName))));
  }
};

} // namespace
} // namespace tgc
