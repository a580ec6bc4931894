//===- GradientRules.cpp - the backward of each tg op --------------------===//
//
// Notation: y = op(x...), dy = dL/dy, dx = dL/dx. Rules emit tg ops only, so
// the backward is as inspectable, fusable and executable as the forward.
//
//===----------------------------------------------------------------------===//
#include "passes/GradientRules.h"

#include "ir/TgOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/TypeSwitch.h"

#include <numeric>
#include <optional>

using namespace mlir;

namespace tgc {
namespace {

using Grads = SmallVector<Value>;
/// A rule family's answer: nullopt when the op is not one of its ops.
using Outcome = std::optional<LogicalResult>;

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

Outcome elementwise(RuleBuilder &r, Operation *op) {
  Value dy = r.dy();
  Value y = op->getResult(0);
  return llvm::TypeSwitch<Operation *, Outcome>(op)
      .Case([&](tg::AddOp) {
        r.set(0, dy);
        r.set(1, dy);
        return success();
      })
      .Case([&](tg::SubOp) {
        r.set(0, dy);
        if (r.wants(1))
          r.set(1, r.make<tg::NegOp>(dy));
        return success();
      })
      .Case([&](tg::MulOp mul) {
        if (r.wants(0))
          r.set(0, r.make<tg::MulOp>(dy, mul.getRhs()));
        if (r.wants(1))
          r.set(1, r.make<tg::MulOp>(dy, mul.getLhs()));
        return success();
      })
      .Case([&](tg::DivOp div) {
        // d(a/b) = da / b - (a/b) db / b
        Value dyOverRhs = r.make<tg::DivOp>(dy, div.getRhs());
        r.set(0, dyOverRhs);
        if (r.wants(1))
          r.set(1, r.make<tg::NegOp>(r.make<tg::MulOp>(dyOverRhs, y)));
        return success();
      })
      .Case([&](tg::NegOp) {
        r.set(0, r.make<tg::NegOp>(dy));
        return success();
      })
      .Case([&](tg::ExpOp) {
        r.set(0, r.make<tg::MulOp>(dy, y));
        return success();
      })
      .Case([&](tg::LogOp log) {
        r.set(0, r.make<tg::DivOp>(dy, log.getInput()));
        return success();
      })
      .Case([&](tg::SqrtOp) { // 1 / (2 sqrt x)
        r.set(0, r.scale(r.make<tg::DivOp>(dy, y), 0.5));
        return success();
      })
      .Case([&](tg::RsqrtOp) { // -x^(-3/2) / 2 = -y^3 / 2
        Value cube = r.make<tg::MulOp>(r.make<tg::MulOp>(y, y), y);
        r.set(0, r.scale(r.make<tg::MulOp>(dy, cube), -0.5));
        return success();
      })
      .Case([&](tg::ReluOp relu) {
        // The output is positive where the input is, and keeping it (not
        // the input) lets the bias add fuse into the GEMM (tg.linear).
        r.set(0, r.make<tg::ReluGradOp>(dy, relu.getResult()));
        return success();
      })
      .Case([&](tg::ScaleOp scale) {
        r.set(0, r.make<tg::ScaleOp>(dy, scale.getFactorAttr()));
        return success();
      })
      .Default([](Operation *) { return std::nullopt; });
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

/// y = A' B' where A' = A or A^T, B' = B or B^T:
///   dA' = dy B'^T and dB' = A'^T dy, transposed back where A or B was.
/// A weight B of rank 2 shared by a batched A gets the sum over the batch:
/// one GEMM over the flattened rows when A is not transposed.
void matmul(RuleBuilder &r, tg::MatmulOp op) {
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
    return;
  if (sharedRhs && !ta) {
    ArrayRef<int64_t> as = tensorOf(a).getShape(), ds = tensorOf(dy).getShape();
    int64_t rows = tensorOf(dy).getNumElements() / ds.back();
    Value flatA = r.reshape(a, {rows, as.back()});
    Value flatDy = r.reshape(dy, {rows, ds.back()});
    r.set(1, tb ? r.matmul(flatDy, flatA, true, false)
                : r.matmul(flatA, flatDy, true, false));
    return;
  }
  // dB = A'^T dy, or (A'^T dy)^T = dy^T A' when B was transposed.
  Value db = tb ? r.matmul(dy, a, true, ta) : r.matmul(a, dy, !ta, false);
  if (sharedRhs) {
    SmallVector<int64_t> batch(tensorOf(a).getRank() - 2);
    std::iota(batch.begin(), batch.end(), 0);
    db = r.sum(db, batch);
  }
  r.set(1, db);
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

Outcome shapes(RuleBuilder &r, Operation *op) {
  Value dy = r.dy();
  return llvm::TypeSwitch<Operation *, Outcome>(op)
      .Case([&](tg::BroadcastOp broadcast) {
        r.set(0, unbroadcast(r, broadcast, dy));
        return success();
      })
      .Case([&](tg::ReshapeOp reshape) {
        r.set(0, r.reshape(dy, reshape.getInput().getType().getShape()));
        return success();
      })
      .Case([&](tg::TransposeOp transpose) {
        ArrayRef<int64_t> perm = transpose.getPermutation();
        SmallVector<int64_t> inverse(perm.size());
        for (auto [i, p] : llvm::enumerate(perm))
          inverse[p] = i;
        r.set(0, r.make<tg::TransposeOp>(transpose.getInput().getType(), dy,
                                         inverse));
        return success();
      })
      .Case([&](tg::ReduceSumOp sum) {
        r.set(0, spreadOverReduced(r, sum.getInput(), sum.getDims(),
                                   sum.getKeepDims(), dy));
        return success();
      })
      .Case([&](tg::ReduceMeanOp mean) {
        Value spread = spreadOverReduced(r, mean.getInput(), mean.getDims(),
                                         mean.getKeepDims(), dy);
        r.set(0, r.scale(spread, 1.0 / static_cast<double>(reducedCount(mean))));
        return success();
      })
      .Case([&](tg::ReduceMaxOp max) {
        // dy flows to the maxima: relu_grad(g, max - x) keeps g where x is
        // below the maximum, so g - that keeps it exactly where x == max
        // (every tied maximum gets the whole gradient: a subgradient).
        Value x = max.getInput();
        Value g = spreadOverReduced(r, x, max.getDims(), max.getKeepDims(), dy);
        Value m = spreadOverReduced(r, x, max.getDims(), max.getKeepDims(),
                                    max.getResult());
        Value gap = r.make<tg::SubOp>(m, x);
        r.set(0, r.make<tg::SubOp>(g, r.make<tg::ReluGradOp>(g, gap)));
        return success();
      })
      .Default([](Operation *) { return std::nullopt; });
}

//===----------------------------------------------------------------------===//
// Normalization, dropout, embedding, loss, fused ops
//===----------------------------------------------------------------------===//

Outcome layers(RuleBuilder &r, Operation *op) {
  return llvm::TypeSwitch<Operation *, Outcome>(op)
      .Case([&](tg::SoftmaxOp softmax) {
        r.set(0, r.make<tg::SoftmaxGradOp>(softmax.getResult(), r.dy(),
                                           softmax.getAxisAttr()));
        return success();
      })
      .Case([&](tg::LayerNormOp norm) {
        Type gammaType = norm.getGamma().getType();
        auto grad = r.b.create<tg::LayerNormGradOp>(
            r.loc, norm.getInput().getType(), gammaType, gammaType, r.dy(),
            norm.getInput(), norm.getGamma(), norm.getEpsilonAttr());
        r.set(0, grad.getInputGrad());
        r.set(1, grad.getGammaGrad());
        r.set(2, grad.getBetaGrad());
        return success();
      })
      .Case([&](tg::DropoutOp dropout) {
        // The mask is regenerated from (key, op_id), never stored.
        r.set(0, r.make<tg::DropoutGradOp>(r.dy(), dropout.getKey(),
                                           dropout.getRateAttr(),
                                           dropout.getOpIdAttr()));
        return success();
      })
      .Case([&](tg::EmbeddingOp embedding) {
        r.set(0, r.make<tg::EmbeddingGradOp>(embedding.getTable().getType(),
                                             r.dy(), embedding.getIds()));
        return success();
      })
      .Case([&](tg::CrossEntropyOp loss) {
        r.set(0, r.make<tg::CrossEntropyGradOp>(
                     r.dy(), loss.getLogits(), loss.getTargets(),
                     loss.getSmoothingAttr(), loss.getIgnoreIndexAttr()));
        return success();
      })
      .Case([&](tg::AttentionOp attention) -> Outcome {
        if (failed(r.onlyThrough({0})))
          return Outcome(failure());
        if (attention.getMask() && r.wants(3))
          return Outcome(attention.emitError()
                 << "cannot differentiate w.r.t. the attention mask: it must "
                    "not depend on a trainable variable");
        auto grad = r.b.create<tg::AttentionGradOp>(
            r.loc, r.dy(), attention.getQuery(), attention.getKeyIn(),
            attention.getValue(), attention.getOutput(), attention.getLse(),
            attention.getMask(), attention.getRngKey(),
            attention.getCausalAttr(), attention.getScaleAttr(),
            attention.getDropoutRateAttr(), attention.getOpIdAttr());
        r.set(0, grad.getQueryGrad());
        r.set(1, grad.getKeyGrad());
        r.set(2, grad.getValueGrad());
        return success();
      })
      .Case([&](tg::ResidualLayerNormOp norm) -> Outcome {
        if (failed(r.onlyThrough({0})))
          return Outcome(failure());
        auto grad = r.b.create<tg::ResidualLayerNormGradOp>(
            r.loc, r.dy(), norm.getResidual(), norm.getSublayer(),
            norm.getGamma(), norm.getMean(), norm.getRstd(), norm.getKey(),
            norm.getRateAttr(), norm.getOpIdAttr(), norm.getEpsilonAttr());
        r.set(0, grad.getResidualGrad());
        r.set(1, grad.getSublayerGrad());
        r.set(2, grad.getGammaGrad());
        r.set(3, grad.getBetaGrad());
        return success();
      })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace

FailureOr<SmallVector<Value>>
buildOperandGradients(OpBuilder &b, const GradientRequest &request) {
  Operation *op = request.op;
  RuleBuilder rule(b, request);
  Outcome outcome;
  if (auto mm = dyn_cast<tg::MatmulOp>(op)) {
    matmul(rule, mm);
    outcome = success();
  }
  for (auto family : {elementwise, shapes, layers})
    if (!outcome)
      outcome = family(rule, op);
  if (!outcome)
    return op->emitError() << "no gradient rule for '" << op->getName()
                           << "', which lies on a path from a trainable "
                              "variable to the loss";
  if (failed(*outcome))
    return failure();
  return rule.grads;
}

} // namespace tgc
