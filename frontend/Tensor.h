//===- Tensor.h - typed tensor handles of the DSL ----------------*- C++ -*-===//
//
// A `Tensor` is one value of the graph being built: an SSA value of the tg
// dialect plus the builder that owns it. Ops on tensors (frontend/Ops.h) check
// shapes when the graph is built and report the caller's file and line.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_FRONTEND_TENSOR_H
#define TGC_FRONTEND_TENSOR_H

#include "mlir/IR/Value.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>
#include <source_location>
#include <type_traits>

namespace tgc {

class Builder;

/// Element types of DSL tensors: f32 activations, i32 token ids.
enum class DType { F32, I32 };

class Tensor {
public:
  Tensor() = default;

  /// The shape; an unset Tensor's is an error at the caller's line.
  llvm::ArrayRef<int64_t> shape(
      std::source_location where = std::source_location::current()) const;
  int64_t rank(std::source_location where =
                   std::source_location::current()) const {
    return static_cast<int64_t>(shape(where).size());
  }
  /// Size of dimension `index`; negative indices count from the end. An
  /// index outside the rank is an error at the caller's line.
  int64_t dim(int64_t index, std::source_location where =
                                 std::source_location::current()) const;
  /// The element type; an unset Tensor's is an error at the caller's line.
  DType dtype(std::source_location where =
                  std::source_location::current()) const;
  mlir::Value value() const { return value_; }
  Builder &builder() const { return *builder_; }
  explicit operator bool() const { return builder_ != nullptr; }
  /// Which buildGraph made it (Builder::graph): a Builder's address is
  /// reused by the next build, this number is not.
  uint64_t graph() const { return graph_; }

private:
  friend class Builder;
  Tensor(Builder *builder, mlir::Value value, uint64_t graph)
      : builder_(builder), value_(value), graph_(graph) {}

  Builder *builder_ = nullptr;
  mlir::Value value_;
  uint64_t graph_ = 0;
};

/// A tensor together with the source location of the expression that uses it.
/// Binary operators cannot take a defaulted std::source_location parameter;
/// converting their right operand to `Located` captures the call site instead.
struct Located {
  Located(Tensor tensor,
          std::source_location where = std::source_location::current())
      : tensor(tensor), where(where) {}
  Tensor tensor;
  std::source_location where;
};

/// A number written where a tensor operand goes (`x + 1.0`), with the
/// source location of the expression, as Located.
struct LocatedScalar {
  template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
  LocatedScalar(T value,
                std::source_location where = std::source_location::current())
      : value(static_cast<double>(value)), where(where) {}
  double value;
  std::source_location where;
};

/// An operand that is a tensor or a number (`maximum(x, 0.0)`,
/// `where(mask, x, 0.0)`): a number becomes a constant of the other
/// operands' broadcast shape.
struct TensorOrScalar {
  TensorOrScalar(Tensor tensor) : tensor(tensor) {}
  template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
  TensorOrScalar(T value) : scalar(static_cast<double>(value)) {}
  Tensor tensor;
  double scalar = 0.0; ///< when `tensor` is unset
};

/// How a parameter is initialized (mirrors tg.variable's `init`).
struct Init {
  enum class Kind { Zeros, Ones, Normal, Uniform, XavierUniform };
  Kind kind;
  std::optional<double> scale;

  static Init zeros() { return {Kind::Zeros, std::nullopt}; }
  static Init ones() { return {Kind::Ones, std::nullopt}; }
  static Init normal(double stddev) { return {Kind::Normal, stddev}; }
  static Init uniform(double bound) { return {Kind::Uniform, bound}; }
  static Init xavierUniform() { return {Kind::XavierUniform, std::nullopt}; }
};

} // namespace tgc

#endif // TGC_FRONTEND_TENSOR_H
