//===- TgOps.cpp - verifiers of the unfused tg ops and their gradients ---===//
#include "ir/TgOps.h"
#include "ir/TgVerify.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;

namespace tgc::tg {

//===----------------------------------------------------------------------===//
// Embeddings
//===----------------------------------------------------------------------===//

/// What a gather of `input` along `dim` by `indices` makes:
/// input[:dim] ++ indices ++ input[dim+1:] (an embedding: dim 0 of [V, D]).
static SmallVector<int64_t> gatheredShape(ArrayRef<int64_t> input,
                                          Value indices, int64_t dim) {
  SmallVector<int64_t> shape(input.take_front(dim));
  llvm::append_range(shape, shapeOf(indices));
  llvm::append_range(shape, input.drop_front(dim + 1));
  return shape;
}

LogicalResult EmbeddingOp::verify() {
  if (failed(expectRank(*this, "table", getTable(), 2)))
    return failure();
  return expectShape(*this, "result", getResult(),
                     gatheredShape(shapeOf(getTable()), getIds(), 0));
}

LogicalResult EmbeddingGradOp::verify() {
  if (failed(expectRank(*this, "result", getResult(), 2)))
    return failure();
  if (getAddend() && getAddend().getType() != getResult().getType())
    return emitOpError() << "addend must have the result's type "
                         << getResult().getType() << " but is "
                         << getAddend().getType();
  return expectShape(*this, "grad", getGrad(),
                     gatheredShape(shapeOf(getResult()), getIds(), 0));
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

/// The shape checks a product's operands and result share (tg.matmul and
/// tg.matmul_add): ranks, batch dimensions, the contraction and the result.
static LogicalResult verifyProduct(Operation *op, Value lhsValue,
                                   Value rhsValue, bool transposeLhs,
                                   bool transposeRhs, Value result) {
  auto lhs = shapeOf(lhsValue);
  auto rhs = shapeOf(rhsValue);
  if (lhs.size() < 2 || rhs.size() < 2)
    return op->emitOpError() << "operands must have rank >= 2 but are "
                             << formatShape(lhs) << " and "
                             << formatShape(rhs);
  if (rhs.size() != 2 && rhs.size() != lhs.size())
    return op->emitOpError() << "rhs must be a matrix or have lhs's rank "
                             << lhs.size() << " but is " << formatShape(rhs);
  auto lhsBatch = lhs.drop_back(2);
  if (rhs.size() != 2 && rhs.drop_back(2) != lhsBatch)
    return op->emitOpError() << "batch dimensions differ: lhs "
                             << formatShape(lhs) << ", rhs "
                             << formatShape(rhs);

  int64_t m = lhs[lhs.size() - (transposeLhs ? 1 : 2)];
  int64_t kLhs = lhs[lhs.size() - (transposeLhs ? 2 : 1)];
  int64_t kRhs = rhs[rhs.size() - (transposeRhs ? 1 : 2)];
  int64_t n = rhs[rhs.size() - (transposeRhs ? 2 : 1)];
  if (kLhs != kRhs)
    return op->emitOpError()
           << "contraction sizes differ: lhs " << formatShape(lhs)
           << " contracts " << kLhs << ", rhs " << formatShape(rhs)
           << " contracts " << kRhs;
  SmallVector<int64_t> expected(lhsBatch);
  expected.append({m, n});
  return expectShape(op, "result", result, expected);
}

LogicalResult MatmulOp::verify() {
  if (failed(expectSameElementType(*this, "lhs", getLhs(), "rhs", getRhs())) ||
      failed(expectGemmResultType(*this, getLhs(), getResult())))
    return failure();
  return verifyProduct(*this, getLhs(), getRhs(), getTransposeLhs(),
                       getTransposeRhs(), getResult());
}

LogicalResult MatmulAddOp::verify() {
  if (failed(expectSameElementType(*this, "lhs", getLhs(), "rhs", getRhs())) ||
      failed(verifyProduct(*this, getLhs(), getRhs(), getTransposeLhs(),
                           getTransposeRhs(), getResult())))
    return failure();
  return expectShape(*this, "addend", getAddend(), shapeOf(getResult()));
}

LogicalResult WeightBiasGradOp::verify() {
  if (failed(expectSameElementType(*this, "input", getInput(), "grad",
                                   getGrad())) ||
      failed(expectRank(*this, "input", getInput(), 2)) ||
      failed(expectRank(*this, "grad", getGrad(), 2)))
    return failure();
  auto input = shapeOf(getInput()), grad = shapeOf(getGrad());
  if (input[0] != grad[0])
    return emitOpError() << "input and grad must have one row count but have "
                         << formatShape(input) << " and " << formatShape(grad);
  if (failed(expectShape(*this, "weight_grad", getWeightGrad(),
                         {input[1], grad[1]})))
    return failure();
  return expectShape(*this, "bias_grad", getBiasGrad(), {grad[1]});
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult ScaleOp::verify() {
  float factor = getFactor().convertToFloat();
  if (std::isfinite(factor))
    return success();
  return emitOpError() << "factor must be finite but is "
                       << formatNumber(factor);
}

LogicalResult PowOp::verify() {
  float exponent = getExponent().convertToFloat();
  if (std::isfinite(exponent))
    return success();
  return emitOpError() << "exponent must be finite but is "
                       << formatNumber(exponent);
}

//===----------------------------------------------------------------------===//
// Shape ops and reductions
//===----------------------------------------------------------------------===//

static LogicalResult expectSameElementType(Operation *op, Value input,
                                           Value result) {
  Type in = llvm::cast<ShapedType>(input.getType()).getElementType();
  Type out = llvm::cast<ShapedType>(result.getType()).getElementType();
  if (in == out)
    return success();
  return op->emitOpError() << "result element type " << out
                           << " differs from the input's " << in;
}

LogicalResult BroadcastOp::verify() {
  if (failed(expectSameElementType(*this, getInput(), getResult())))
    return failure();
  auto in = shapeOf(getInput());
  auto out = shapeOf(getResult());
  auto dims = getDims();
  if (dims.size() != in.size())
    return emitOpError() << "dims " << formatShape(dims) << " must name one "
                         << "result dimension per input dimension of "
                         << formatShape(in);
  if (!in.empty() &&
      failed(verifyDimList(*this, "dims", dims, static_cast<int64_t>(out.size()))))
    return failure();
  for (auto [index, dim] : llvm::enumerate(dims))
    if (in[index] != 1 && in[index] != out[dim])
      return emitOpError() << "input dimension " << index << " (size "
                           << in[index] << ") must be 1 or match result "
                           << "dimension " << dim << " (size " << out[dim]
                           << "): " << formatShape(in) << " -> "
                           << formatShape(out);
  return success();
}

LogicalResult ReshapeOp::verify() {
  if (failed(expectSameElementType(*this, getInput(), getResult())))
    return failure();
  auto in = llvm::cast<ShapedType>(getInput().getType());
  auto out = llvm::cast<ShapedType>(getResult().getType());
  if (in.getNumElements() == out.getNumElements())
    return success();
  return emitOpError() << "element count differs: " << formatShape(in.getShape())
                       << " has " << in.getNumElements() << ", "
                       << formatShape(out.getShape()) << " has "
                       << out.getNumElements();
}

LogicalResult TransposeOp::verify() {
  // f32 -> bf16: a transpose that rounds as it writes
  // (tg-fold-bf16-roundings folds a copy of its result into it).
  bool rounding =
      llvm::cast<ShapedType>(getInput().getType()).getElementType().isF32() &&
      llvm::cast<ShapedType>(getResult().getType()).getElementType().isBF16();
  if (!rounding && failed(expectSameElementType(*this, getInput(), getResult())))
    return failure();
  auto in = shapeOf(getInput());
  auto perm = getPermutation();
  SmallVector<bool> seen(in.size(), false);
  bool isPermutation = perm.size() == in.size();
  for (int64_t dim : perm) {
    if (!isPermutation || dim < 0 || dim >= static_cast<int64_t>(in.size()) ||
        seen[dim]) {
      isPermutation = false;
      break;
    }
    seen[dim] = true;
  }
  if (!isPermutation)
    return emitOpError() << "permutation " << formatShape(perm)
                         << " is not a permutation of the " << in.size()
                         << " dimensions of " << formatShape(in);
  SmallVector<int64_t> expected;
  for (int64_t dim : perm)
    expected.push_back(in[dim]);
  return expectShape(*this, "result", getResult(), expected);
}

/// Shared by reduce_sum, reduce_max and reduce_mean.
static LogicalResult verifyReduction(Operation *op, Value input, Value result,
                                     ArrayRef<int64_t> dims, bool keepDims) {
  auto in = shapeOf(input);
  if (failed(verifyDimList(op, "dims", dims, static_cast<int64_t>(in.size()))))
    return failure();
  SmallVector<int64_t> expected;
  for (auto [index, size] : llvm::enumerate(in)) {
    bool reduced = llvm::is_contained(dims, static_cast<int64_t>(index));
    if (!reduced)
      expected.push_back(size);
    else if (keepDims)
      expected.push_back(1);
  }
  return expectShape(op, "result", result, expected);
}

LogicalResult ReduceSumOp::verify() {
  return verifyReduction(*this, getInput(), getResult(), getDims(),
                         getKeepDims());
}
LogicalResult ReduceMaxOp::verify() {
  return verifyReduction(*this, getInput(), getResult(), getDims(),
                         getKeepDims());
}
LogicalResult ReduceMeanOp::verify() {
  return verifyReduction(*this, getInput(), getResult(), getDims(),
                         getKeepDims());
}

//===----------------------------------------------------------------------===//
// Slices, concatenation and gathers
//===----------------------------------------------------------------------===//

/// `part` is `whole` cut to [start, start + size) along `dim`, size being
/// `part`'s size there: tg.slice's result of its input, tg.slice_grad's
/// operand of its result.
static LogicalResult verifySliceOf(Operation *op, StringRef wholeName,
                                   Value whole, StringRef partName, Value part,
                                   int64_t dim, int64_t start) {
  auto shape = shapeOf(whole);
  int64_t rank = static_cast<int64_t>(shape.size());
  if (failed(verifyAxis(op, dim, rank, "dim")) ||
      failed(expectRank(op, partName, part, rank)))
    return failure();
  int64_t size = shapeOf(part)[dim];
  // start > end - size, not start + size > end: a start near 2^63 wrapped
  // the sum and passed (the slice then read and wrote out of bounds).
  if (start < 0 || size > shape[dim] || start > shape[dim] - size) {
    const int64_t end = start > INT64_MAX - size ? INT64_MAX : start + size;
    return op->emitOpError() << "elements [" << start << ", " << end
                             << ") along dim " << dim << " are not all in "
                             << wholeName << " " << formatShape(shape);
  }
  SmallVector<int64_t> expected(shape);
  expected[dim] = size;
  return expectShape(op, partName, part, expected);
}

LogicalResult SliceOp::verify() {
  return verifySliceOf(*this, "input", getInput(), "result", getResult(),
                       getDim(), getStart());
}

LogicalResult SliceGradOp::verify() {
  return verifySliceOf(*this, "result", getResult(), "grad", getGrad(),
                       getDim(), getStart());
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "needs at least one input";
  auto first = shapeOf(getInputs().front());
  int64_t dim = getDim();
  if (failed(verifyAxis(*this, dim, static_cast<int64_t>(first.size()), "dim")))
    return failure();
  SmallVector<int64_t> joined(first);
  joined[dim] = 0;
  for (auto [index, input] : llvm::enumerate(getInputs())) {
    auto shape = shapeOf(input);
    SmallVector<int64_t> expected(first);
    if (shape.size() == first.size())
      expected[dim] = shape[dim];
    if (shape != ArrayRef<int64_t>(expected))
      return emitOpError() << "input #" << index << " " << formatShape(shape)
                           << " must match input #0 " << formatShape(first)
                           << " in every dimension but dim " << dim;
    joined[dim] += shape[dim];
  }
  return expectShape(*this, "result", getResult(), joined);
}

LogicalResult GatherOp::verify() {
  auto input = shapeOf(getInput());
  if (failed(verifyAxis(*this, getDim(), static_cast<int64_t>(input.size()),
                        "dim")))
    return failure();
  return expectShape(*this, "result", getResult(),
                     gatheredShape(input, getIndices(), getDim()));
}

LogicalResult GatherGradOp::verify() {
  auto result = shapeOf(getResult());
  if (failed(verifyAxis(*this, getDim(), static_cast<int64_t>(result.size()),
                        "dim")))
    return failure();
  return expectShape(*this, "grad", getGrad(),
                     gatheredShape(result, getIndices(), getDim()));
}

//===----------------------------------------------------------------------===//
// Softmax, LayerNorm, RMSNorm, dropout
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), getInput().getType().getRank());
}

