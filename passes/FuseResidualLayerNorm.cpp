//===- FuseResidualLayerNorm.cpp - tg-fuse-residual-layernorm -------------===//
#include "passes/Passes.h"

#include "ir/TgOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"

namespace tgc {

#define GEN_PASS_DEF_TGFUSERESIDUALLAYERNORM
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

struct TgFuseResidualLayerNormPass
    : impl::TgFuseResidualLayerNormBase<TgFuseResidualLayerNormPass> {
  using TgFuseResidualLayerNormBase::TgFuseResidualLayerNormBase;

  void runOnOperation() override {
    unusedKeys.clear();
    SmallVector<tg::LayerNormOp> roots;
    getOperation().walk([&](tg::LayerNormOp op) { roots.push_back(op); });
    IRRewriter rewriter(&getContext());
    unsigned fused = 0, rejected = 0, zeroGamma = 0;
    for (tg::LayerNormOp norm : roots) {
      Outcome outcome = fuse(rewriter, norm);
      fused += outcome == Outcome::Fused;
      rejected += outcome == Outcome::ExtraUse;
      zeroGamma += outcome == Outcome::ZeroGamma;
    }
    numFused = fused;
    numRejected = rejected;
    numZeroGamma = zeroGamma;
    if (report)
      getOperation().emitRemark()
          << "tg-fuse-residual-layernorm: fused " << fused
          << " residual + dropout + layer_norm blocks; " << rejected
          << " left unfused because the sum or dropout has another use, "
          << zeroGamma << " because gamma starts at zero";
  }

  enum class Outcome { Fused, NoMatch, ExtraUse, ZeroGamma };

  /// Whether gamma is a variable that starts at zero: the fused backward
  /// divides by gamma to rebuild the normalized rows from the result.
  static bool startsAtZero(Value gamma) {
    auto load = gamma.getDefiningOp<tg::LoadOp>();
    if (!load)
      return false;
    auto variable = SymbolTable::lookupNearestSymbolFrom<tg::VariableOp>(
        load, load.getVariableAttr());
    return variable && variable.getInit() == tg::InitKind::zeros;
  }

  /// The key of a dropout-free block: rate 0 draws nothing, any key will do.
  Value unusedKey(IRRewriter &rewriter, func::FuncOp function) {
    auto &key = unusedKeys[function];
    if (!key) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&function.getBody().front());
      auto type = RankedTensorType::get({2}, rewriter.getI32Type());
      key = rewriter.create<tg::ConstantOp>(
          function.getLoc(), DenseElementsAttr::get(type, int32_t(0)));
    }
    return key;
  }

  Outcome fuse(IRRewriter &rewriter, tg::LayerNormOp norm) {
    auto add = norm.getInput().getDefiningOp<tg::AddOp>();
    if (!add)
      return Outcome::NoMatch;
    if (startsAtZero(norm.getGamma()))
      return Outcome::ZeroGamma;
    // x + dropout(y) (the DSL's order) or dropout(y) + x; without a dropout
    // the lhs is the residual.
    auto dropout = add.getRhs().getDefiningOp<tg::DropoutOp>();
    Value residual = add.getLhs(), sublayer = add.getRhs();
    if (!dropout)
      if ((dropout = add.getLhs().getDefiningOp<tg::DropoutOp>()))
        residual = add.getRhs();
    if (!add.getResult().hasOneUse() ||
        (dropout && !dropout.getResult().hasOneUse()))
      return Outcome::ExtraUse;
    Value key;
    float rate = 0.0f;
    int64_t opId = 0;
    SmallVector<Location> locs;
    if (dropout) {
      sublayer = dropout.getInput();
      key = dropout.getKey();
      rate = dropout.getRate().convertToFloat();
      opId = dropout.getOpId();
      locs.push_back(dropout.getLoc());
    } else {
      auto function = norm->getParentOfType<func::FuncOp>();
      if (!function)
        return Outcome::NoMatch;
      key = unusedKey(rewriter, function);
    }
    locs.append({add.getLoc(), norm.getLoc()});

    rewriter.setInsertionPoint(norm);
    Type statistics = tg::rowStatisticsType(residual.getType());
    auto fused = rewriter.create<tg::ResidualLayerNormOp>(
        FusedLoc::get(&getContext(), locs), residual.getType(), statistics,
        statistics, /*rounded=*/Type(), residual, sublayer, norm.getGamma(), norm.getBeta(), key,
        rewriter.getF32FloatAttr(rate), rewriter.getI64IntegerAttr(opId),
        norm.getEpsilonAttr());
    rewriter.replaceOp(norm, fused.getResult());
    rewriter.eraseOp(add);
    if (dropout)
      rewriter.eraseOp(dropout);
    return Outcome::Fused;
  }

  DenseMap<func::FuncOp, Value> unusedKeys;
};

} // namespace
} // namespace tgc
