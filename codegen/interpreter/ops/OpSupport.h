//===- OpSupport.h - what the reference models share ------------*- C++ -*-===//
//
// The interpreter runs each op through its tg::ReferenceOpInterface model,
// one file per op family (State.cpp, Elementwise.cpp, ...). A model is a
// handler that reads the operands from the Executor, checks the data the
// verifier cannot see, calls the op's reference kernel and binds the
// results; ReferenceModel turns such a handler into the interface. The
// helpers several families use live here, inline, so that the family files
// (compiled together in a unity build) define no name twice.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_INTERPRETER_OPS_OPSUPPORT_H
#define TGC_CODEGEN_INTERPRETER_OPS_OPSUPPORT_H

#include "codegen/interpreter/Executor.h"
#include "ir/TgOps.h"
#include "runtime/kernels/reference/Kernels.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/APFloat.h"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <tuple>
#include <vector>

namespace tgc::interp {
namespace ref = tgc::reference;

inline std::vector<int64_t> shapeOf(mlir::Value value) {
  auto shape = llvm::cast<mlir::RankedTensorType>(value.getType()).getShape();
  return std::vector<int64_t>(shape.begin(), shape.end());
}

inline std::span<const int64_t> span(llvm::ArrayRef<int64_t> values) {
  return {values.data(), values.size()};
}

inline double f32Attr(const llvm::APFloat &value) {
  return value.convertToFloat();
}

inline int64_t scalarOf(const HostTensor &tensor) {
  return static_cast<int64_t>(tensor[0]);
}

/// The dropout site of an op with key tensor (seed, step).
inline ref::Dropout dropoutOf(const HostTensor &key, const llvm::APFloat &rate,
                              uint64_t opId) {
  auto word = [&](int64_t i) {
    return static_cast<uint32_t>(static_cast<int32_t>(key[i]));
  };
  return ref::Dropout{word(0), word(1), static_cast<uint32_t>(opId),
                      rate.convertToFloat()};
}

/// A dropout site's rate: its run-time operand's value where it has one,
/// else the compiled `rate`.
inline llvm::APFloat givenRate(Executor &x, const llvm::APFloat &rate,
                               mlir::Value runTime) {
  if (!runTime)
    return rate;
  return llvm::APFloat(static_cast<float>(x.get(runTime)[0]));
}

/// Ids (or targets) must lie in [0, bound); `ignored` ones are exempt.
inline mlir::LogicalResult
checkIds(mlir::Operation *op, const HostTensor &ids, int64_t bound,
         llvm::StringRef what, std::optional<int64_t> ignored = std::nullopt) {
  for (int64_t i = 0; i < ids.numElements(); ++i) {
    int64_t id = static_cast<int64_t>(ids[i]);
    if ((id < 0 || id >= bound) && id != ignored)
      return op->emitOpError() << what << " " << id << " at flat index " << i
                               << " is outside [0, " << bound << ")";
  }
  return mlir::success();
}

/// Applies `fn` elementwise over the operands (all of one shape).
template <typename Fn> HostTensor map(const HostTensor &a, Fn fn) {
  HostTensor result(a.shape);
  for (int64_t i = 0; i < a.numElements(); ++i)
    result[i] = fn(a[i]);
  return result;
}
/// An elementwise op of ElementwiseOps.def: `formula` of its `arity`
/// operands (all of the result's shape), element by element.
template <int arity, typename Fn>
mlir::LogicalResult runElementwise(Executor &x, mlir::Operation *op,
                                   Fn formula) {
  std::array<const HostTensor *, arity> in;
  for (int k = 0; k < arity; ++k)
    in[k] = &x.get(op->getOperand(k));
  HostTensor result(in[0]->shape);
  for (int64_t i = 0; i < result.numElements(); ++i)
    result[i] = std::apply(
        [&](auto *...t) { return formula((*t)[i]...); }, in);
  x.bind(op->getResult(0), std::move(result));
  return mlir::success();
}

/// The reference model of ops of class OpT run by `Handler`: each family
/// attaches one per op (OpT::attachInterface<ReferenceModel<OpT, h>>).
template <typename OpT, mlir::LogicalResult (*Handler)(Executor &, OpT)>
struct ReferenceModel
    : tg::ReferenceOpInterface::ExternalModel<ReferenceModel<OpT, Handler>,
                                              OpT> {
  mlir::LogicalResult executeReference(mlir::Operation *op,
                                       Executor &executor) const {
    return Handler(executor, llvm::cast<OpT>(op));
  }
};

/// Each family's models, attached to its ops of the loaded tg dialect
/// (ReferenceModels.cpp calls them all).
void attachStateReference(mlir::MLIRContext *context);
void attachElementwiseReference(mlir::MLIRContext *context);
void attachTensorReference(mlir::MLIRContext *context);
void attachGemmReference(mlir::MLIRContext *context);
void attachNormReference(mlir::MLIRContext *context);
void attachAttentionReference(mlir::MLIRContext *context);
void attachLossReference(mlir::MLIRContext *context);
void attachAdamReference(mlir::MLIRContext *context);

} // namespace tgc::interp

#endif // TGC_CODEGEN_INTERPRETER_OPS_OPSUPPORT_H
