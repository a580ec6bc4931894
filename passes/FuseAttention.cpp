//===- FuseAttention.cpp - tg-fuse-attention ------------------------------===//
//
// Walks up from each `P V` matmul through dropout, softmax, mask adds, scale
// and `Q K^T`; a complete chain whose intermediates have no other use becomes
// one tg.attention. Matching is structural and strict: anything unexpected
// leaves the chain as it is (the unfused ops stay correct, just slower).
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "ir/TgOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"

namespace tgc {

#define GEN_PASS_DEF_TGFUSEATTENTION
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

/// What a matched chain becomes, and the ops it replaces (users first).
struct AttentionChain {
  Value query, key, value, mask, rngKey;
  /// The [Sq, Sk] causal mask the chain adds, when it has one.
  Value causalMask;
  bool causal = false;
  float scale = 1.0f, dropoutRate = 0.0f;
  int64_t opId = 0;
  SmallVector<Operation *> ops;
  /// Mask producers (broadcasts, causal_mask) erased if nothing else uses them.
  SmallVector<Operation *> maskOps;
};

enum class Match { Fused, NotAttention, ExtraUse };

class AttentionMatcher {
public:
  /// Matches the chain ending in `root` (out = P V).
  Match match(tg::MatmulOp root, AttentionChain &chain) {
    if (root.getTransposeLhs() || root.getTransposeRhs() ||
        root.getType().getRank() != 4 || root.getRhs().getType().getRank() != 4)
      return Match::NotAttention;
    chain.value = root.getRhs();
    chain.ops.push_back(root);
    Value x = root.getLhs();

    if (auto dropout = x.getDefiningOp<tg::DropoutOp>()) {
      take(dropout, chain);
      chain.rngKey = dropout.getKey();
      chain.dropoutRate = dropout.getRate().convertToFloat();
      chain.opId = dropout.getOpId();
      x = dropout.getInput();
    }
    auto softmax = x.getDefiningOp<tg::SoftmaxOp>();
    if (!softmax || softmax.getAxis() != 3)
      return Match::NotAttention;
    take(softmax, chain);
    x = softmax.getInput();

    // Mask adds, in either operand order and either nesting order.
    while (auto add = x.getDefiningOp<tg::AddOp>()) {
      Value rest;
      if (takeMask(add.getRhs(), chain))
        rest = add.getLhs();
      else if (takeMask(add.getLhs(), chain))
        rest = add.getRhs();
      else
        return Match::NotAttention;
      take(add, chain);
      x = rest;
    }
    if (auto scale = x.getDefiningOp<tg::ScaleOp>()) {
      take(scale, chain);
      chain.scale = scale.getFactor().convertToFloat();
      x = scale.getInput();
    }
    auto scores = x.getDefiningOp<tg::MatmulOp>();
    if (!scores || scores.getTransposeLhs() || !scores.getTransposeRhs() ||
        scores.getLhs().getType().getRank() != 4 ||
        scores.getRhs().getType().getRank() != 4)
      return Match::NotAttention;
    take(scores, chain);
    chain.query = scores.getLhs();
    chain.key = scores.getRhs();
    if (!shapesFit(chain))
      return Match::NotAttention;
    return extraUse ? Match::ExtraUse : Match::Fused;
  }

private:
  /// Adds `op` to the chain, noting whether its result has another use:
  /// the structure is matched first, so only real attention chains count as
  /// rejected for an extra use.
  void take(Operation *op, AttentionChain &chain) {
    extraUse |= !op->getResult(0).hasOneUse();
    chain.ops.push_back(op);
  }

  bool extraUse = false;

