//===- TgVerify.h - helpers shared by the tg op verifiers --------*- C++ -*-===//
//
// Every verifier message states the rule and the offending shapes or values;
// these helpers keep that wording uniform across ops.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_IR_TGVERIFY_H
#define TGC_IR_TGVERIFY_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

#include <string>

namespace tgc::tg {

/// The most elements a tg tensor may hold (4 TiB of f32): sizes and byte
/// offsets computed from shapes stay far from int64 overflow.
inline constexpr int64_t kMaxTensorElements = int64_t(1) << 40;

/// The most dimensions a tg tensor may have: the kernels' shape arrays
/// (runtime::kMaxRank in runtime/kernels/KernelTypes.h, the same number).
inline constexpr int kMaxTensorRank = 8;

/// Empty for a static shape of at most kMaxTensorRank dimensions, each
/// >= 1, and at most kMaxTensorElements elements; otherwise the rule it
/// breaks.
std::string checkTensorSize(llvm::ArrayRef<int64_t> shape);

/// The functions of a module tgc compiles, runs or writes: each with a
/// body (a declaration crashed the passes that read it), taking and
/// returning ranked tensors of f32, bf16 or i32 with shapes checkTensorSize
/// accepts (an unranked or scalar argument crashed the interpreter).
/// Errors at each function's location. Each dropout site of a function
/// has an op_id of its own (checkDropoutSites).
mlir::LogicalResult verifyTgFunctions(mlir::Operation *module);

/// Two sites of `function` that draw dropout masks with one op_id draw the
/// same mask: an error at the second, naming the first.
mlir::LogicalResult checkDropoutSites(mlir::func::FuncOp function);

/// "[2, 7, 16]".
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// A float as a person writes it: "0.1", "1", "1e-09".
std::string formatNumber(double value);

/// Shape of a ranked tensor value or type.
llvm::ArrayRef<int64_t> shapeOf(mlir::Value value);
llvm::ArrayRef<int64_t> shapeOf(mlir::Type type);

/// "<lhs> and <rhs> must have one element type" unless they do (the two
/// operands of a GEMM: both f32, or both bf16 after tg-mixed-precision).
mlir::LogicalResult expectSameElementType(mlir::Operation *op,
                                          llvm::StringRef lhsName,
                                          mlir::Value lhs,
                                          llvm::StringRef rhsName,
                                          mlir::Value rhs);

/// A GEMM's result: f32, or bf16 when its operands are bf16 (the f32 sums
/// rounded as they are written, tg-fold-bf16-roundings).
mlir::LogicalResult expectGemmResultType(mlir::Operation *op,
                                         mlir::Value operand,
                                         mlir::Value result);

/// "<what> must have shape <expected> but has <actual>" unless they are equal.
mlir::LogicalResult expectShape(mlir::Operation *op, llvm::StringRef what,
                                mlir::Value value,
                                llvm::ArrayRef<int64_t> expected);

/// "<what> must have rank <rank> but has shape <actual>" unless it has.
mlir::LogicalResult expectRank(mlir::Operation *op, llvm::StringRef what,
                               mlir::Value value, int64_t rank);

/// Dropout rates live in [0, 1).
mlir::LogicalResult verifyRate(mlir::Operation *op, llvm::StringRef name,
                               float rate);

/// A dropout rate given at run time (`runTime`) replaces a compiled rate
/// above 0: a site compiled at rate 0 does not exist.
mlir::LogicalResult verifyRunTimeRate(mlir::Operation *op, llvm::StringRef name,
                                      float rate, mlir::Value runTime);

/// Dropout op ids are >= 0 and fit in 32 bits.
mlir::LogicalResult verifyOpId(mlir::Operation *op, int64_t opId);

/// Epsilons (LayerNorm, Adam) are > 0 and finite.
mlir::LogicalResult verifyPositive(mlir::Operation *op, llvm::StringRef name,
                                   float value);

/// `dims` is non-empty, strictly increasing and within [0, rank).
mlir::LogicalResult verifyDimList(mlir::Operation *op, llvm::StringRef name,
                                  llvm::ArrayRef<int64_t> dims, int64_t rank);

/// `axis` is within [0, rank); `name` is the attribute's ("axis", "dim").
mlir::LogicalResult verifyAxis(mlir::Operation *op, int64_t axis,
                               int64_t rank, llvm::StringRef name = "axis");

/// A LayerNorm's gamma/beta is a vector the size of the last dimension.
mlir::LogicalResult verifyNormParam(mlir::Operation *op, llvm::StringRef name,
                                    mlir::Value param, llvm::StringRef inputName,
                                    mlir::Value input);

/// `shape` without its last dimension: the per-row statistics' shape.
llvm::SmallVector<int64_t> dropLast(llvm::ArrayRef<int64_t> shape);

} // namespace tgc::tg

#endif // TGC_IR_TGVERIFY_H
