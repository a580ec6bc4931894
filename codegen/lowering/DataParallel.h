//===- DataParallel.h - what a data-parallel step emits --------*- C++ -*-===//
//
// A data-parallel step sums its gradients and its target tokens over the
// processes through the frame (runtime/program/CompiledStep.h:
// StepFrame::allReduceSum, which also divides the optimizer's weight by
// the global tokens), which
// the runtime points at its communicator when it runs in several processes
// and leaves null in one; its dropout masks are keyed by the example's
// index in the global batch (StepFrame::firstExample). Shared by the C++
// and CUDA emitters.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_LOWERING_DATAPARALLEL_H
#define TGC_CODEGEN_LOWERING_DATAPARALLEL_H

#include "ir/TgOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace tgc::cpp {

/// The statement of `op`: one in-place call over its operands' arena bytes
/// (the gradient region of a planned step) and the token count slot after
/// them. Fails at the op when an operand does not live in the arena or the
/// operands and the slot are not one run of bytes.
mlir::FailureOr<std::string> allReduceCalls(tg::AllReduceOp op);

/// Checks that `step` (a bucket's @train_step) lays out the gradients its
/// tg.all_reduce sums as `first` (the first bucket's) does: each
/// parameter's gradient at the same place from the region's start. The
/// processes of a run may be in different buckets and sum their regions
/// element by element. Fails with a diagnostic at `step`'s all-reduce.
mlir::LogicalResult checkSameGradientLayout(mlir::func::FuncOp first,
                                            mlir::func::FuncOp step);

/// The C++ expression of a dropout site's Dropout::indexOffset, for a site
/// of op `op` over `elements` elements whose leading dimension is the
/// batch: this process's first example times the elements per example.
/// "0" in a function without a batch argument (nothing to offset).
std::string dropoutIndexOffset(mlir::Operation *op, int64_t elements);

/// Whether `key` is its function's `dropout_key` argument: the step's key,
/// which a CUDA program also keeps on the device (Dropout::deviceKey).
bool isStepDropoutKey(mlir::Value key);

} // namespace tgc::cpp

#endif // TGC_CODEGEN_LOWERING_DATAPARALLEL_H
