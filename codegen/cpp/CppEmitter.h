//===- CppEmitter.h - the training step as a C++ source file ---*- C++ -*-===//
//
// Turns a planned training step (tg-training-pipeline, then tg-plan-memory)
// into one C++ file: a function per op, named after it, with its MLIR
// location in a comment; GEMMs and structured ops call
// runtime/kernels/cpu/Kernels.h, elementwise ops and fused groups become
// one OpenMP loop each. The file defines tgc::runtime::kCompiledModel
// (runtime/program/CompiledStep.h), which the runtime's main drives. The
// lowering is codegen/lowering/'s; this target (CppTarget.h) says how the
// CPU program differs from the CUDA one.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_CPP_CPPEMITTER_H
#define TGC_CODEGEN_CPP_CPPEMITTER_H

#include "codegen/lowering/ProgramLowering.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace tgc {

/// Writes the C++ of each bucket's @train_step (and @predict) to `os`: one
/// planned module per static shape (batch, source length, target length),
/// sharing the variables, the state and one arena. Fails with a diagnostic
/// at the offending op (an op the emitter does not know, a missing plan,
/// buckets whose variables differ).
mlir::LogicalResult emitCpp(llvm::ArrayRef<mlir::ModuleOp> buckets,
                            const CompiledModelInfo &info,
                            llvm::raw_ostream &os);

} // namespace tgc

#endif // TGC_CODEGEN_CPP_CPPEMITTER_H
