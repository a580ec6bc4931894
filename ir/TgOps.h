//===- TgOps.h - the tg dialect's ops ----------------------------*- C++ -*-===//
#ifndef TGC_IR_TGOPS_H
#define TGC_IR_TGOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "ir/TgDialect.h"
#include "ir/TgEnums.h.inc"
#include "ir/TgInterfaces.h"

namespace tgc::tg {

/// Checks the rule every tg op shares: all tensor operands and results have a
/// static shape.
mlir::LogicalResult verifyTensorRules(mlir::Operation *op);

template <typename ConcreteType>
class TensorRules : public mlir::OpTrait::TraitBase<ConcreteType, TensorRules> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    return verifyTensorRules(op);
  }
};

/// The kinds of ops declared in ODS (TgBase.td says what each means). They
/// carry no code: passes and emitters ask `op->hasTrait<...>()`.
namespace traits {
#define TGC_KIND_TRAIT(Name)                                                   \
  template <typename ConcreteType>                                             \
  class Name : public mlir::OpTrait::TraitBase<ConcreteType, Name> {};
TGC_KIND_TRAIT(ElementwiseLoop)
TGC_KIND_TRAIT(ResultIsView)
TGC_KIND_TRAIT(ResultOutsideArena)
TGC_KIND_TRAIT(ResultsOverwriteOperands)
TGC_KIND_TRAIT(GemmOperands)
TGC_KIND_TRAIT(GemmResult)
TGC_KIND_TRAIT(OptimizerStep)
TGC_KIND_TRAIT(BlocksGradient)
#undef TGC_KIND_TRAIT
} // namespace traits

/// Whether the emitters write no code for `op`: a view of its operand or
/// data outside the arena (state, constants).
bool writesNoCode(mlir::Operation *op);

/// The value whose bytes `value` is: through views (tg.reshape,
/// tg.stop_gradient: ops with ResultIsView) to where they are made.
mlir::Value viewSource(mlir::Value value);

/// The type of per-row statistics (LayerNorm mean/rstd, attention
/// log-sum-exp) of a tensor: its shape without the last dimension.
mlir::Type rowStatisticsType(mlir::Type type);

/// `type` (a ranked tensor) with bf16 elements: what tg.to_bf16 makes of it.
mlir::Type withBf16Elements(mlir::Type type);
/// `type` with f32 elements: a GEMM's result and gradients for bf16 operands.
mlir::Type withF32Elements(mlir::Type type);

/// Whether `op` may sit in a tg.fused_elementwise body: a single op that runs
/// as one elementwise loop (the ElementwiseLoop trait: elementwise tg ops and
/// dropout, whose mask depends only on the element's index), not a group.
bool isElementwiseFusible(mlir::Operation *op);

/// Whether `arg`, a tg.fused_elementwise body argument, is a dropout's
/// run-time rate: a tensor<f32> that the body reads only as the `run_time`
/// rate of tg.dropout and tg.dropout_grad.
bool isDropoutRateInput(mlir::BlockArgument arg);

/// Set by tg-adam on the training step: the names of the run-time inputs
/// ("dropout", "attention_dropout", "label_smoothing") it could not make
/// because their sites have different compiled values. The runtime refuses
/// a flag for one of them (even 0: it would change nothing) instead of
/// ignoring it.
inline constexpr llvm::StringLiteral kMixedRatesAttr = "tg.mixed_rates";

/// Set by tg-pair-gemms on a tg.matmul: it and the next op that computes
/// something (nextComputingOp) are independent and run at once, one thread
/// each (a unit attribute; the interpreter and the CUDA target ignore it).
inline constexpr llvm::StringLiteral kBesideNextAttr = "tg.beside_next";

/// The next op of `op`'s block that computes something: not a tg.reshape,
/// tg.load or tg.constant (the emitters write no code for those); null when
/// none follows.
mlir::Operation *nextComputingOp(mlir::Operation *op);

/// Whether `later` reads a result of `op`, directly or through views
/// (tg.reshape, tg.stop_gradient).
bool readsResultOf(mlir::Operation *later, mlir::Operation *op);

/// The checks of tg.beside_next on `op` (the dialect's attribute verifier).
mlir::LogicalResult verifyBesideNext(mlir::Operation *op,
                                     mlir::Attribute value);

/// The rules of a module's tg.optimizer or tg.schedule dictionary (its
/// numbers become literals of the generated program), errors at `loc`:
/// for the dialect's attribute verifier, and for the DSL's setOptimizer and
/// setSchedule at the model's line.
mlir::LogicalResult verifyStepDeclaration(mlir::Location loc,
                                          mlir::NamedAttribute attribute);

} // namespace tgc::tg

#define GET_OP_CLASSES
#include "ir/TgOps.h.inc"

namespace tgc::tg {
/// Whether `op` is a GEMM that tg-pair-gemms may pair: a tg.matmul or a
/// tg.matmul_add.
bool isPairableGemm(mlir::Operation *op);
/// Such a GEMM's multiply-adds: its result's elements times the length of
/// the sums.
int64_t multiplyAdds(mlir::Operation *gemm);

/// Whether `value` is a result that its op's kernels do not write because
/// nothing reads it: tg.residual_layer_norm_grad's f32 sublayer gradient
/// where only its `rounded` copy is read (a bf16 step). Such a result has no
/// bytes (tg-plan-memory) and no non-finite check, and the kernel is passed
/// a null pointer for it.
bool isUnwrittenResult(mlir::Value value);

/// Whether `sum` has a bias gradient's form: every dimension but the last
/// summed away (a bias broadcast along the leading dimensions), without
/// keep_dims.
bool isBiasGradient(ReduceSumOp sum);

/// The weight gradient's GEMM that reads the same output gradient g as
/// `sum`, a bias gradient (isBiasGradient): a tg.matmul in sum's block of
/// [R, K] and [R, N] operands, lhs transposed, whose rhs is g or its
/// reshape to rows of g's last dimension (N, the bias's size); null if
/// none. A sum of that form without such a GEMM is not a bias gradient.
MatmulOp weightGradientOf(ReduceSumOp sum);
} // namespace tgc::tg

#endif // TGC_IR_TGOPS_H
