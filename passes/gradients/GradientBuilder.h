//===- GradientBuilder.h - what a gradient rule emits with ------*- C++ -*-===//
//
// The state and helpers every rule shares: the request, the gradients set so
// far and builders for the shape ops the backward needs with the result
// types their verifiers expect. tg::GradientOpInterface takes one, so it is
// public to every op family's file.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_PASSES_GRADIENTS_GRADIENTBUILDER_H
#define TGC_PASSES_GRADIENTS_GRADIENTBUILDER_H

#include "passes/gradients/Gradients.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <utility>

namespace tgc {
namespace gradients {

/// The type of a tensor value the verifier has checked to be ranked. In its
/// own namespace: the families of other concerns, compiled in one unity
/// translation unit with these, may have a helper of that name.
inline mlir::RankedTensorType tensorOf(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType());
}

} // namespace gradients

/// Emits the ops of one rule; `grads[i]` is the gradient of operand i.
class GradientBuilder {
public:
  GradientBuilder(mlir::OpBuilder &b, const GradientRequest &request);

  mlir::OpBuilder &b;
  const GradientRequest &request;
  mlir::Location loc;
  llvm::SmallVector<mlir::Value> grads;

  mlir::Value dy(unsigned result = 0) const {
    return request.resultGrads[result];
  }
  bool wants(unsigned operand) const { return request.wanted.test(operand); }
  void set(unsigned operand, mlir::Value grad) {
    if (wants(operand))
      grads[operand] = grad;
  }

  /// Fails unless only the results in `differentiable` carry a gradient.
  mlir::LogicalResult onlyThrough(llvm::ArrayRef<unsigned> differentiable);

  template <typename OpT, typename... Args> mlir::Value make(Args &&...args) {
    return b.create<OpT>(loc, std::forward<Args>(args)...)->getResult(0);
  }

  /// (batched) lhs' x rhs' with the result type the verifier expects.
  mlir::Value matmul(mlir::Value lhs, mlir::Value rhs, bool transposeLhs,
                     bool transposeRhs);
  mlir::Value reshape(mlir::Value v, llvm::ArrayRef<int64_t> shape);
  /// Swaps the last two dimensions.
  mlir::Value transposeLast(mlir::Value v);
  /// Sums `v` over `dims` (dropping them).
  mlir::Value sum(mlir::Value v, llvm::ArrayRef<int64_t> dims);
  mlir::Value broadcast(mlir::Value v, mlir::RankedTensorType to,
                        llvm::ArrayRef<int64_t> dims);
  mlir::Value scale(mlir::Value v, double factor);
};

} // namespace tgc

#endif // TGC_PASSES_GRADIENTS_GRADIENTBUILDER_H
