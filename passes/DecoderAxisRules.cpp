//===- DecoderAxisRules.cpp - positions through each op ------------------===//
//
// One function per op kind and direction (elementwise ops share theirs),
// found by the op's TypeID in a table, so which ops the decoder can run one
// position at a time can be asked without building ops.
//
//===----------------------------------------------------------------------===//
#include "passes/DecoderAxisRules.h"

#include "ir/OpRuleTable.h"
#include "ir/TgOps.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <algorithm>

using namespace mlir;

namespace tgc {

RankedTensorType onePosition(Value value, int64_t axis) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  if (axis == kNoAxis)
    return type;
  auto shape = llvm::to_vector(type.getShape());
  shape[axis] = 1;
  return type.clone(shape);
}

ArrayRef<int64_t> shapeOf(Value value) {
  return llvm::cast<RankedTensorType>(value.getType()).getShape();
}

namespace {

int64_t rankOf(Value value) {
  return static_cast<int64_t>(shapeOf(value).size());
}

/// The dimension of `to` that holds dimension `axis` of `from` for a
/// row-major reshape, or kNoAxis when the reshape merges or splits it.
int64_t reshapeAxis(ArrayRef<int64_t> from, ArrayRef<int64_t> to,
                    int64_t axis) {
  int64_t before = 1;
  for (int64_t d = 0; d < axis; ++d)
    before *= from[d];
  int64_t prefix = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(to.size()); ++d) {
    if (prefix == before && to[d] == from[axis])
      return d;
    prefix *= to[d];
  }
  return kNoAxis;
}

//===----------------------------------------------------------------------===//
// Target ops: from the time axis of an operand to all of them
//===----------------------------------------------------------------------===//

/// What a time-axis rule is asked, and its helpers.
struct AxisRequest {
  Operation *op;
  int64_t axis; ///< of the op's first operand that depends on the target
  function_ref<bool(Value)> isTarget;

  /// Every operand and result at `a`.
  OpAxes all(int64_t a) const {
    OpAxes axes;
    axes.operands.assign(op->getNumOperands(), a);
    axes.results.assign(op->getNumResults(), a);
    return axes;
  }
  /// Whether `axis` is not the result's last dimension (normalized over).
  bool notLast() const { return axis < rankOf(op->getResult(0)) - 1; }
  FailureOr<OpAxes> unsupported(const Twine &why) const {
    return op->emitOpError()
           << "cannot run one target position at a time: " << why;
  }
};

FailureOr<OpAxes> sameAxes(const AxisRequest &r, Operation *) {
  return r.all(r.axis);
}

FailureOr<OpAxes> layerNormAxes(const AxisRequest &r, tg::LayerNormOp) {
  if (!r.notLast())
    return r.unsupported("it normalizes over positions");
  return OpAxes{{r.axis, kNoAxis, kNoAxis}, {r.axis}};
}

FailureOr<OpAxes> residualLayerNormAxes(const AxisRequest &r,
                                        tg::ResidualLayerNormOp op) {
  if (!r.notLast())
    return r.unsupported("it normalizes over positions");
  OpAxes a = r.all(r.axis);
  a.operands.assign(op->getNumOperands(), kNoAxis);
  a.operands[0] = a.operands[1] = r.axis; // residual, sublayer
  return a;
}

FailureOr<OpAxes> linearAxes(const AxisRequest &r, tg::LinearOp op) {
  if (!r.isTarget(op.getInput()) || !r.notLast())
    return r.unsupported("positions must be rows of its input");
  OpAxes a = r.all(kNoAxis);
  a.operands[0] = a.results[0] = r.axis;
  return a;
}

FailureOr<OpAxes> matmulAxes(const AxisRequest &r, tg::MatmulOp op) {
  if (r.isTarget(op.getRhs()) || op.getTransposeLhs() ||
      r.axis >= rankOf(op.getLhs()) - 1)
    return r.unsupported("positions must be rows of its left operand");
  return OpAxes{{r.axis, kNoAxis}, {r.axis}};
}

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

FailureOr<OpAxes> embeddingAxes(const AxisRequest &r, tg::EmbeddingOp) {
  return OpAxes{{kNoAxis, r.axis}, {r.axis}};
}

FailureOr<OpAxes> softmaxAxes(const AxisRequest &r, tg::SoftmaxOp op) {
  if (static_cast<int64_t>(op.getAxis()) == r.axis)
    return r.unsupported("it normalizes over positions");
  return r.all(r.axis);
}

/// Cross-attention; DeriveDecoder.cpp rewrites self-attention (keys from the
/// target) itself, with key/value caches.
FailureOr<OpAxes> attentionAxes(const AxisRequest &r, tg::AttentionOp op) {
  if (op.getCausal() || !r.isTarget(op.getQuery()) || r.axis != 2)
    return r.unsupported("only queries may come from the target here");
  OpAxes a = r.all(kNoAxis);
  a.operands[0] = a.results[0] = a.results[1] = 2;
  return a;
}

//===----------------------------------------------------------------------===//
// Recomputed values: from the time axis of the result back to the operands
//===----------------------------------------------------------------------===//

