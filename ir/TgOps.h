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

/// The type of per-row statistics (LayerNorm mean/rstd, attention
/// log-sum-exp) of a tensor: its shape without the last dimension.
mlir::Type rowStatisticsType(mlir::Type type);

/// `type` (a ranked tensor) with bf16 elements: what tg.to_bf16 makes of it.
mlir::Type withBf16Elements(mlir::Type type);
/// `type` with f32 elements: a GEMM's result and gradients for bf16 operands.
mlir::Type withF32Elements(mlir::Type type);

/// Whether `op` may sit in a tg.fused_elementwise body: an elementwise tg op,
/// or a dropout (forward or backward), whose mask depends only on the
/// element's index.
bool isElementwiseFusible(mlir::Operation *op);

} // namespace tgc::tg

#define GET_OP_CLASSES
#include "ir/TgOps.h.inc"

#endif // TGC_IR_TGOPS_H
