//===- FuseAttention.cpp - tg-fuse-attention ------------------------------===//
//
// Walks up from each `P V` matmul through dropout, softmax, mask adds, scale
// and `Q K^T`; a complete chain whose intermediates have no other use becomes
// one tg.attention. Matching is by meaning, not by the written form: a mask
// may be broadcast explicitly or reshaped to [B, 1, 1, Sk] and broadcast
// implicitly, the scale may be a tg.scale, a multiplication or a division by
// a constant, on the scores or on q and k. Any other additive term of the
// scores shaped [B or 1, H or 1, Sq, Sk] after its broadcast (relative
// positions, ALiBi, a user's own [Sq, Sk] mask) becomes the fused op's score
// bias, read unbroadcast. Anything else leaves the chain as
// it is (the unfused ops stay correct, just slower); when the chain is
// recognizably attention (a softmax over the last axis feeding `P V`), a
// remark at the user's line says what kept it unfused.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "ir/TgOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>
#include <optional>

namespace tgc {

#define GEN_PASS_DEF_TGFUSEATTENTION
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

/// What a matched chain becomes, and the ops it replaces (users first).
struct AttentionChain {
  Value query, key, value, mask, rngKey;
  /// The dropout's run-time rate, where it has one.
  Value dropoutValue;
  /// A padding mask written with unit dims ([B, 1, 1, Sk]): reshaped to
  /// [B, Sk] for the fused op.
  Value maskToReshape;
  /// The [Sq, Sk] causal mask the chain adds, when it has one.
  Value causalMask;
  /// The additive score bias and the [B or 1, H or 1, Sq, Sk] shape the
  /// fused op reads it in (a reshape of `bias` when that differs).
  Value bias;
  SmallVector<int64_t> biasShape;
  bool causal = false;
  float scale = 1.0f, dropoutRate = 0.0f;
  int64_t opId = 0;
  SmallVector<Operation *> ops;
  /// Mask producers (broadcasts, causal_mask) erased if nothing else uses
  /// them. A set: one broadcast added twice (as the mask and as the bias)
  /// is one producer, erased once.
  llvm::SetVector<Operation *> maskOps;
};

enum class Match { Fused, NotAttention, ExtraUse, Unfusable };

/// `v` as `input * factor` when it is a tg.scale, or a tg.mul or tg.div by
/// an f32 splat constant: the forms a user's scale takes.
std::optional<std::pair<Value, float>> asScale(Value v) {
  Operation *op = v.getDefiningOp();
  if (auto scale = llvm::dyn_cast_or_null<tg::ScaleOp>(op))
    return std::pair(scale.getInput(), scale.getFactor().convertToFloat());
  if (!llvm::isa_and_nonnull<tg::MulOp, tg::DivOp>(op))
    return std::nullopt;
  auto splat = [](Value c) -> std::optional<float> {
    auto constant = c.getDefiningOp<tg::ConstantOp>();
    auto dense = constant
                     ? llvm::dyn_cast<SplatElementsAttr>(constant.getValue())
                     : nullptr;
    if (!dense || !dense.getElementType().isF32())
      return std::nullopt;
    return dense.getSplatValue<APFloat>().convertToFloat();
  };
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  if (llvm::isa<tg::DivOp>(op)) {
    std::optional<float> c = splat(rhs);
    if (!c || *c == 0.0f || !std::isfinite(1.0f / *c))
      return std::nullopt;
    return std::pair(lhs, 1.0f / *c);
  }
  if (std::optional<float> c = splat(rhs))
    return std::pair(lhs, *c);
  if (std::optional<float> c = splat(lhs))
    return std::pair(rhs, *c);
  return std::nullopt;
}

class AttentionMatcher {
public:
  /// Why a recognizable attention chain did not fuse, and where.
  std::string why;
  Operation *at = nullptr;

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
      chain.dropoutValue = dropout.getRateValue();
      chain.opId = dropout.getOpId();
      x = dropout.getInput();
    }
    auto softmax = x.getDefiningOp<tg::SoftmaxOp>();
    if (!softmax || softmax.getAxis() != 3)
      return Match::NotAttention;
    // From here on it is attention: a failure says why.
    at = softmax;
    take(softmax, chain);
    x = softmax.getInput();

