//===- KernelCallModels.h - ops written as kernel calls ---------*- C++ -*-===//
//
// The ops that call runtime/kernels/{cpu,cuda}/Kernels.h say how through
// tg::KernelCallOpInterface, attached as external models by one file per op
// family (codegen/calls/<Family>.cpp). A context must have the models
// registered (registerKernelCallModels) before the emitters run.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_CALLS_KERNELCALLMODELS_H
#define TGC_CODEGEN_CALLS_KERNELCALLMODELS_H

#include "codegen/lowering/EmitContext.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Operation.h"
#include "llvm/Support/raw_ostream.h"

namespace tgc::cpp {

/// Attaches tg::KernelCallOpInterface to every op that calls a kernel, when
/// the tg dialect is loaded.
void registerKernelCallModels(mlir::DialectRegistry &registry);

/// Each family's models (codegen/calls/<Family>.cpp).
void attachGemmCalls(mlir::MLIRContext &context);
void attachTensorCalls(mlir::MLIRContext &context);
void attachNormCalls(mlir::MLIRContext &context);
void attachAttentionCalls(mlir::MLIRContext &context);
void attachLossCalls(mlir::MLIRContext &context);
void attachStateCalls(mlir::MLIRContext &context);
void attachAdamCalls(mlir::MLIRContext &context);

/// Whether the emitters (C++ and CUDA alike) write ops named `name`: an
/// elementwise loop, no code (tg::writesNoCode), a kernel call, or what the
/// function writer does itself (constants, returns; variables at module
/// level). Defined in codegen/lowering/FileEmitter.cpp.
bool emitsOp(mlir::OperationName name);

/// Writes the body of the function for an op that calls a kernel. Returns
/// failure with a diagnostic for an op it does not know.
mlir::LogicalResult emitKernelCall(mlir::Operation *op, EmitContext &context,
                                   llvm::raw_ostream &os);

} // namespace tgc::cpp

#endif // TGC_CODEGEN_CALLS_KERNELCALLMODELS_H