/// What a position rule is asked, and its helpers.
struct PositionRequest {
  OpBuilder &b;
  Value value; ///< a result of `op`
  Operation *op;
  int64_t axis; ///< of `value`
  Value position;

  /// Every operand recomputed whole.
  SmallVector<int64_t> wholeOperands() const {
    return SmallVector<int64_t>(op->getNumOperands(), kNoAxis);
  }
  FailureOr<PositionRecipe> cannot() const {
    return op->emitOpError()
           << "cannot be recomputed for one target position (its dimension "
           << axis << " indexes positions)";
  }
};

FailureOr<PositionRecipe> samePosition(const PositionRequest &r,
                                       Operation *op) {
  return PositionRecipe{SmallVector<int64_t>(op->getNumOperands(), r.axis),
                        Value()};
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

FailureOr<PositionRecipe> constantPosition(const PositionRequest &r,
                                           tg::ConstantOp constant) {
  auto dense = llvm::dyn_cast<SplatElementsAttr>(constant.getValue());
  if (!dense)
    return r.cannot();
  auto type = onePosition(r.value, r.axis);
  Value splat = r.b.create<tg::ConstantOp>(
      constant.getLoc(), type,
      DenseElementsAttr::get(type, dense.getSplatValue<Attribute>()));
  return PositionRecipe{{}, splat};
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
// The table
//===----------------------------------------------------------------------===//

using TimeRule = OpRule<FailureOr<OpAxes>, const AxisRequest &>;
using PositionRule = OpRule<FailureOr<PositionRecipe>, const PositionRequest &>;

/// Either rule may be unset: that direction is refused, as for an op
/// without an entry.
struct Entry {
  TimeRule::Fn time;
  PositionRule::Fn position;
};
using Table = OpRuleTable<Entry>;

template <typename OpT>
void add(Table &table, FailureOr<OpAxes> (*time)(const AxisRequest &, OpT),
         FailureOr<PositionRecipe> (*position)(const PositionRequest &, OpT)) {
  table.insert<OpT>({TimeRule::of(time), PositionRule::of(position)});
}

template <typename... OpTs> void addElementwise(Table &table) {
  (table.insert<OpTs>({sameAxes, samePosition}), ...);
}

Table buildTable() {
  Table t;
  // The axis stays where it is, in both directions.
  addElementwise<tg::AddOp, tg::SubOp, tg::MulOp, tg::DivOp, tg::NegOp,
                 tg::ExpOp, tg::LogOp, tg::SqrtOp, tg::RsqrtOp, tg::ReluOp,
                 tg::ReluGradOp, tg::ScaleOp>(t);

  // Shape ops: on the target and on what is recomputed.
  add<tg::BroadcastOp>(t, broadcastAxes, broadcastPosition);
  add<tg::ReshapeOp>(t, reshapeAxes, reshapePosition);
  add<tg::TransposeOp>(t, transposeAxes, transposePosition);

  // Target ops only (recomputed, if at all, whole).
  add<tg::EmbeddingOp>(t, embeddingAxes, nullptr);
  add<tg::MatmulOp>(t, matmulAxes, nullptr);
  add<tg::LinearOp>(t, linearAxes, nullptr);
  add<tg::SoftmaxOp>(t, softmaxAxes, nullptr);
  add<tg::LayerNormOp>(t, layerNormAxes, nullptr);
  add<tg::ResidualLayerNormOp>(t, residualLayerNormAxes, nullptr);
  add<tg::AttentionOp>(t, attentionAxes, nullptr);

  // Recomputed only: built directly for the one position.
  add<tg::PositionalEncodingOp>(t, nullptr, positionalEncodingPosition);
  add<tg::ConstantOp>(t, nullptr, constantPosition);
  return t;
}

const Entry *lookup(TypeID op) {
  static const Table table = buildTable();
  return table.lookup(op);
}

} // namespace

FailureOr<OpAxes> timeAxes(Operation *op, int64_t axis,
                           function_ref<bool(Value)> isTarget) {
  AxisRequest request{op, axis, isTarget};
  const Entry *entry = lookup(op->getName().getTypeID());
  if (entry && entry->time)
    return entry->time(request, op);
  if (op->hasTrait<OpTrait::Elementwise>())
    return sameAxes(request, op);
  return request.unsupported("no rule for this op");
}

bool hasDecoderAxisRule(TypeID op) {
  const Entry *entry = lookup(op);
  return entry && entry->time;
}

FailureOr<PositionRecipe> recomputePosition(OpBuilder &b, Value value,
                                            int64_t axis, Value position) {
  Operation *op = value.getDefiningOp();
  PositionRequest request{b, value, op, axis, position};
  const Entry *entry = lookup(op->getName().getTypeID());
  if (entry && entry->position)
    return entry->position(request, op);
  if (op->hasTrait<OpTrait::Elementwise>())
    return samePosition(request, op);
  return request.cannot();
}

bool hasRecomputeRule(TypeID op) {
  const Entry *entry = lookup(op);
  return entry && entry->position;
}

} // namespace tgc
