//===- GradientRules.cpp - the backward of each tg op --------------------===//
//
// One function per differentiable op, found by the op's TypeID in a table
// that also says why each other tg op has none, so the coverage of the
// dialect can be checked without building ops.
//
// Notation: y = op(x...), dy = dL/dy, dx = dL/dx. Rules emit tg ops only, so
// the backward is as inspectable, fusable and executable as the forward.
//
//===----------------------------------------------------------------------===//
#include "passes/GradientRules.h"

#include "ir/OpRuleTable.h"
#include "ir/TgOps.h"

#include "mlir/IR/BuiltinTypes.h"

#include <numeric>

using namespace mlir;

namespace tgc {
namespace {

using Grads = SmallVector<Value>;

RankedTensorType tensorOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Emits the ops of one rule; `grads[i]` is the gradient of operand i.
class RuleBuilder {
public:
  RuleBuilder(OpBuilder &b, const GradientRequest &request)
      : b(b), request(request), loc(request.op->getLoc()),
        grads(request.op->getNumOperands()) {}

  OpBuilder &b;
  const GradientRequest &request;
  Location loc;
  Grads grads;

  Value dy(unsigned result = 0) const { return request.resultGrads[result]; }
  bool wants(unsigned operand) const { return request.wanted.test(operand); }
  void set(unsigned operand, Value grad) {
    if (wants(operand))
      grads[operand] = grad;
  }

  /// Fails unless only the results in `differentiable` carry a gradient.
  LogicalResult onlyThrough(ArrayRef<unsigned> differentiable) {
    for (auto [index, grad] : llvm::enumerate(request.resultGrads))
      if (grad && !llvm::is_contained(differentiable, index))
        return request.op->emitError()
               << "cannot differentiate through result #" << index
               << " of this op; only the main result has a gradient rule";
    return success();
  }

  template <typename OpT, typename... Args> Value make(Args &&...args) {
    return b.create<OpT>(loc, std::forward<Args>(args)...)->getResult(0);
  }

