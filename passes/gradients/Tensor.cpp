//===- Tensor.cpp - gradients of shapes and reductions --------------------===//
//
// The backward of the shape ops, reductions, slices, concatenation,
// gathers, embedding, dropout and rotary embedding: shape changes undone,
// sums spread back over what they reduced, each joined input's stretch
// sliced back out, the slice's, the gathers' and the mask's own backward
// ops, the inverse rotation. Masks and positions have no rule
// (NoGradient.cpp).
//
//===----------------------------------------------------------------------===//
#include "passes/gradients/GradientModel.h"

#include "ir/TgOps.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace tgc::gradients {
namespace {

/// The inverse of a broadcast: sum over the replicated dimensions.
Value unbroadcast(GradientBuilder &r, tg::BroadcastOp op, Value dy) {
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
Value spreadOverReduced(GradientBuilder &r, Value input, ArrayRef<int64_t> dims,
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

LogicalResult broadcastRule(GradientBuilder &r, tg::BroadcastOp broadcast) {
  r.set(0, unbroadcast(r, broadcast, r.dy()));
  return success();
}

LogicalResult reshapeRule(GradientBuilder &r, tg::ReshapeOp reshape) {
  r.set(0, r.reshape(r.dy(),
                     llvm::cast<RankedTensorType>(reshape.getInput().getType())
                         .getShape()));
  return success();
}

LogicalResult transposeRule(GradientBuilder &r, tg::TransposeOp transpose) {
  ArrayRef<int64_t> perm = transpose.getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  r.set(0, r.make<tg::TransposeOp>(transpose.getInput().getType(), r.dy(),
                                   inverse));
  return success();
}

LogicalResult reduceSumRule(GradientBuilder &r, tg::ReduceSumOp sum) {
  r.set(0, spreadOverReduced(r, sum.getInput(), sum.getDims(),
                             sum.getKeepDims(), r.dy()));
  return success();
}

LogicalResult reduceMeanRule(GradientBuilder &r, tg::ReduceMeanOp mean) {
  Value spread = spreadOverReduced(r, mean.getInput(), mean.getDims(),
                                   mean.getKeepDims(), r.dy());
  r.set(0, r.scale(spread, 1.0 / static_cast<double>(reducedCount(mean))));
  return success();
}

LogicalResult reduceMaxRule(GradientBuilder &r, tg::ReduceMaxOp max) {
  // dy flows to the maxima, shared equally by tied ones (as torch.amax
  // does): where the tie is exact because the tied values are one variable
  // (a max over the embeddings of a repeated token), that is the
  // derivative; each maximum taking all of dy would count it once per tie.
  // The maxima are the elements equal to the maximum; their count per
  // reduced group divides g.
  Value x = max.getInput();
  ArrayRef<int64_t> dims = max.getDims();
  bool keepDims = max.getKeepDims();
  Value g = spreadOverReduced(r, x, dims, keepDims, r.dy());
  Value m = spreadOverReduced(r, x, dims, keepDims, max.getResult());
  Value atMax = r.make<tg::EqualOp>(x, m);
  Value ties = spreadOverReduced(r, x, dims, /*keepDims=*/false,
                                 r.sum(atMax, dims));
  r.set(0, r.make<tg::DivOp>(r.make<tg::MulOp>(g, atMax), ties));
  return success();
}

LogicalResult embeddingRule(GradientBuilder &r, tg::EmbeddingOp embedding) {
  r.set(0, r.make<tg::EmbeddingGradOp>(embedding.getTable().getType(), r.dy(),
                                       embedding.getIds()));
  return success();
}

LogicalResult sliceRule(GradientBuilder &r, tg::SliceOp slice) {
  r.set(0, r.make<tg::SliceGradOp>(slice.getInput().getType(), r.dy(),
                                   slice.getDim(), slice.getStart()));
  return success();
}

// Each input's gradient is its stretch of dy along the joined dimension.
LogicalResult concatRule(GradientBuilder &r, tg::ConcatOp concat) {
  int64_t dim = concat.getDim(), start = 0;
  for (auto [index, input] : llvm::enumerate(concat.getInputs())) {
    if (r.wants(index))
      r.set(index,
            r.make<tg::SliceOp>(input.getType(), r.dy(), dim, start));
    start += tensorOf(input).getDimSize(dim);
  }
  return success();
}

// The indices are integers: only the input has a gradient.
LogicalResult gatherRule(GradientBuilder &r, tg::GatherOp gather) {
  r.set(0, r.make<tg::GatherGradOp>(gather.getInput().getType(), r.dy(),
                                    gather.getIndices(), gather.getDim()));
  return success();
}

LogicalResult dropoutRule(GradientBuilder &r, tg::DropoutOp dropout) {
  // The mask is regenerated from (key, op_id), never stored; at the
  // forward's rate (its run-time one too).
  r.set(0, r.make<tg::DropoutGradOp>(r.dy(), dropout.getKey(),
                                     dropout.getRateValue(),
                                     dropout.getRateAttr(),
                                     dropout.getOpIdAttr()));
  return success();
}

// A rotation is orthogonal: its transpose, the rotation by minus the same
// angles, carries dy back.
LogicalResult rotaryRule(GradientBuilder &r, tg::RotaryOp rotary) {
  r.set(0, r.make<tg::RotaryOp>(rotary.getType(), r.dy(), rotary.getOffset(),
                                rotary.getBase(), !rotary.getInverse()));
  return success();
}

} // namespace

void attachTensorGradients(MLIRContext *context) {
  attachGradientRule<tg::BroadcastOp, broadcastRule>(context);
  attachGradientRule<tg::ReshapeOp, reshapeRule>(context);
  attachGradientRule<tg::StopGradientOp, blockedGradient>(context);
  attachGradientRule<tg::TransposeOp, transposeRule>(context);
  attachGradientRule<tg::ReduceSumOp, reduceSumRule>(context);
  attachGradientRule<tg::ReduceMeanOp, reduceMeanRule>(context);
  attachGradientRule<tg::ReduceMaxOp, reduceMaxRule>(context);
  attachGradientRule<tg::SliceOp, sliceRule>(context);
  attachGradientRule<tg::ConcatOp, concatRule>(context);
  attachGradientRule<tg::GatherOp, gatherRule>(context);
  attachGradientRule<tg::EmbeddingOp, embeddingRule>(context);
  attachGradientRule<tg::DropoutOp, dropoutRule>(context);
  attachGradientRule<tg::RotaryOp, rotaryRule>(context);
}

} // namespace tgc::gradients
