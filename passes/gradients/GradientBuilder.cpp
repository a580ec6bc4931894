//===- GradientBuilder.cpp - what a gradient rule emits with --------------===//
//
// The helpers shared by the rules of every op family: each builds one tg op
// with the result type its verifier expects, or nothing when the value
// already has the wanted shape.
//
//===----------------------------------------------------------------------===//
#include "passes/gradients/GradientBuilder.h"

#include "ir/TgOps.h"

#include <numeric>

using namespace mlir;

namespace tgc {

GradientBuilder::GradientBuilder(OpBuilder &b, const GradientRequest &request)
    : b(b), request(request), loc(request.op->getLoc()),
      grads(request.op->getNumOperands()) {}

LogicalResult GradientBuilder::onlyThrough(ArrayRef<unsigned> differentiable) {
  for (auto [index, grad] : llvm::enumerate(request.resultGrads))
    if (grad && !llvm::is_contained(differentiable, index))
      return request.op->emitError()
             << "cannot differentiate through result #" << index
             << " of this op; only the main result has a gradient rule";
  return success();
}

Value GradientBuilder::matmul(Value lhs, Value rhs, bool transposeLhs,
                              bool transposeRhs) {
  ArrayRef<int64_t> l = gradients::tensorOf(lhs).getShape(),
                    r = gradients::tensorOf(rhs).getShape();
  SmallVector<int64_t> shape(l.drop_back(2));
  shape.push_back(transposeLhs ? l.back() : l[l.size() - 2]);
  shape.push_back(transposeRhs ? r[r.size() - 2] : r.back());
  return make<tg::MatmulOp>(gradients::tensorOf(lhs).clone(shape), lhs, rhs,
                            transposeLhs, transposeRhs);
}

Value GradientBuilder::reshape(Value v, ArrayRef<int64_t> shape) {
  if (gradients::tensorOf(v).getShape() == shape)
    return v;
  return make<tg::ReshapeOp>(gradients::tensorOf(v).clone(shape), v);
}

Value GradientBuilder::transposeLast(Value v) {
  int64_t rank = gradients::tensorOf(v).getRank();
  SmallVector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[rank - 1], perm[rank - 2]);
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(gradients::tensorOf(v).getDimSize(p));
  return make<tg::TransposeOp>(gradients::tensorOf(v).clone(shape), v, perm);
}

Value GradientBuilder::sum(Value v, ArrayRef<int64_t> dims) {
  if (dims.empty())
    return v;
  SmallVector<int64_t> shape;
  for (auto [i, size] : llvm::enumerate(gradients::tensorOf(v).getShape()))
    if (!llvm::is_contained(dims, static_cast<int64_t>(i)))
      shape.push_back(size);
  return make<tg::ReduceSumOp>(gradients::tensorOf(v).clone(shape), v, dims,
                               /*keep_dims=*/false);
}

Value GradientBuilder::broadcast(Value v, RankedTensorType to,
                                 ArrayRef<int64_t> dims) {
  if (v.getType() == to)
    return v;
  return make<tg::BroadcastOp>(to, v, dims);
}

Value GradientBuilder::scale(Value v, double factor) {
  return make<tg::ScaleOp>(v, b.getF32FloatAttr(static_cast<float>(factor)));
}

} // namespace tgc
