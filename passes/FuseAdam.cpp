//===- FuseAdam.cpp - tg-fuse-adam -----------------------------------------===//
#include "passes/Passes.h"

#include "ir/TgOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

#include <tuple>

namespace tgc {

#define GEN_PASS_DEF_TGFUSEADAM
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

struct TgFuseAdamPass : impl::TgFuseAdamBase<TgFuseAdamPass> {
  using TgFuseAdamBase::TgFuseAdamBase;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    unsigned merged = 0;
    getOperation().walk([&](func::FuncOp function) {
      // Updates can merge when they share every operand but the parameter's.
      using Key = std::tuple<Value, Value, Attribute, Attribute, Attribute>;
      llvm::MapVector<Key, SmallVector<tg::AdamUpdateOp>> groups;
      function.walk([&](tg::AdamUpdateOp op) {
        groups[{op.getLr(), op.getStep(), op.getBeta1Attr(),
                op.getBeta2Attr(), op.getEpsilonAttr()}]
            .push_back(op);
      });
      for (auto &[key, updates] : groups) {
        if (updates.size() < 2 || readsStateBetween(updates))
          continue;
        merged += merge(rewriter, updates);
      }
    });
    numMerged = merged;
    if (report)
      getOperation().emitRemark() << "tg-fuse-adam: merged " << merged
                                  << " tg.adam_update ops";
  }

  /// Whether the updates cannot become one op: one variable is updated
  /// twice, or an op between the first and last update uses one of the
  /// updated variables (a load, a store, another update), so moving the
  /// earlier updates past it would change what it sees.
  static bool readsStateBetween(ArrayRef<tg::AdamUpdateOp> updates) {
    llvm::DenseSet<StringRef> state;
    for (tg::AdamUpdateOp op : updates)
      for (StringRef name : {op.getParam(), op.getMoment1(), op.getMoment2()})
        if (!state.insert(name).second)
          return true;
    llvm::DenseSet<Operation *> members;
    for (tg::AdamUpdateOp op : updates)
      members.insert(op.getOperation());
    Operation *last = tg::AdamUpdateOp(updates.back()).getOperation();
    for (Operation *op = tg::AdamUpdateOp(updates.front())->getNextNode();
         op && op != last; op = op->getNextNode()) {
      if (members.contains(op))
        continue;
      bool touches = false;
      op->walk([&](Operation *nested) {
        for (NamedAttribute attr : nested->getAttrs())
          attr.getValue().walk([&](FlatSymbolRefAttr ref) {
            touches |= state.contains(ref.getValue());
          });
      });
      if (touches)
        return true;
    }
    return false;
  }

  /// Replaces `updates` (in program order) by one op after the last.
  unsigned merge(IRRewriter &rewriter, ArrayRef<tg::AdamUpdateOp> updates) {
    SmallVector<Attribute> params, moments1, moments2;
    SmallVector<Value> grads;
    SmallVector<Location> locs;
    for (tg::AdamUpdateOp op : updates) {
      params.push_back(op.getParamAttr());
      moments1.push_back(op.getMoment1Attr());
      moments2.push_back(op.getMoment2Attr());
      grads.push_back(op.getGrad());
      locs.push_back(op.getLoc());
    }
    tg::AdamUpdateOp last = updates.back();
    rewriter.setInsertionPoint(last);
    rewriter.create<tg::MultiAdamUpdateOp>(
        rewriter.getFusedLoc(locs), /*gradNorm=*/Type(),
        rewriter.getArrayAttr(params), rewriter.getArrayAttr(moments1),
        rewriter.getArrayAttr(moments2), grads, last.getLr(), last.getStep(),
        /*weight=*/Value(), /*phase=*/Value(), /*clip=*/Value(),
        /*weightDecay=*/Value(), /*beta1Value=*/Value(),
        /*beta2Value=*/Value(), /*epsilonValue=*/Value(), last.getBeta1Attr(), last.getBeta2Attr(),
        last.getEpsilonAttr(), /*decays=*/nullptr);
    for (tg::AdamUpdateOp op : updates)
      rewriter.eraseOp(op);
    return updates.size();
  }
};

} // namespace
} // namespace tgc
