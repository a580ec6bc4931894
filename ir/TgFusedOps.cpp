//===- TgFusedOps.cpp - verifiers of the fused ops and their gradients ---===//
#include "ir/TgOps.h"
#include "ir/TgVerify.h"

using namespace mlir;

namespace tgc::tg {

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

namespace {
/// The sizes every attention operand is checked against.
struct AttentionShape {
  int64_t batch, heads, queries, keys, keyDim, valueDim;
};
} // namespace

/// A score bias is [B or 1, H or 1, Sq, Sk]: one bias per head, or one
/// shared by every batch row or head.
static LogicalResult verifyScoreBias(Operation *op, Value bias,
                                     const AttentionShape &s) {
  auto shape = shapeOf(bias);
  if (shape.size() != 4 || (shape[0] != s.batch && shape[0] != 1) ||
      (shape[1] != s.heads && shape[1] != 1) || shape[2] != s.queries ||
      shape[3] != s.keys)
    return op->emitOpError()
           << "bias must be [B or 1, H or 1, Sq, Sk] = ["
           << s.batch << " or 1, " << s.heads << " or 1, " << s.queries << ", "
           << s.keys << "] but is " << formatShape(shape);
  return success();
}

/// Checks the rules shared by tg.attention and tg.attention_grad and returns
/// the shape they agree on.
static FailureOr<AttentionShape>
verifyAttentionOperands(Operation *op, Value query, Value key, Value value,
                        Value mask, Value bias, Value rngKey, Value position,
                        bool causal,
                        bool sequenceMajor, float scale, float dropoutRate,
                        int64_t opId) {
  if (failed(expectRank(op, "query", query, 4)) ||
      failed(expectRank(op, "key", key, 4)) ||
      failed(expectRank(op, "value", value, 4)) ||
      failed(expectSameElementType(op, "query", query, "key", key)) ||
      failed(expectSameElementType(op, "query", query, "value", value)))
    return failure();
  auto q = shapeOf(query), k = shapeOf(key), v = shapeOf(value);
  // Dimensions 1 and 2 are heads and positions, or (sequence_major)
  // positions and heads.
  int heads = sequenceMajor ? 2 : 1, positions = sequenceMajor ? 1 : 2;
  AttentionShape s{q[0], q[heads], q[positions], k[positions], q[3], v[3]};
  if (k[0] != s.batch || k[heads] != s.heads || k[3] != s.keyDim)
    return op->emitOpError()
           << "key must be "
           << (sequenceMajor ? "[B, Sk, H, Dk]" : "[B, H, Sk, Dk]")
           << " with B, H, Dk of query " << formatShape(q) << " but is "
           << formatShape(k);
  if (v[0] != s.batch || v[heads] != s.heads || v[positions] != s.keys)
    return op->emitOpError()
           << "value must be "
           << (sequenceMajor ? "[B, Sk, H, Dv]" : "[B, H, Sk, Dv]")
           << " with B, H of query " << formatShape(q) << " and Sk of key "
           << formatShape(k) << " but is " << formatShape(v);
  if (mask && failed(expectShape(op, "mask ([B, Sk])", mask, {s.batch, s.keys})))
    return failure();
  if (bias && failed(verifyScoreBias(op, bias, s)))
    return failure();
  if (bias && position)
    return op->emitOpError() << "a decoding step (position) takes no score "
                                "bias";
  if (position && !causal)
    return op->emitOpError() << "a position (one decoding step over a key "
                                "cache) needs causal attention";
  if (causal && !position && s.queries != s.keys)
    return op->emitOpError() << "causal attention needs as many queries as "
                                "keys but has "
                             << s.queries << " and " << s.keys;
  if (position && s.queries > s.keys)
    return op->emitOpError() << "a decoding step's " << s.queries
                             << " queries exceed its cache of " << s.keys
                             << " keys";
  if (failed(verifyPositive(op, "scale", scale)) ||
      failed(verifyRate(op, "dropout rate", dropoutRate)) ||
      failed(verifyOpId(op, opId)))
    return failure();
  if (dropoutRate > 0.0f && !rngKey)
    return op->emitOpError() << "dropout rate " << formatNumber(dropoutRate)
                             << " needs a dropout key operand";
  return s;
}

/// The operands of tg.attention or tg.attention_grad, then the forward's
/// output [B, H, Sq, Dv] and lse [B, H, Sq] (the forward's results, the
/// gradient's operands; [B, Sq, H, Dv] and [B, Sq, H] sequence-major).
template <typename AttentionLike>
static LogicalResult verifyAttention(AttentionLike op, Value position) {
  bool sequenceMajor = op.getSequenceMajor();
  if (sequenceMajor && position)
    return op.emitOpError() << "a decoding step (position) reads its key "
                               "cache head-major: it cannot be sequence_major";
  auto s = verifyAttentionOperands(
      op, op.getQuery(), op.getKeyIn(), op.getValue(), op.getMask(),
      op.getBias(), op.getRngKey(), position, op.getCausal(), sequenceMajor,
      op.getScale().convertToFloat(), op.getDropoutRate().convertToFloat(),
      op.getOpId());
  if (failed(s) ||
      failed(verifyRunTimeRate(op, "dropout rate",
                               op.getDropoutRate().convertToFloat(),
                               op.getDropoutValue())))
    return failure();
  if (op.getBf16Products() &&
      !llvm::cast<ShapedType>(op.getQuery().getType()).getElementType().isBF16())
    return op.emitOpError() << "bf16_products needs bf16 query, key and value";
  int64_t first = sequenceMajor ? s->queries : s->heads,
          second = sequenceMajor ? s->heads : s->queries;
  if (failed(expectShape(op, "output", op.getOutput(),
                         {s->batch, first, second, s->valueDim})))
    return failure();
  // A bf16 output (tg-fold-bf16-roundings) only where the value product
  // is a bf16 one: the f32 backward reads the output.
  if (llvm::cast<ShapedType>(op.getOutput().getType()).getElementType().isBF16() &&
      !op.getBf16Products())
    return op.emitOpError() << "a bf16 output needs bf16_products";
  return expectShape(op, "lse", op.getLse(), {s->batch, first, second});
}

LogicalResult AttentionOp::verify() {
  return verifyAttention(*this, getPosition());
}

// grad has output's shape; each gradient has its input's shape, and all
// three are f32, or bf16 with bf16_products.
LogicalResult AttentionGradOp::verify() {
  if (failed(verifyAttention(*this, /*position=*/nullptr)))
    return failure();
  if (getGrad().getType().getShape() !=
      llvm::cast<ShapedType>(getOutput().getType()).getShape())
    return emitOpError() << "grad must have output's shape";
  Type element = getQueryGrad().getType().getElementType();
  for (auto [name, input, gradient] :
       {std::tuple<const char *, Value, Value>{"query_grad", getQuery(),
                                               getQueryGrad()},
        {"key_grad", getKeyIn(), getKeyGrad()},
        {"value_grad", getValue(), getValueGrad()}}) {
    auto type = llvm::cast<RankedTensorType>(gradient.getType());
    if (type.getShape() != llvm::cast<ShapedType>(input.getType()).getShape())
      return emitOpError() << name << " must have its input's shape";
    if (type.getElementType() != element)
      return emitOpError() << "the three gradients must have one element type";
  }
  if (element.isBF16() && !getBf16Products())
    return emitOpError() << "bf16 gradients need bf16_products";
  if (Value biasGrad = getBiasGrad()) {
    if (!getBias())
      return emitOpError() << "bias_grad needs a bias";
    if (failed(expectShape(*this, "bias_grad", biasGrad, shapeOf(getBias()))))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Residual + dropout + LayerNorm or RMSNorm
//===----------------------------------------------------------------------===//

/// Checks the rules shared by tg.residual_layer_norm and its gradient:
/// besides the values every residual norm checks, `parts` (beta, the mean,
/// beta's gradient) are there for kind layer and absent for kind rms.
static LogicalResult verifyResidualNorm(
    Operation *op, NormKind kind, const char *rowsName, Value rows,
    Value gamma, float rate, int64_t opId, float epsilon,
    std::initializer_list<std::pair<const char *, Value>> parts) {
  bool layer = kind == NormKind::layer;
  for (auto [name, value] : parts)
    if (static_cast<bool>(value) != layer)
      return op->emitOpError() << "kind " << stringifyNormKind(kind)
                               << (layer ? " needs " : " has no ") << name;
  if (failed(verifyNormParam(op, "gamma", gamma, rowsName, rows)) ||
      failed(verifyRate(op, "rate", rate)) || failed(verifyOpId(op, opId)))
    return failure();
  return verifyPositive(op, "epsilon", epsilon);
}

// Operand/result type equalities and the row-statistics shapes are ODS
// traits (AllTypesMatch, TypesMatchWith); what is left is checked here.

LogicalResult ResidualLayerNormOp::verify() {
  if (Value rounded = getRounded();
      rounded && failed(expectShape(*this, "rounded", rounded,
                                    shapeOf(getResult()))))
    return failure();
  if (failed(verifyRunTimeRate(*this, "rate", getRate().convertToFloat(),
                               getRateValue())))
    return failure();
  return verifyResidualNorm(*this, getKind(), "residual", getResidual(),
                            getGamma(), getRate().convertToFloat(), getOpId(),
                            getEpsilon().convertToFloat(),
                            {{"beta", getBeta()}, {"mean", getMean()}});
}

bool isBiasGradient(ReduceSumOp sum) {
  int64_t rank =
      llvm::cast<RankedTensorType>(sum.getInput().getType()).getRank();
  ArrayRef<int64_t> dims = sum.getDims();
  if (rank < 2 || sum.getKeepDims() ||
      static_cast<int64_t>(dims.size()) != rank - 1)
    return false;
  for (auto [index, dim] : llvm::enumerate(dims))
    if (dim != static_cast<int64_t>(index))
      return false;
  return true;
}

MatmulOp weightGradientOf(ReduceSumOp sum) {
  if (!isBiasGradient(sum))
    return nullptr;
  Value grad = sum.getInput();
  const int64_t biasSize =
      llvm::cast<RankedTensorType>(sum.getType()).getDimSize(0);
  auto rowsOfBias = [&](Value v) {
    auto type = llvm::cast<RankedTensorType>(v.getType());
    return type.getRank() == 2 && type.getDimSize(1) == biasSize;
  };
  SmallVector<Value> views = {grad};
  for (Operation *user : grad.getUsers())
    if (auto reshape = llvm::dyn_cast<ReshapeOp>(user);
        reshape && rowsOfBias(reshape.getResult()))
      views.push_back(reshape.getResult());
  for (Value view : views)
    for (Operation *user : view.getUsers()) {
      auto matmul = llvm::dyn_cast<MatmulOp>(user);
      if (matmul && matmul.getRhs() == view && matmul.getLhs() != view &&
          matmul.getTransposeLhs() && !matmul.getTransposeRhs() &&
          llvm::cast<RankedTensorType>(matmul.getLhs().getType()).getRank() ==
              2 &&
          rowsOfBias(view) && matmul->getBlock() == sum->getBlock())
        return matmul;
    }
  return nullptr;
}

bool isUnwrittenResult(Value value) {
  auto grad = value.getDefiningOp<ResidualLayerNormGradOp>();
  return grad && value == grad.getSublayerGrad() && value.use_empty() &&
         grad.getSublayerGradRounded();
}

LogicalResult ResidualLayerNormGradOp::verify() {
  if (Value rounded = getSublayerGradRounded();
      rounded && failed(expectShape(*this, "rounded", rounded,
                                    shapeOf(getSublayerGrad()))))
    return failure();
  if (failed(verifyRunTimeRate(*this, "rate", getRate().convertToFloat(),
                               getRateValue())))
    return failure();
  return verifyResidualNorm(*this, getKind(), "result", getResult(),
                            getGamma(), getRate().convertToFloat(), getOpId(),
                            getEpsilon().convertToFloat(),
                            {{"beta", getBeta()}, {"beta_grad", getBetaGrad()}});
}

} // namespace tgc::tg