    // Mask and bias adds, in either operand order and either nesting order.
    while (auto add = x.getDefiningOp<tg::AddOp>()) {
      Value rest;
      if (takeMask(add.getRhs(), chain))
        rest = add.getLhs();
      else if (takeMask(add.getLhs(), chain))
        rest = add.getRhs();
      else {
        // The term is the side that does not continue towards Q K^T.
        bool scoresOnLeft = leadsToScores(add.getLhs());
        Value term = scoresOnLeft ? add.getRhs() : add.getLhs();
        rest = scoresOnLeft ? add.getLhs() : add.getRhs();
        if (chain.bias)
          return unfusable(add, "the scores have more than one additive "
                                "bias (add them into one before the scores)");
        if (!takeBias(term, chain))
          return unfusable(add, "an additive term of the scores is neither a "
                                "mask nor a score bias [B or 1, H or 1, Sq, "
                                "Sk]");
      }
      take(add, chain);
      x = rest;
    }
    if (auto scale = asScale(x)) {
      take(x.getDefiningOp(), chain);
      chain.scale = scale->second;
      x = scale->first;
    }
    auto scores = x.getDefiningOp<tg::MatmulOp>();
    if (!scores || scores.getTransposeLhs() || !scores.getTransposeRhs() ||
        scores.getLhs().getType().getRank() != 4 ||
        scores.getRhs().getType().getRank() != 4)
      return unfusable(x.getDefiningOp() ? x.getDefiningOp() : softmax,
                       "the softmax's input is not Q K^T (a tg.matmul with "
                       "transpose_rhs of [B, H, S, D] operands), scaled and "
                       "masked");
    take(scores, chain);
    chain.query = scores.getLhs();
    chain.key = scores.getRhs();
    // A scale written on q or k (q / sqrt(d) before the product).
    for (Value *operand : {&chain.query, &chain.key})
      if (auto scale = asScale(*operand);
          scale && operand->getDefiningOp()->hasOneUse()) {
        chain.ops.push_back(operand->getDefiningOp());
        chain.scale *= scale->second;
        *operand = scale->first;
      }
    // tg.attention takes a positive, finite scale: a negative or zero
    // factor, or factors whose product overflows, stay as they are.
    if (!(chain.scale > 0.0f) || !std::isfinite(chain.scale))
      return unfusable(scores, "the scores' scale (the product of the "
                               "factors on q, k and the scores) is not "
                               "positive and finite");
    if (!shapesFit(chain))
      return unfusable(scores, "the shapes of q, k, v and the masks do not "
                               "fit one attention");
    if (extraUse)
      return unfusable(extraUser, "the value of this " +
                                      extraUser->getName().getStringRef().str() +
                                      " has another use (the fused op keeps "
                                      "no intermediate)",
                       Match::ExtraUse);
    return Match::Fused;
  }