LogicalResult SoftmaxGradOp::verify() {
  return verifyAxis(*this, getAxis(), getOutput().getType().getRank());
}

/// The rules tg.layer_norm, tg.rms_norm and their gradients share: gamma
/// (and beta, which has gamma's type by an ODS trait) fits the input's last
/// dimension, and epsilon is positive.
static LogicalResult verifyNorm(Operation *op, Value input, Value gamma,
                                APFloat epsilon) {
  if (failed(verifyNormParam(op, "gamma", gamma, "input", input)))
    return failure();
  return verifyPositive(op, "epsilon", epsilon.convertToFloat());
}

LogicalResult LayerNormOp::verify() {
  return verifyNorm(*this, getInput(), getGamma(), getEpsilon());
}

LogicalResult LayerNormGradOp::verify() {
  return verifyNorm(*this, getInput(), getGamma(), getEpsilon());
}

LogicalResult RmsNormOp::verify() {
  return verifyNorm(*this, getInput(), getGamma(), getEpsilon());
}

LogicalResult RmsNormGradOp::verify() {
  return verifyNorm(*this, getInput(), getGamma(), getEpsilon());
}

LogicalResult DropoutOp::verify() {
  if (failed(verifyRate(*this, "rate", getRate().convertToFloat())) ||
      failed(verifyRunTimeRate(*this, "rate", getRate().convertToFloat(),
                               getRateValue())))
    return failure();
  return verifyOpId(*this, getOpId());
}

