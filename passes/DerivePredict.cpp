//===- DerivePredict.cpp - tg-derive-predict ------------------------------===//
#include "passes/LossParts.h"
#include "passes/Passes.h"

#include "ir/TgOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/BitVector.h"

namespace tgc {

#define GEN_PASS_DEF_TGDERIVEPREDICT
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

struct TgDerivePredictPass : impl::TgDerivePredictBase<TgDerivePredictPass> {
  using TgDerivePredictBase::TgDerivePredictBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto loss = module.lookupSymbol<func::FuncOp>(functionName);
    if (!loss) {
      module.emitError() << "tg-derive-predict: no function @" << functionName;
      return signalPassFailure();
    }
    if (loss.isExternal()) {
      loss.emitError() << "tg-derive-predict: @" << functionName
                       << " is a declaration (it has no body)";
      return signalPassFailure();
    }
    if (predictName.empty()) { // an empty symbol prints as IR that does not parse
      module.emitError() << "tg-derive-predict: the function it makes needs "
                            "a name (predict-function)";
      return signalPassFailure();
    }
    if (module.lookupSymbol(predictName)) {
      module.emitError() << "tg-derive-predict: the module already has a @"
                         << predictName;
      return signalPassFailure();
    }
    auto ret = llvm::cast<func::ReturnOp>(loss.getBody().front().getTerminator());
    if (ret.getNumOperands() == 0 || !modelCrossEntropy(ret.getOperand(0))) {
      InFlightDiagnostic error =
          loss.emitError() << "tg-derive-predict: the first result of @"
                           << functionName
                           << " must be one tg.cross_entropy's loss, alone or "
                              "with terms added (its logits are what @"
                           << predictName << " returns)";
      // Where the model's own lines are: each cross-entropy it made.
      loss.walk([&](tg::CrossEntropyOp crossEntropy) {
        error.attachNote(crossEntropy.getLoc()) << "a tg.cross_entropy";
      });
      return signalPassFailure();
    }

    OpBuilder builder(module.getContext());
    builder.setInsertionPointAfter(loss);
    auto predict = llvm::cast<func::FuncOp>(builder.clone(*loss));
    predict.setSymName(predictName);
    Block &body = predict.getBody().front();

    // Inference: dropout keeps everything and scales nothing.
    predict.walk([](tg::DropoutOp dropout) {
      dropout.replaceAllUsesWith(dropout.getInput());
      dropout.erase();
    });
    auto clonedReturn = llvm::cast<func::ReturnOp>(body.getTerminator());
    tg::CrossEntropyOp crossEntropy =
        modelCrossEntropy(clonedReturn.getOperand(0));
    Value logits = crossEntropy.getLogits();
    builder.setInsertionPoint(clonedReturn);
    builder.create<func::ReturnOp>(clonedReturn.getLoc(), logits);
    clonedReturn.erase();
    IRRewriter rewriter(module.getContext());
    (void)runRegionDCE(rewriter, predict.getBody());

    llvm::BitVector unused(body.getNumArguments());
    for (BlockArgument arg : body.getArguments())
      if (arg.use_empty())
        unused.set(arg.getArgNumber());
    predict.eraseArguments(unused);
    predict.setType(builder.getFunctionType(body.getArgumentTypes(),
                                            {logits.getType()}));
  }
};

} // namespace
} // namespace tgc