private:
  Match unfusable(Operation *op, const std::string &reason,
                  Match kind = Match::Unfusable) {
    at = op;
    why = reason;
    return kind;
  }

  /// Adds `op` to the chain, noting whether its result has another use:
  /// the structure is matched first, so only real attention chains count as
  /// rejected for an extra use.
  void take(Operation *op, AttentionChain &chain) {
    if (!op->getResult(0).hasOneUse() && !extraUse) {
      extraUse = true;
      extraUser = op;
    }
    chain.ops.push_back(op);
  }

  bool extraUse = false;
  Operation *extraUser = nullptr;

  /// The [rows, cols] tensor that `broadcast` spreads over result dims
  /// (first, second) of its rank-4 result, whatever unit dims the written
  /// form has: broadcast(m, dims [first, second]), or broadcast of m
  /// reshaped to [.., 1, ..]. Returns the [rows, cols] value (null if it is
  /// not that) and, when it must be reshaped into it, the value to reshape.
  static std::pair<Value, Value> spreadOver(tg::BroadcastOp broadcast,
                                            int64_t first, int64_t second) {
    auto out = cast<RankedTensorType>(broadcast.getType()).getShape();
    Value input = broadcast.getInput();
    auto in = cast<RankedTensorType>(input.getType()).getShape();
    ArrayRef<int64_t> dims = broadcast.getDims();
    int64_t count = 1;
    for (auto [i, size] : llvm::enumerate(in)) {
      count *= size;
      if (size != 1 && ((dims[i] != first && dims[i] != second) ||
                        size != out[dims[i]]))
        return {};
    }
    if (count != out[first] * out[second])
      return {};
    SmallVector<int64_t> wanted = {out[first], out[second]};
    if (in == ArrayRef<int64_t>(wanted))
      return {input, Value()};
    // Through a reshape that only added unit dims: its input.
    if (auto reshape = input.getDefiningOp<tg::ReshapeOp>())
      if (cast<RankedTensorType>(reshape.getInput().getType()).getShape() ==
          ArrayRef<int64_t>(wanted))
        return {reshape.getInput(), Value()};
    return {Value(), input};
  }

  /// Whether `v` is computed from a trainable variable (through ops that
  /// pass gradients on): tg.attention takes its mask as data, which autodiff
  /// does not differentiate, so such a term is no mask.
  static bool dependsOnTrainable(Value v) {
    SmallVector<Value> values = {v};
    llvm::DenseSet<Value> seen;
    while (!values.empty()) {
      Value value = values.pop_back_val();
      Operation *def = value.getDefiningOp();
      if (!seen.insert(value).second || !def ||
          def->hasTrait<tg::traits::BlocksGradient>())
        continue;
      if (auto load = llvm::dyn_cast<tg::LoadOp>(def)) {
        auto variable = SymbolTable::lookupNearestSymbolFrom<tg::VariableOp>(
            load, load.getVariableAttr());
        if (variable && variable.getTrainable())
          return true;
        continue;
      }
      llvm::append_range(values, def->getOperands());
    }
    return false;
  }

  /// `v` = a padding mask [B, Sk] spread over dims 0 and 3, or a causal
  /// mask spread over dims 2 and 3, in any of the written forms; each kind
  /// at most once. A learned term of that form (a key bias) is neither.
  bool takeMask(Value v, AttentionChain &chain) {
    auto broadcast = v.getDefiningOp<tg::BroadcastOp>();
    if (!broadcast || dependsOnTrainable(broadcast.getInput()) ||
        cast<RankedTensorType>(broadcast.getType()).getRank() != 4 ||
        !cast<RankedTensorType>(broadcast.getType()).getElementType().isF32())
      return false;
    auto [causal, causalReshape] = spreadOver(broadcast, 2, 3);
    if (causal && causal.getDefiningOp<tg::CausalMaskOp>() && !chain.causal) {
      chain.causal = true;
      chain.causalMask = causal;
      chain.maskOps.insert(broadcast);
      chain.maskOps.insert(causal.getDefiningOp());
      return true;
    }
    auto [padding, paddingReshape] = spreadOver(broadcast, 0, 3);
    if ((padding || paddingReshape) && !chain.mask && !chain.maskToReshape) {
      chain.mask = padding;
      chain.maskToReshape = paddingReshape;
      chain.maskOps.insert(broadcast);
      return true;
    }
    return false;
  }

  /// Whether `v` continues the chain towards Q K^T: another add, a scale or
  /// the product itself.
  static bool leadsToScores(Value v) {
    Operation *op = v.getDefiningOp();
    if (llvm::isa_and_nonnull<tg::AddOp>(op) || asScale(v))
      return true;
    auto matmul = llvm::dyn_cast_or_null<tg::MatmulOp>(op);
    return matmul && matmul.getTransposeRhs();
  }

  /// `v` = a score bias: an f32 [B, H, Sq, Sk] value, or a broadcast of one
  /// that is [B or 1, H or 1, Sq, Sk] with its unit dims in place (its
  /// elements in that order, so at most a reshape away).
  bool takeBias(Value v, AttentionChain &chain) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getRank() != 4 || !type.getElementType().isF32())
      return false;
    auto broadcast = v.getDefiningOp<tg::BroadcastOp>();
    if (!broadcast) {
      chain.bias = v;
      chain.biasShape.assign(type.getShape().begin(), type.getShape().end());
      return true;
    }
    ArrayRef<int64_t> out = type.getShape(), dims = broadcast.getDims();
    auto in = cast<RankedTensorType>(broadcast.getInput().getType()).getShape();
    SmallVector<int64_t> sizes(4, 1);
    int64_t lastDim = -1;
    for (auto [size, dim] : llvm::zip(in, dims)) {
      if (size == 1)
        continue;
      if (dim <= lastDim)
        return false;
      lastDim = dim;
      sizes[dim] = size;
    }
    if (sizes[2] != out[2] || sizes[3] != out[3])
      return false;
    chain.bias = broadcast.getInput();
    chain.biasShape = sizes;
    chain.maskOps.insert(broadcast);
    return true;
  }

  /// q [B,H,Sq,D], k [B,H,Sk,D], v [B,H,Sk,Dv], causal Sq == Sk (the
  /// masks' and the bias's shapes are the scores' by construction).
  bool shapesFit(const AttentionChain &c) {
    auto shape = [](Value v) {
      return cast<RankedTensorType>(v.getType()).getShape();
    };
    ArrayRef<int64_t> q = shape(c.query), k = shape(c.key), v = shape(c.value);
    bool fit = q[0] == k[0] && q[0] == v[0] && q[1] == k[1] && q[1] == v[1] &&
               q[3] == k[3] && k[2] == v[2];
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
    unsigned fused = 0, causal = 0, masked = 0, biased = 0, rejected = 0,
             unfusable = 0;
    // Program order: a chain's Q K^T matmul (erased when the chain fuses)
    // comes before its P V root, so it has been visited already.
    SmallVector<tg::MatmulOp> roots;
    getOperation().walk([&](tg::MatmulOp op) { roots.push_back(op); });
    IRRewriter rewriter(&getContext());
    llvm::DenseSet<Location> remarked;
    for (tg::MatmulOp root : roots) {
      AttentionChain chain;
      AttentionMatcher matcher;
      Match match = matcher.match(root, chain);
      rejected += match == Match::ExtraUse;
      unfusable += match == Match::Unfusable;
      if (match == Match::ExtraUse || match == Match::Unfusable) {
        // Once per line: @predict repeats the loss function's ops.
        if (remarks && remarked.insert(matcher.at->getLoc()).second)
          matcher.at->emitRemark()
              << "attention left unfused: " << matcher.why;
        continue;
      }
      if (match != Match::Fused)
        continue;
      fuse(rewriter, root, chain);
      ++fused;
      causal += chain.causal;
      masked += chain.mask || chain.maskToReshape ? 1 : 0;
      biased += chain.bias ? 1 : 0;
    }
    numFused = fused;
    numCausal = causal;
    numMasked = masked;
    numRejected = rejected;
    if (report)
      getOperation().emitRemark()
          << "tg-fuse-attention: fused " << fused << " attention chains ("
          << causal << " causal, " << masked << " with a padding mask, "
          << biased << " with a score bias); "
          << rejected << " left unfused because an intermediate has another use"
          << ", " << unfusable << " for another reason";
  }

  void fuse(IRRewriter &rewriter, tg::MatmulOp root,
            const AttentionChain &chain) {
    SmallVector<Location> locs;
    for (Operation *op : llvm::reverse(chain.ops))
      locs.push_back(op->getLoc());
    rewriter.setInsertionPoint(root);
    Value mask = chain.mask;
    if (chain.maskToReshape) {
      auto scores = cast<RankedTensorType>(chain.maskOps.front()->getResult(0).getType());
      mask = rewriter.create<tg::ReshapeOp>(
          chain.maskToReshape.getLoc(),
          RankedTensorType::get({scores.getDimSize(0), scores.getDimSize(3)},
                                rewriter.getF32Type()),
          chain.maskToReshape);
    }
    Value bias = chain.bias;
    if (bias && cast<RankedTensorType>(bias.getType()).getShape() !=
                    ArrayRef<int64_t>(chain.biasShape))
      bias = rewriter.create<tg::ReshapeOp>(
          bias.getLoc(),
          RankedTensorType::get(chain.biasShape, rewriter.getF32Type()), bias);
    auto attention = rewriter.create<tg::AttentionOp>(
        FusedLoc::get(&getContext(), locs), chain.query, chain.key,
        chain.value, mask, chain.dropoutRate > 0 ? chain.rngKey : Value(),
        chain.causal, chain.scale, chain.dropoutRate, chain.opId,
        /*position=*/Value(), /*sequenceMajor=*/false, bias,
        chain.dropoutRate > 0 ? chain.dropoutValue : Value());
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
