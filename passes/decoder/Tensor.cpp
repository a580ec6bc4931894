//===- Tensor.cpp - decoder axes of shape ops, reductions, embedding -----===//
//
// Shape ops move the time axis to another dimension, both on the target and
// on what @decode_step recomputes; slices and concatenation keep it unless
// they work along it; a gather keeps its input's or takes its indices';
// the embedding reads the target's ids; the positional encoding is built
// for the one position, and the rotary embedding turns by it; a reduction
// keeps the positions unless it reduces over them. Dropout is refused:
// @predict has none.
//
//===----------------------------------------------------------------------===//
#include "passes/decoder/AxisRequest.h"

#include <algorithm>

using namespace mlir;

namespace tgc {
namespace {

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

FailureOr<OpAxes> reshapeAxes(const AxisRequest &r, tg::ReshapeOp op) {
  int64_t to =
      reshapeAxis(shapeOf(op.getInput()), shapeOf(op.getResult()), r.axis);
  if (to == kNoAxis)
    return r.unsupported("it merges or splits the positions");
  return OpAxes{{r.axis}, {to}};
}

FailureOr<OpAxes> transposeAxes(const AxisRequest &r, tg::TransposeOp op) {
  auto perm = op.getPermutation();
  int64_t to = std::find(perm.begin(), perm.end(), r.axis) - perm.begin();
  return OpAxes{{r.axis}, {to}};
}

FailureOr<OpAxes> broadcastAxes(const AxisRequest &r, tg::BroadcastOp op) {
  return OpAxes{{r.axis}, {op.getDims()[r.axis]}};
}

FailureOr<PositionRecipe> broadcastPosition(const PositionRequest &r,
                                            tg::BroadcastOp broadcast) {
  // The operand dimension that becomes `axis`, if it is not replicated.
  SmallVector<int64_t> operandAxes = r.wholeOperands();
  auto dims = broadcast.getDims();
  for (auto [i, dim] : llvm::enumerate(dims))
    if (dim == r.axis && shapeOf(broadcast.getInput())[i] != 1)
      operandAxes[0] = static_cast<int64_t>(i);
  return PositionRecipe{operandAxes, Value()};
}

FailureOr<PositionRecipe> transposePosition(const PositionRequest &r,
                                            tg::TransposeOp transpose) {
  SmallVector<int64_t> operandAxes = r.wholeOperands();
  operandAxes[0] = transpose.getPermutation()[r.axis];
  return PositionRecipe{operandAxes, Value()};
}

FailureOr<PositionRecipe> reshapePosition(const PositionRequest &r,
                                          tg::ReshapeOp reshape) {
  SmallVector<int64_t> operandAxes = r.wholeOperands();
  operandAxes[0] = reshapeAxis(shapeOf(reshape.getResult()),
                               shapeOf(reshape.getInput()), r.axis);
  if (operandAxes[0] == kNoAxis)
    return r.cannot();
  return PositionRecipe{operandAxes, Value()};
}

//===----------------------------------------------------------------------===//
// Slices and concatenation: the axis stays unless they work along it
//===----------------------------------------------------------------------===//

constexpr char kSliceAlongReason[] = "it slices the target positions";
constexpr char kConcatAlongReason[] =
    "it joins tensors along the target positions";

/// OpT (working along its `dim`) keeps the axis where it is, unless dim is
/// the axis: then it refuses for `Reason`.
template <typename OpT, const char *Reason>
FailureOr<OpAxes> alongOtherAxes(const AxisRequest &r, OpT op) {
  if (r.axis == static_cast<int64_t>(op.getDim()))
    return r.unsupported(Reason);
  return sameAxes(r, op);
}

template <typename OpT, const char *Reason>
FailureOr<PositionRecipe> alongOtherPosition(const PositionRequest &r,
                                             OpT op) {
  if (r.axis == static_cast<int64_t>(op.getDim()))
    return r.cannot(Reason);
  return samePosition(r, op);
}

/// A slice along the positions of a value that depends on neither input (a
/// table of learned positions cut to the bucket's length): position p is
/// row start + p of the whole operand, a gather at the step's position.
FailureOr<PositionRecipe> slicePosition(const PositionRequest &r,
                                        tg::SliceOp slice) {
  if (r.axis != static_cast<int64_t>(slice.getDim()))
    return samePosition(r, slice);
  int64_t dim = slice.getDim(), start = slice.getStart();
  Value position = r.position;
  Location loc = slice.getLoc();
  PositionRecipe recipe{r.wholeOperands(), Value()};
  recipe.fromOperands = [dim, start, position, loc](OpBuilder &b,
                                                     ValueRange operands) {
    Value table = operands[0];
    auto shape = llvm::to_vector(shapeOf(table));
    if (start != 0) { // the rows from `start` on
      shape[dim] -= start;
      table = b.create<tg::SliceOp>(
          loc, RankedTensorType::get(shape, b.getF32Type()), table,
          b.getI64IntegerAttr(dim), b.getI64IntegerAttr(start));
    }
    Value index = b.create<tg::ReshapeOp>(
        loc, RankedTensorType::get({1}, b.getI32Type()), position);
    shape[dim] = 1;
    return b
        .create<tg::GatherOp>(loc, RankedTensorType::get(shape, b.getF32Type()),
                              table, index, b.getI64IntegerAttr(dim))
        .getResult();
  };
  return recipe;
}

//===----------------------------------------------------------------------===//
// Gather: the input's axis, or the indices' when they are the target's
//===----------------------------------------------------------------------===//

FailureOr<OpAxes> gatherAxes(const AxisRequest &r, tg::GatherOp op) {
  int64_t dim = op.getDim(), added = rankOf(op.getIndices());
  // Indices that index target positions (the target's ids): the result's
  // dimensions from dim on are theirs; the input is read whole.
  if (!r.isTarget(op.getInput()))
    return OpAxes{{kNoAxis, r.axis}, {dim + r.axis}};
  if (r.isTarget(op.getIndices()))
    return r.unsupported("its input and its indices both depend on the "
                         "target");
  if (r.axis == dim)
    return r.unsupported("it gathers along the target positions");
  // The gathered dimension gives way to the indices' dimensions.
  return OpAxes{{r.axis, kNoAxis}, {r.axis < dim ? r.axis : r.axis - 1 + added}};
}

FailureOr<PositionRecipe> gatherPosition(const PositionRequest &r,
                                         tg::GatherOp op) {
  int64_t dim = op.getDim(), added = rankOf(op.getIndices());
  SmallVector<int64_t> operandAxes = r.wholeOperands();
  if (r.axis < dim)
    operandAxes[0] = r.axis;
  else if (r.axis < dim + added)
    operandAxes[1] = r.axis - dim;
  else
    operandAxes[0] = r.axis - added + 1;
  return PositionRecipe{operandAxes, Value()};
}

//===----------------------------------------------------------------------===//
// Embedding and positions
//===----------------------------------------------------------------------===//

FailureOr<OpAxes> embeddingAxes(const AxisRequest &r, tg::EmbeddingOp) {
  return OpAxes{{kNoAxis, r.axis}, {r.axis}};
}

FailureOr<PositionRecipe>
positionalEncodingPosition(const PositionRequest &r,
                           tg::PositionalEncodingOp pe) {
  if (r.axis != 0 || pe.getOffset())
    return r.cannot();
  Value row = r.b.create<tg::PositionalEncodingOp>(
      pe.getLoc(), onePosition(r.value, 0), r.position);
  return PositionRecipe{{}, row};
}

/// A rotary embedding turns position s by (offset + s): one position at a
/// time it runs with the step's position as its offset. Its positions must
/// be the target's, and an offset of its own would have to be added.
FailureOr<OpAxes> rotaryAxes(const AxisRequest &r, tg::RotaryOp op) {
  if (r.axis != rankOf(op.getInput()) - 2)
    return r.unsupported("its positions (dimension rank - 2) are not the "
                         "target positions");
  if (op.getOffset())
    return r.unsupported("it already has an offset");
  OpAxes axes{{r.axis}, {r.axis}};
  axes.takePosition = [](Operation *clone, Value position) {
    llvm::cast<tg::RotaryOp>(clone).getOffsetMutable().assign(position);
  };
  return axes;
}

FailureOr<PositionRecipe> rotaryPosition(const PositionRequest &r,
                                         tg::RotaryOp op) {
  if (r.axis != rankOf(op.getInput()) - 2 || op.getOffset())
    return r.cannot();
  Value position = r.position;
  Location loc = op.getLoc();
  FloatAttr base = op.getBaseAttr();
  bool inverse = op.getInverse();
  PositionRecipe recipe{{r.axis}, Value()};
  recipe.fromOperands = [=](OpBuilder &b, ValueRange operands) {
    return b
        .create<tg::RotaryOp>(loc, operands[0].getType(), operands[0],
                              position, base, inverse ? b.getUnitAttr()
                                                      : UnitAttr())
        .getResult();
  };
  return recipe;
}

//===----------------------------------------------------------------------===//
// Reductions (reduce_sum, reduce_mean, reduce_max)
//===----------------------------------------------------------------------===//

/// The input's time axis renumbered in the result: the reduced dimensions
/// before it are dropped, unless kept with size 1.
template <typename ReduceT>
FailureOr<OpAxes> tensorReduceAxes(const AxisRequest &r, ReduceT op) {
  ArrayRef<int64_t> dims = op.getDims();
  if (llvm::is_contained(dims, r.axis))
    return r.unsupported("it reduces over the target positions");
  int64_t to = r.axis;
  if (!op.getKeepDims())
    to -= llvm::count_if(dims, [&](int64_t d) { return d < r.axis; });
  return OpAxes{{r.axis}, {to}};
}

/// The inverse: the input dimension that the result's `axis` comes from.
/// A reduced dimension kept with size 1 holds no one position.
template <typename ReduceT>
FailureOr<PositionRecipe> tensorReducePosition(const PositionRequest &r,
                                               ReduceT op) {
  ArrayRef<int64_t> dims = op.getDims();
  int64_t from = kNoAxis;
  if (op.getKeepDims()) {
    if (!llvm::is_contained(dims, r.axis))
      from = r.axis;
  } else {
    // The r.axis-th dimension of the input that is not reduced.
    for (int64_t d = 0, kept = 0; d < rankOf(op.getInput()); ++d) {
      if (llvm::is_contained(dims, d))
        continue;
      if (kept++ == r.axis) {
        from = d;
        break;
      }
    }
  }
  if (from == kNoAxis)
    return r.cannot();
  SmallVector<int64_t> operandAxes = r.wholeOperands();
  operandAxes[0] = from;
  return PositionRecipe{operandAxes, Value()};
}

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

constexpr char kTensorDropoutReason[] =
    "its mask is keyed by each element's index in the whole sequence, and "
    "@predict has no dropout";

//===----------------------------------------------------------------------===//
// Stop-gradient: the input itself, so the axis stays where it is
//===----------------------------------------------------------------------===//

FailureOr<OpAxes> stopGradientAxes(const AxisRequest &r,
                                   tg::StopGradientOp op) {
  return sameAxes(r, op);
}

FailureOr<PositionRecipe> stopGradientPosition(const PositionRequest &r,
                                               tg::StopGradientOp op) {
  return samePosition(r, op);
}

//===----------------------------------------------------------------------===//
// Padding mask: one value per id, so the axis stays where it is (a target's
// mask reaches the attention, which says why it cannot be incremental)
//===----------------------------------------------------------------------===//

FailureOr<OpAxes> paddingMaskAxes(const AxisRequest &r, tg::PaddingMaskOp op) {
  return sameAxes(r, op);
}

FailureOr<PositionRecipe> paddingMaskPosition(const PositionRequest &r,
                                              tg::PaddingMaskOp op) {
  return samePosition(r, op);
}

} // namespace

void attachTensorAxes(MLIRContext &context) {
  // Shape ops: on the target and on what is recomputed.
  tg::BroadcastOp::attachInterface<
      DecoderAxesModel<tg::BroadcastOp, broadcastAxes, broadcastPosition>>(
      context);
  tg::ReshapeOp::attachInterface<
      DecoderAxesModel<tg::ReshapeOp, reshapeAxes, reshapePosition>>(context);
  tg::StopGradientOp::attachInterface<DecoderAxesModel<
      tg::StopGradientOp, stopGradientAxes, stopGradientPosition>>(context);
  tg::TransposeOp::attachInterface<
      DecoderAxesModel<tg::TransposeOp, transposeAxes, transposePosition>>(
      context);
  tg::PaddingMaskOp::attachInterface<DecoderAxesModel<
      tg::PaddingMaskOp, paddingMaskAxes, paddingMaskPosition>>(context);

  // Slices, concatenation and gathers: along another dimension than the
  // positions.
  tg::SliceOp::attachInterface<DecoderAxesModel<
      tg::SliceOp, alongOtherAxes<tg::SliceOp, kSliceAlongReason>,
      slicePosition>>(context);
  tg::ConcatOp::attachInterface<DecoderAxesModel<
      tg::ConcatOp, alongOtherAxes<tg::ConcatOp, kConcatAlongReason>,
      alongOtherPosition<tg::ConcatOp, kConcatAlongReason>>>(context);
  tg::GatherOp::attachInterface<
      DecoderAxesModel<tg::GatherOp, gatherAxes, gatherPosition>>(context);

  // Target op only (its table recomputed, if at all, whole).
  tg::EmbeddingOp::attachInterface<
      DecoderAxesModel<tg::EmbeddingOp, embeddingAxes, nullptr>>(context);

  // Recomputed only: built directly for the one position.
  tg::PositionalEncodingOp::attachInterface<
      DecoderAxesModel<tg::PositionalEncodingOp, nullptr,
                       positionalEncodingPosition>>(context);
  // Both: run at the step's position.
  tg::RotaryOp::attachInterface<
      DecoderAxesModel<tg::RotaryOp, rotaryAxes, rotaryPosition>>(context);

  tg::ReduceSumOp::attachInterface<
      DecoderAxesModel<tg::ReduceSumOp, tensorReduceAxes<tg::ReduceSumOp>,
                       tensorReducePosition<tg::ReduceSumOp>>>(context);
  tg::ReduceMeanOp::attachInterface<
      DecoderAxesModel<tg::ReduceMeanOp, tensorReduceAxes<tg::ReduceMeanOp>,
                       tensorReducePosition<tg::ReduceMeanOp>>>(context);
  tg::ReduceMaxOp::attachInterface<
      DecoderAxesModel<tg::ReduceMaxOp, tensorReduceAxes<tg::ReduceMaxOp>,
                       tensorReducePosition<tg::ReduceMaxOp>>>(context);

  tg::DropoutOp::attachInterface<
      NoDecoderAxes<tg::DropoutOp, kTensorDropoutReason>>(context);
}

} // namespace tgc
