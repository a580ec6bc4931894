//===- StepOpCost.h - what an op of the step moves and computes -*- C++ -*-===//
//
// The two figures a step's table of ops (runtime::StepOp) gives --profile
// beside each op's time, so that its table says how far each kind of op is
// from the machine's memory bandwidth and its GEMM rate.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_LOWERING_STEPOPCOST_H
#define TGC_CODEGEN_LOWERING_STEPOPCOST_H

#include "mlir/IR/Operation.h"

#include <cstdint>

namespace tgc::cpp {

/// The bytes of `op`'s distinct tensor operands and of its results, each
/// counted once, and for the optimizer the state it updates in place: a
/// lower bound of the memory traffic of the kernel that computes it (a
/// fused group's, its inputs and outputs).
int64_t operandAndResultBytes(mlir::Operation *op);

/// The floating-point operations of `op`'s products, 2 per multiply-add:
/// the GEMMs (tg.matmul, tg.matmul_add, tg.linear, tg.weight_bias_grad, the
/// three of tg.output_loss) and attention's products over the whole Sq x Sk
/// square (two forward, five backward). 0 for every other op.
int64_t productFlops(mlir::Operation *op);

} // namespace tgc::cpp

#endif // TGC_CODEGEN_LOWERING_STEPOPCOST_H