LogicalResult DropoutGradOp::verify() {
  if (failed(verifyRate(*this, "rate", getRate().convertToFloat())) ||
      failed(verifyRunTimeRate(*this, "rate", getRate().convertToFloat(),
                               getRateValue())))
    return failure();
  return verifyOpId(*this, getOpId());
}

//===----------------------------------------------------------------------===//
// Masks and positions
//===----------------------------------------------------------------------===//

LogicalResult CausalMaskOp::verify() {
  auto shape = shapeOf(getResult());
  if (shape.size() == 2 && shape[0] == shape[1])
    return success();
  return emitOpError() << "result must be a square [T, T] matrix but is "
                       << formatShape(shape);
}

LogicalResult PaddingMaskOp::verify() {
  return expectShape(*this, "result", getResult(), shapeOf(getIds()));
}

LogicalResult PositionalEncodingOp::verify() {
  auto shape = shapeOf(getResult());
  if (shape.size() != 2)
    return emitOpError() << "result must be a [T, D] matrix but is "
                         << formatShape(shape);
  if (shape[1] % 2 != 0)
    return emitOpError() << "model dimension D must be even (sin/cos pairs) "
                            "but the result is "
                         << formatShape(shape);
  return success();
}

LogicalResult RotaryOp::verify() {
  auto shape = shapeOf(getInput());
  if (shape.size() < 2)
    return emitOpError() << "input must be [..., S, D] (rank >= 2) but is "
                         << formatShape(shape);
  if (shape.back() % 2 != 0)
    return emitOpError() << "head dimension D must be even (rotated halves) "
                            "but the input is "
                         << formatShape(shape);
  double base = getBase().convertToDouble();
  if (!std::isfinite(base) || base <= 1.0)
    return emitOpError() << "base must be finite and > 1 but is " << base;
  return success();
}

