//===- AxisRequest.cpp - what a decoder-axes model is asked --------------===//
//
// The requests' helpers, and the rules several families share: those of
// ops that keep the axis where it is and of reshapes.
//
//===----------------------------------------------------------------------===//
#include "passes/decoder/AxisRequest.h"

using namespace mlir;

namespace tgc {

int64_t rankOf(Value value) {
  return static_cast<int64_t>(shapeOf(value).size());
}

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

OpAxes AxisRequest::all(int64_t a) const {
  OpAxes axes;
  axes.operands.assign(op->getNumOperands(), a);
  axes.results.assign(op->getNumResults(), a);
  return axes;
}

bool AxisRequest::notLast() const {
  return axis < rankOf(op->getResult(0)) - 1;
}

FailureOr<OpAxes> AxisRequest::unsupported(const Twine &why) const {
  return op->emitOpError()
         << "cannot run one target position at a time: " << why;
}

SmallVector<int64_t> PositionRequest::wholeOperands() const {
  return SmallVector<int64_t>(op->getNumOperands(), kNoAxis);
}

FailureOr<PositionRecipe> PositionRequest::cannot() const {
  return op->emitOpError()
         << "cannot be recomputed for one target position (its dimension "
         << axis << " indexes positions)";
}

FailureOr<PositionRecipe> PositionRequest::cannot(const Twine &why) const {
  return op->emitOpError()
         << "cannot be recomputed for one target position (its dimension "
         << axis << " indexes positions): " << why;
}

FailureOr<OpAxes> sameAxes(const AxisRequest &r, Operation *) {
  return r.all(r.axis);
}

FailureOr<PositionRecipe> samePosition(const PositionRequest &r,
                                       Operation *op) {
  return PositionRecipe{SmallVector<int64_t>(op->getNumOperands(), r.axis),
                        Value()};
}

} // namespace tgc