  /// (batched) lhs' x rhs' with the result type the verifier expects.
  Value matmul(Value lhs, Value rhs, bool transposeLhs, bool transposeRhs) {
    ArrayRef<int64_t> l = tensorOf(lhs).getShape(), r = tensorOf(rhs).getShape();
    SmallVector<int64_t> shape(l.drop_back(2));
    shape.push_back(transposeLhs ? l.back() : l[l.size() - 2]);
    shape.push_back(transposeRhs ? r[r.size() - 2] : r.back());
    return make<tg::MatmulOp>(tensorOf(lhs).clone(shape), lhs, rhs,
                              transposeLhs, transposeRhs);
  }
  Value reshape(Value v, ArrayRef<int64_t> shape) {
    if (tensorOf(v).getShape() == shape)
      return v;
    return make<tg::ReshapeOp>(tensorOf(v).clone(shape), v);
  }
  /// Swaps the last two dimensions.
  Value transposeLast(Value v) {
    int64_t rank = tensorOf(v).getRank();
    SmallVector<int64_t> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[rank - 1], perm[rank - 2]);
    SmallVector<int64_t> shape;
    for (int64_t p : perm)
      shape.push_back(tensorOf(v).getDimSize(p));
    return make<tg::TransposeOp>(tensorOf(v).clone(shape), v, perm);
  }
  /// Sums `v` over `dims` (dropping them).
  Value sum(Value v, ArrayRef<int64_t> dims) {
    if (dims.empty())
      return v;
    SmallVector<int64_t> shape;
    for (auto [i, size] : llvm::enumerate(tensorOf(v).getShape()))
      if (!llvm::is_contained(dims, static_cast<int64_t>(i)))
        shape.push_back(size);
    return make<tg::ReduceSumOp>(tensorOf(v).clone(shape), v, dims,
                                 /*keep_dims=*/false);
  }
  Value broadcast(Value v, RankedTensorType to, ArrayRef<int64_t> dims) {
    if (v.getType() == to)
      return v;
    return make<tg::BroadcastOp>(to, v, dims);
  }
  Value scale(Value v, double factor) {
    return make<tg::ScaleOp>(v, b.getF32FloatAttr(static_cast<float>(factor)));
  }
};

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult addRule(RuleBuilder &r, tg::AddOp) {
  r.set(0, r.dy());
  r.set(1, r.dy());
  return success();
}

LogicalResult subRule(RuleBuilder &r, tg::SubOp) {
  Value dy = r.dy();
  r.set(0, dy);
  if (r.wants(1))
    r.set(1, r.make<tg::NegOp>(dy));
  return success();
}

LogicalResult mulRule(RuleBuilder &r, tg::MulOp mul) {
  Value dy = r.dy();
  if (r.wants(0))
    r.set(0, r.make<tg::MulOp>(dy, mul.getRhs()));
  if (r.wants(1))
    r.set(1, r.make<tg::MulOp>(dy, mul.getLhs()));
  return success();
}

LogicalResult divRule(RuleBuilder &r, tg::DivOp div) {
  // d(a/b) = da / b - (a/b) db / b
  Value dyOverRhs = r.make<tg::DivOp>(r.dy(), div.getRhs());
  r.set(0, dyOverRhs);
  if (r.wants(1))
    r.set(1,
          r.make<tg::NegOp>(r.make<tg::MulOp>(dyOverRhs, div->getResult(0))));
  return success();
}

LogicalResult negRule(RuleBuilder &r, tg::NegOp) {
  r.set(0, r.make<tg::NegOp>(r.dy()));
  return success();
}

LogicalResult expRule(RuleBuilder &r, tg::ExpOp op) {
  r.set(0, r.make<tg::MulOp>(r.dy(), op->getResult(0)));
  return success();
}

LogicalResult logRule(RuleBuilder &r, tg::LogOp log) {
  r.set(0, r.make<tg::DivOp>(r.dy(), log.getInput()));
  return success();
}

LogicalResult sqrtRule(RuleBuilder &r, tg::SqrtOp op) { // 1 / (2 sqrt x)
  r.set(0, r.scale(r.make<tg::DivOp>(r.dy(), op->getResult(0)), 0.5));
  return success();
}

// -x^(-3/2) / 2 = -y^3 / 2
LogicalResult rsqrtRule(RuleBuilder &r, tg::RsqrtOp op) {
  Value y = op->getResult(0);
  Value cube = r.make<tg::MulOp>(r.make<tg::MulOp>(y, y), y);
  r.set(0, r.scale(r.make<tg::MulOp>(r.dy(), cube), -0.5));
  return success();
}

LogicalResult reluRule(RuleBuilder &r, tg::ReluOp relu) {
  // The output is positive where the input is, and keeping it (not
  // the input) lets the bias add fuse into the GEMM (tg.linear).
  r.set(0, r.make<tg::ReluGradOp>(r.dy(), relu.getResult()));
  return success();
}

LogicalResult scaleRule(RuleBuilder &r, tg::ScaleOp scale) {
  r.set(0, r.make<tg::ScaleOp>(r.dy(), scale.getFactorAttr()));
  return success();
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

/// y = A' B' where A' = A or A^T, B' = B or B^T:
///   dA' = dy B'^T and dB' = A'^T dy, transposed back where A or B was.
/// A weight B of rank 2 shared by a batched A gets the sum over the batch:
/// one GEMM over the flattened rows when A is not transposed.
LogicalResult matmulRule(RuleBuilder &r, tg::MatmulOp op) {
  Value a = op.getLhs(), bm = op.getRhs(), dy = r.dy();
  bool ta = op.getTransposeLhs(), tb = op.getTransposeRhs();
  bool sharedRhs = tensorOf(bm).getRank() == 2 && tensorOf(a).getRank() > 2;

  if (r.wants(0)) {
    if (!ta)
      r.set(0, r.matmul(dy, bm, false, !tb));
    else if (!sharedRhs) // dA = B' dy^T
      r.set(0, r.matmul(bm, dy, tb, true));
    else // (dy B'^T)^T: B cannot be the batched product's lhs
      r.set(0, r.transposeLast(r.matmul(dy, bm, false, !tb)));
  }
  if (!r.wants(1))
    return success();
  if (sharedRhs && !ta) {
    ArrayRef<int64_t> as = tensorOf(a).getShape(), ds = tensorOf(dy).getShape();
    int64_t rows = tensorOf(dy).getNumElements() / ds.back();
    Value flatA = r.reshape(a, {rows, as.back()});
    Value flatDy = r.reshape(dy, {rows, ds.back()});
    r.set(1, tb ? r.matmul(flatDy, flatA, true, false)
                : r.matmul(flatA, flatDy, true, false));
    return success();
  }
  // dB = A'^T dy, or (A'^T dy)^T = dy^T A' when B was transposed.
  Value db = tb ? r.matmul(dy, a, true, ta) : r.matmul(a, dy, !ta, false);
  if (sharedRhs) {
    SmallVector<int64_t> batch(tensorOf(a).getRank() - 2);
    std::iota(batch.begin(), batch.end(), 0);
    db = r.sum(db, batch);
  }
  r.set(1, db);
  return success();
}

//===----------------------------------------------------------------------===//
// Shapes and reductions
//===----------------------------------------------------------------------===//

/// The inverse of a broadcast: sum over the replicated dimensions.
Value unbroadcast(RuleBuilder &r, tg::BroadcastOp op, Value dy) {
  auto input = tensorOf(op.getInput());
  ArrayRef<int64_t> dims = op.getDims();
  ArrayRef<int64_t> out = tensorOf(op.getResult()).getShape();
  SmallVector<int64_t> replicated;
  for (int64_t j = 0; j < static_cast<int64_t>(out.size()); ++j) {
    auto *it = llvm::find(dims, j);
    if (it == dims.end() ||
        (input.getDimSize(it - dims.begin()) == 1 && out[j] != 1))
      replicated.push_back(j);
  }
  return r.reshape(r.sum(dy, replicated), input.getShape());
}

/// The inverse of a reduction's shape change: dy spread over the reduced
/// dimensions.
Value spreadOverReduced(RuleBuilder &r, Value input, ArrayRef<int64_t> dims,
                        bool keepDims, Value dy) {
  auto type = tensorOf(input);
  SmallVector<int64_t> kept;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (keepDims || !llvm::is_contained(dims, i))
      kept.push_back(i);
  return r.broadcast(dy, type, kept);
}

template <typename ReduceOp> int64_t reducedCount(ReduceOp op) {
  int64_t count = 1;
  for (int64_t d : op.getDims())
    count *= op.getInput().getType().getDimSize(d);
  return count;
}

LogicalResult broadcastRule(RuleBuilder &r, tg::BroadcastOp broadcast) {
  r.set(0, unbroadcast(r, broadcast, r.dy()));
  return success();
}

LogicalResult reshapeRule(RuleBuilder &r, tg::ReshapeOp reshape) {
  r.set(0, r.reshape(r.dy(), llvm::cast<RankedTensorType>(
                                 reshape.getInput().getType())
                                 .getShape()));
  return success();
}

LogicalResult transposeRule(RuleBuilder &r, tg::TransposeOp transpose) {
  ArrayRef<int64_t> perm = transpose.getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  r.set(0, r.make<tg::TransposeOp>(transpose.getInput().getType(), r.dy(),
                                   inverse));
  return success();
}

LogicalResult reduceSumRule(RuleBuilder &r, tg::ReduceSumOp sum) {
  r.set(0, spreadOverReduced(r, sum.getInput(), sum.getDims(),
                             sum.getKeepDims(), r.dy()));
  return success();
}

LogicalResult reduceMeanRule(RuleBuilder &r, tg::ReduceMeanOp mean) {
  Value spread = spreadOverReduced(r, mean.getInput(), mean.getDims(),
                                   mean.getKeepDims(), r.dy());
  r.set(0, r.scale(spread, 1.0 / static_cast<double>(reducedCount(mean))));
  return success();
}

LogicalResult reduceMaxRule(RuleBuilder &r, tg::ReduceMaxOp max) {
  // dy flows to the maxima: relu_grad(g, max - x) keeps g where x is
  // below the maximum, so g - that keeps it exactly where x == max
  // (every tied maximum gets the whole gradient: a subgradient).
  Value x = max.getInput();
  Value g = spreadOverReduced(r, x, max.getDims(), max.getKeepDims(), r.dy());
  Value m = spreadOverReduced(r, x, max.getDims(), max.getKeepDims(),
                              max.getResult());
  Value gap = r.make<tg::SubOp>(m, x);
  r.set(0, r.make<tg::SubOp>(g, r.make<tg::ReluGradOp>(g, gap)));
  return success();
}

//===----------------------------------------------------------------------===//
// Normalization, dropout, embedding, loss, fused ops
//===----------------------------------------------------------------------===//

LogicalResult softmaxRule(RuleBuilder &r, tg::SoftmaxOp softmax) {
  r.set(0, r.make<tg::SoftmaxGradOp>(softmax.getResult(), r.dy(),
                                     softmax.getAxisAttr()));
  return success();
}

LogicalResult layerNormRule(RuleBuilder &r, tg::LayerNormOp norm) {
  Type gammaType = norm.getGamma().getType();
  auto grad = r.b.create<tg::LayerNormGradOp>(
      r.loc, norm.getInput().getType(), gammaType, gammaType, r.dy(),
      norm.getInput(), norm.getGamma(), norm.getEpsilonAttr());
  r.set(0, grad.getInputGrad());
  r.set(1, grad.getGammaGrad());
  r.set(2, grad.getBetaGrad());
  return success();
}

LogicalResult dropoutRule(RuleBuilder &r, tg::DropoutOp dropout) {
  // The mask is regenerated from (key, op_id), never stored.
  r.set(0, r.make<tg::DropoutGradOp>(r.dy(), dropout.getKey(),
                                     dropout.getRateAttr(),
                                     dropout.getOpIdAttr()));
  return success();
}

LogicalResult embeddingRule(RuleBuilder &r, tg::EmbeddingOp embedding) {
  r.set(0, r.make<tg::EmbeddingGradOp>(embedding.getTable().getType(), r.dy(),
                                       embedding.getIds()));
  return success();
}

LogicalResult crossEntropyRule(RuleBuilder &r, tg::CrossEntropyOp loss) {
  r.set(0, r.make<tg::CrossEntropyGradOp>(
               r.dy(), loss.getLogits(), loss.getTargets(),
               loss.getSmoothingAttr(), loss.getIgnoreIndexAttr()));
  return success();
}

LogicalResult attentionRule(RuleBuilder &r, tg::AttentionOp attention) {
  if (failed(r.onlyThrough({0})))
    return failure();
  if (attention.getMask() && r.wants(3))
    return attention.emitError()
           << "cannot differentiate w.r.t. the attention mask: it must "
              "not depend on a trainable variable";
  auto grad = r.b.create<tg::AttentionGradOp>(
      r.loc, tg::withF32Elements(attention.getQuery().getType()),
      tg::withF32Elements(attention.getKeyIn().getType()),
      tg::withF32Elements(attention.getValue().getType()), r.dy(),
      attention.getQuery(), attention.getKeyIn(),
      attention.getValue(), attention.getOutput(), attention.getLse(),
      attention.getMask(), attention.getRngKey(), attention.getCausalAttr(),
      attention.getSequenceMajorAttr(), attention.getBf16ProductsAttr(),
      attention.getScaleAttr(),
      attention.getDropoutRateAttr(), attention.getOpIdAttr());
  r.set(0, grad.getQueryGrad());
  r.set(1, grad.getKeyGrad());
  r.set(2, grad.getValueGrad());
  return success();
}

LogicalResult residualLayerNormRule(RuleBuilder &r,
                                    tg::ResidualLayerNormOp norm) {
  if (failed(r.onlyThrough({0})))
    return failure();
  Type rows = norm.getResult().getType(), columns = norm.getGamma().getType();
  auto grad = r.b.create<tg::ResidualLayerNormGradOp>(
      r.loc, rows, rows, columns, columns, /*sublayer_grad_rounded=*/Type(),
      r.dy(), norm.getResult(), norm.getGamma(), norm.getBeta(),
      norm.getRstd(), norm.getKey(), norm.getRateAttr(), norm.getOpIdAttr(),
      norm.getEpsilonAttr());
  r.set(0, grad.getResidualGrad());
  r.set(1, grad.getSublayerGrad());
  r.set(2, grad.getGammaGrad());
  r.set(3, grad.getBetaGrad());
  return success();
}

//===----------------------------------------------------------------------===//
// The table: every tg op, with its rule or the reason it has none
//===----------------------------------------------------------------------===//

using Rule = OpRule<LogicalResult, RuleBuilder &>;

/// Exactly one of the two is set.
struct Entry {
  Rule::Fn rule;
  StringRef reason;
};
using Table = OpRuleTable<Entry>;

template <typename OpT>
void add(Table &table, LogicalResult (*rule)(RuleBuilder &, OpT)) {
  table.insert<OpT>({Rule::of(rule), StringRef()});
}

/// The ops OpTs, none of which has a rule, for the one `reason`.
template <typename... OpTs> void skip(Table &table, StringRef reason) {
  (table.insert<OpTs>({Rule::Fn(), reason}), ...);
}

Table buildTable() {
  Table t;
  add<tg::AddOp>(t, addRule);
  add<tg::SubOp>(t, subRule);
  add<tg::MulOp>(t, mulRule);
  add<tg::DivOp>(t, divRule);
  add<tg::NegOp>(t, negRule);
  add<tg::ExpOp>(t, expRule);
  add<tg::LogOp>(t, logRule);
  add<tg::SqrtOp>(t, sqrtRule);
  add<tg::RsqrtOp>(t, rsqrtRule);
  add<tg::ReluOp>(t, reluRule);
  add<tg::ScaleOp>(t, scaleRule);
  add<tg::MatmulOp>(t, matmulRule);
  add<tg::BroadcastOp>(t, broadcastRule);
  add<tg::ReshapeOp>(t, reshapeRule);
  add<tg::TransposeOp>(t, transposeRule);
  add<tg::ReduceSumOp>(t, reduceSumRule);
  add<tg::ReduceMeanOp>(t, reduceMeanRule);
  add<tg::ReduceMaxOp>(t, reduceMaxRule);
  add<tg::SoftmaxOp>(t, softmaxRule);
  add<tg::LayerNormOp>(t, layerNormRule);
  add<tg::DropoutOp>(t, dropoutRule);
  add<tg::EmbeddingOp>(t, embeddingRule);
  add<tg::CrossEntropyOp>(t, crossEntropyRule);
  add<tg::AttentionOp>(t, attentionRule);
  add<tg::ResidualLayerNormOp>(t, residualLayerNormRule);

  // State. tg-autodiff never asks for these: see each reason.
  skip<tg::VariableOp>(t, "a module-level declaration, not a value of the "
                          "differentiated function");
  skip<tg::LoadOp>(t, "tg-autodiff itself adds a trainable load's gradient "
                      "to its variable's");
  skip<tg::StoreOp>(t, "has no result, so the loss cannot depend on it");
  skip<tg::StoreSliceOp>(t, "has no result, so the loss cannot depend on it "
                            "(decoder caches)");
  skip<tg::ConstantOp>(t, "has no operand to pass a gradient to");

  // Masks and positions depend only on shapes, ids and offsets: integers,
  // never varied by a trainable variable.
  skip<tg::CausalMaskOp>(t, "has no operand: a function of positions only");
  skip<tg::PaddingMaskOp>(t, "depends only on integer token ids");
  skip<tg::PositionalEncodingOp>(t, "a fixed table; its only operand is an "
                                    "integer offset");

  // What the rules above emit: second-order gradients are not supported.
  skip<tg::EmbeddingGradOp, tg::ReluGradOp, tg::SoftmaxGradOp,
       tg::LayerNormGradOp, tg::DropoutGradOp, tg::CrossEntropyGradOp,
       tg::AttentionGradOp, tg::ResidualLayerNormGradOp>(
      t, "a backward op emitted by tg-autodiff; second-order gradients are "
         "not supported");

  // Built only after tg-autodiff has run.
  skip<tg::FusedElementwiseOp>(t, "built by tg-fuse-elementwise after "
                                  "autodiff");
  skip<tg::YieldOp>(t, "the terminator of tg.fused_elementwise, which exists "
                       "only after autodiff");
  skip<tg::LinearOp>(t, "built by tg-fuse-matmul-epilogue after autodiff");
  skip<tg::ToBf16Op>(t, "built by tg-mixed-precision after autodiff; "
                        "rounding has no useful derivative");
  skip<tg::OutputLossOp>(t, "built by tg-fuse-output-loss after autodiff; "
                            "it holds the loss's gradients itself");
  skip<tg::AdamUpdateOp>(t, "the optimizer step, built by tg-adam from the "
                            "gradients; has no result");
  skip<tg::MultiAdamUpdateOp>(t, "the fused optimizer step, built by "
                                 "tg-fuse-adam; has no result");
  skip<tg::AllReduceOp>(t, "the data-parallel sum of the gradients, built by "
                           "tg-all-reduce-gradients after autodiff");
  return t;
}

const Table &table() {
  static const Table instance = buildTable();
  return instance;
}

} // namespace

bool hasGradientRule(TypeID op) {
  const Entry *entry = table().lookup(op);
  return entry && entry->rule;
}

std::optional<StringRef> nonDifferentiableReason(TypeID op) {
  const Entry *entry = table().lookup(op);
  if (!entry || entry->rule)
    return std::nullopt;
  return entry->reason;
}

FailureOr<SmallVector<Value>>
buildOperandGradients(OpBuilder &b, const GradientRequest &request) {
  Operation *op = request.op;
  const Entry *entry = table().lookup(op->getName().getTypeID());
  if (!entry || !entry->rule)
    return op->emitError() << "no gradient rule for '" << op->getName()
                           << "', which lies on a path from a trainable "
                              "variable to the loss";
  // The rules divide by dimension sizes (rows of a shared matmul weight,
  // the count of a mean): the verifier refuses empty tensors, and this
  // keeps unverified IR from dividing by zero.
  for (TypeRange types : {TypeRange(op->getOperandTypes()),
                          TypeRange(op->getResultTypes())})
    for (Type type : types)
      if (auto tensor = llvm::dyn_cast<RankedTensorType>(type);
          tensor && llvm::is_contained(tensor.getShape(), 0))
        return op->emitError() << "cannot differentiate '" << op->getName()
                               << "': it has an empty tensor, " << type;
  RuleBuilder rule(b, request);
  if (failed(entry->rule(rule, op)))
    return failure();
  return rule.grads;
}

} // namespace tgc