//===----------------------------------------------------------------------===//
// Loss
//===----------------------------------------------------------------------===//

/// Logits are [..., V] with rank >= 2 and targets are the logits' shape
/// without V.
static LogicalResult verifyLossOperands(Operation *op, Value logits,
                                        Value targets, float smoothing) {
  auto shape = shapeOf(logits);
  if (shape.size() < 2)
    return op->emitOpError() << "logits must have rank >= 2 ([..., V]) but are "
                             << formatShape(shape);
  if (failed(expectShape(op, "targets", targets, dropLast(shape))))
    return failure();
  return verifyRate(op, "smoothing", smoothing);
}

LogicalResult CrossEntropyOp::verify() {
  return verifyLossOperands(*this, getLogits(), getTargets(),
                            getSmoothing().convertToFloat());
}

LogicalResult CrossEntropyGradOp::verify() {
  return verifyLossOperands(*this, getLogits(), getTargets(),
                            getSmoothing().convertToFloat());
}

LogicalResult OutputLossOp::verify() {
  if (failed(expectSameElementType(*this, "hidden", getHidden(), "weight",
                                   getWeight())))
    return failure();
  auto hidden = shapeOf(getHidden()), weight = shapeOf(getWeight());
  if (hidden.size() < 2)
    return emitOpError() << "hidden must have rank >= 2 ([..., d]) but is "
                         << formatShape(hidden);
  if (weight.size() != 2 || weight[1] != hidden.back())
    return emitOpError() << "weight must be [V, d] with d = "
                         << hidden.back() << " (hidden's last dimension) but is "
                         << formatShape(weight);
  if (failed(expectShape(*this, "targets", getTargets(), dropLast(hidden))))
    return failure();
  int64_t rows = 1;
  for (int64_t size : dropLast(hidden))
    rows *= size;
  int64_t chunk = getChunkRows();
  if (chunk < 1 || chunk > rows)
    return emitOpError() << "chunk must be between 1 and the " << rows
                         << " rows but is " << chunk;
  if (failed(expectShape(*this, "workspace", getWorkspace(),
                         SmallVector<int64_t>{chunk, weight[0]})))
    return failure();
  return verifyRate(*this, "smoothing", getSmoothing().convertToFloat());
}

} // namespace tgc::tg