  /// `v` = broadcast(padding [B,Sk], dims [0,3]) or
  /// broadcast(causal_mask, dims [2,3]); each kind at most once.
  bool takeMask(Value v, AttentionChain &chain) {
    auto broadcast = v.getDefiningOp<tg::BroadcastOp>();
    if (!broadcast)
      return false;
    ArrayRef<int64_t> dims = broadcast.getDims();
    Value source = broadcast.getInput();
    if (source.getDefiningOp<tg::CausalMaskOp>() &&
        dims == ArrayRef<int64_t>{2, 3} && !chain.causal) {
      chain.causal = true;
      chain.causalMask = source;
      chain.maskOps.append({broadcast, source.getDefiningOp()});
      return true;
    }
    auto type = cast<RankedTensorType>(source.getType());
    if (dims == ArrayRef<int64_t>{0, 3} && type.getElementType().isF32() &&
        !chain.mask) {
      chain.mask = source;
      chain.maskOps.push_back(broadcast);
      return true;
    }
    return false;
  }

  /// q [B,H,Sq,D], k [B,H,Sk,D], v [B,H,Sk,Dv], mask [B,Sk], causal Sq == Sk.
  bool shapesFit(const AttentionChain &c) {
    auto shape = [](Value v) {
      return cast<RankedTensorType>(v.getType()).getShape();
    };
    ArrayRef<int64_t> q = shape(c.query), k = shape(c.key), v = shape(c.value);
    bool fit = q[0] == k[0] && q[0] == v[0] && q[1] == k[1] && q[1] == v[1] &&
               q[3] == k[3] && k[2] == v[2];
    if (c.mask)
      fit = fit && shape(c.mask) == ArrayRef<int64_t>{q[0], k[2]};
    // A [1, 1] causal mask broadcasts but masks nothing: it must be full.
    if (c.causal)
      fit = fit && q[2] == k[2] &&
            shape(c.causalMask) == ArrayRef<int64_t>{q[2], k[2]};
    return fit;
  }
};

struct TgFuseAttentionPass
    : impl::TgFuseAttentionBase<TgFuseAttentionPass> {
  using TgFuseAttentionBase::TgFuseAttentionBase;

  void runOnOperation() override {
    unsigned fused = 0, causal = 0, masked = 0, rejected = 0;
    // Program order: a chain's Q K^T matmul (erased when the chain fuses)
    // comes before its P V root, so it has been visited already.
    SmallVector<tg::MatmulOp> roots;
    getOperation().walk([&](tg::MatmulOp op) { roots.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (tg::MatmulOp root : roots) {
      AttentionChain chain;
      Match match = AttentionMatcher().match(root, chain);
      if (match == Match::ExtraUse)
        ++rejected;
      if (match != Match::Fused)
        continue;
      fuse(rewriter, root, chain);
      ++fused;
      causal += chain.causal;
      masked += chain.mask ? 1 : 0;
    }
    numFused = fused;
    numCausal = causal;
    numMasked = masked;
    numRejected = rejected;
    if (report)
      getOperation().emitRemark()
          << "tg-fuse-attention: fused " << fused << " attention chains ("
          << causal << " causal, " << masked << " with a padding mask); "
          << rejected << " left unfused because an intermediate has another use";
  }

  void fuse(IRRewriter &rewriter, tg::MatmulOp root,
            const AttentionChain &chain) {
    SmallVector<Location> locs;
    for (Operation *op : llvm::reverse(chain.ops))
      locs.push_back(op->getLoc());
    rewriter.setInsertionPoint(root);
    auto attention = rewriter.create<tg::AttentionOp>(
        FusedLoc::get(&getContext(), locs), chain.query, chain.key,
        chain.value, chain.mask, chain.dropoutRate > 0 ? chain.rngKey : Value(),
        chain.causal, chain.scale, chain.dropoutRate, chain.opId);
    rewriter.replaceOp(root, attention.getOutput());
    for (Operation *op : llvm::drop_begin(chain.ops))
      rewriter.eraseOp(op);
    for (Operation *op : chain.maskOps)
      if (op->use_empty())
        rewriter.eraseOp(op);
  }
};

} // namespace
} // namespace tgc
