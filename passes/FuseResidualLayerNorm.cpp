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

/// A tg.layer_norm or tg.rms_norm, the root of a block: what the fused op
/// takes from it.
struct NormRoot {
  Operation *op;
  Value input, gamma, beta; ///< beta: null for RMSNorm
  tg::NormKind kind;
  FloatAttr epsilon;
};

std::optional<NormRoot> normRoot(Operation *op) {
  if (auto norm = dyn_cast<tg::LayerNormOp>(op))
    return NormRoot{op, norm.getInput(), norm.getGamma(), norm.getBeta(),
                    tg::NormKind::layer, norm.getEpsilonAttr()};
  if (auto norm = dyn_cast<tg::RmsNormOp>(op))
    return NormRoot{op, norm.getInput(), norm.getGamma(), Value(),
                    tg::NormKind::rms, norm.getEpsilonAttr()};
  return std::nullopt;
}

struct TgFuseResidualLayerNormPass
    : impl::TgFuseResidualLayerNormBase<TgFuseResidualLayerNormPass> {
  using TgFuseResidualLayerNormBase::TgFuseResidualLayerNormBase;

  void runOnOperation() override {
    unusedKeys.clear();
    SmallVector<Operation *> roots;
    getOperation().walk([&](Operation *op) {
      if (normRoot(op))
        roots.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    unsigned fused = 0, rms = 0, keptSum = 0, rejected = 0, zeroGamma = 0;
    llvm::DenseSet<Location> remarked;
    for (Operation *root : roots) {
      // Read now: fusing an earlier block may have replaced this one's input
      // (two norms of one sum).
      NormRoot norm = *normRoot(root);
      Outcome outcome = fuse(rewriter, norm);
      // Once per line: @predict repeats the loss function's ops.
      if (remarks && (outcome == Outcome::ExtraUse ||
                      outcome == Outcome::ZeroGamma) &&
          remarked.insert(root->getLoc()).second)
        root->emitRemark() << whyUnfused(outcome, norm);
      bool isFused = outcome == Outcome::Fused || outcome == Outcome::KeptSum;
      fused += isFused;
      rms += isFused && norm.kind == tg::NormKind::rms;
      keptSum += outcome == Outcome::KeptSum;
      rejected += outcome == Outcome::ExtraUse;
      zeroGamma += outcome == Outcome::ZeroGamma;
    }
    numFused = fused;
    numRms = rms;
    numKeptSum = keptSum;
    numRejected = rejected;
    numZeroGamma = zeroGamma;
    if (report)
      getOperation().emitRemark()
          << "tg-fuse-residual-layernorm: fused " << fused
          << " residual + dropout + norm blocks (" << rms << " RMSNorm, "
          << keptSum << " keeping the sum); " << rejected
          << " left unfused because the dropout has another use or the sum "
             "is used before the norm, "
          << zeroGamma << " because gamma starts at zero";
  }

  enum class Outcome { Fused, KeptSum, NoMatch, ExtraUse, ZeroGamma };

  static std::string whyUnfused(Outcome outcome, const NormRoot &norm) {
    std::string what = norm.kind == tg::NormKind::rms ? "RMSNorm" : "LayerNorm";
    if (outcome == Outcome::ZeroGamma)
      return what + " left unfused with its residual add: gamma starts "
                    "with a zero (a variable of init zeros, or a constant), "
                    "and the fused backward divides by it";
    return what + " left unfused with its residual add: the dropout's result "
                  "or the sum has another use before the norm (the fused op "
                  "keeps neither)";
  }

  /// Whether gamma is seen to hold a zero: a variable that starts at zero
  /// or a constant with a zero element, either seen through views
  /// (tg.reshape). The fused backward divides by gamma to rebuild the
  /// normalized rows from the result. A gamma computed by other ops or
  /// passed in (a step input) is taken to be non-zero, as a trained one is.
  static bool startsAtZero(Value gamma) {
    gamma = tg::viewSource(gamma);
    if (auto constant = gamma.getDefiningOp<tg::ConstantOp>()) {
      auto values = llvm::dyn_cast<DenseElementsAttr>(constant.getValue());
      return !values || llvm::any_of(values.getValues<APFloat>(),
                                     [](const APFloat &x) { return x.isZero(); });
    }
    auto load = gamma.getDefiningOp<tg::LoadOp>();
    if (!load)
      return false;
    auto variable = SymbolTable::lookupNearestSymbolFrom<tg::VariableOp>(
        load, load.getVariableAttr());
    return variable && variable.getInit() == tg::InitKind::zeros;
  }

  /// Whether every use of the sum besides the norm comes after the norm in
  /// its block, where the fused op that replaces the norm can feed it (the
  /// next residual of a pre-LN block).
  static bool othersFollow(tg::AddOp add, Operation *norm) {
    return llvm::all_of(add->getUsers(), [&](Operation *user) {
      return user == norm || (user->getBlock() == norm->getBlock() &&
                              norm->isBeforeInBlock(user));
    });
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

  Outcome fuse(IRRewriter &rewriter, const NormRoot &norm) {
    auto add = norm.input.getDefiningOp<tg::AddOp>();
    if (!add)
      return Outcome::NoMatch;
    if (startsAtZero(norm.gamma))
      return Outcome::ZeroGamma;
    // x + dropout(y) (the DSL's order) or dropout(y) + x; without a dropout
    // the lhs is the residual.
    auto dropout = add.getRhs().getDefiningOp<tg::DropoutOp>();
    Value residual = add.getLhs(), sublayer = add.getRhs();
    if (!dropout)
      if ((dropout = add.getLhs().getDefiningOp<tg::DropoutOp>()))
        residual = add.getRhs();
    if ((dropout && !dropout.getResult().hasOneUse()) ||
        !othersFollow(add, norm.op))
      return Outcome::ExtraUse;
    bool keepSum = !add.getResult().hasOneUse();
    Value key, rateValue;
    float rate = 0.0f;
    int64_t opId = 0;
    SmallVector<Location> locs;
    if (dropout) {
      sublayer = dropout.getInput();
      key = dropout.getKey();
      rate = dropout.getRate().convertToFloat();
      rateValue = dropout.getRateValue();
      opId = dropout.getOpId();
      locs.push_back(dropout.getLoc());
    } else {
      auto function = norm.op->getParentOfType<func::FuncOp>();
      if (!function)
        return Outcome::NoMatch;
      key = unusedKey(rewriter, function);
    }
    locs.append({add.getLoc(), norm.op->getLoc()});

    rewriter.setInsertionPoint(norm.op);
    Type rows = residual.getType();
    Type statistics = tg::rowStatisticsType(rows);
    auto fused = rewriter.create<tg::ResidualLayerNormOp>(
        FusedLoc::get(&getContext(), locs), rows,
        norm.beta ? statistics : Type(), statistics, keepSum ? rows : Type(),
        /*rounded=*/Type(), residual, sublayer, norm.gamma, norm.beta, key,
        rateValue, tg::NormKindAttr::get(&getContext(), norm.kind),
        rewriter.getF32FloatAttr(rate),
        rewriter.getI64IntegerAttr(opId), norm.epsilon);
    rewriter.replaceOp(norm.op, fused.getResult());
    if (keepSum)
      rewriter.replaceAllUsesWith(add.getResult(), fused.getSum());
    rewriter.eraseOp(add);
    if (dropout)
      rewriter.eraseOp(dropout);
    return keepSum ? Outcome::KeptSum : Outcome::Fused;
  }

  DenseMap<func::FuncOp, Value> unusedKeys;
};

} // namespace
} // namespace tgc
