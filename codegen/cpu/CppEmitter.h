//===- CppEmitter.h - the training step as a C++ source file ---*- C++ -*-===//
//
// Turns a planned training step (tg-training-pipeline, then tg-plan-memory)
// into one C++ file: a function per op, named after it, with its MLIR
// location in a comment; GEMMs and structured ops call runtime/kernels/cpu/Kernels.h,
// elementwise ops and fused groups become one OpenMP loop each. The file
// defines tgc::runtime::kCompiledModel (runtime/program/CompiledStep.h), which
// the runtime's main drives.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_CPU_CPPEMITTER_H
#define TGC_CODEGEN_CPU_CPPEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace tgc {

/// What the generated file records about the model besides its modules.
struct CompiledModelInfo {
  std::string name; ///< "transformer-tiny"
  /// FNV-1a of the vocabulary the model was compiled for (tgc --corpus); 0
  /// when none, and then the binary accepts any data of its vocabulary size.
  uint64_t vocabularyHash = 0;
  /// What made the program (tools/driver/Manifest.h): its --version and
  /// what its checkpoints record. Lines separated by '\n'.
  std::string manifest;
};

/// Writes the C++ of each bucket's @train_step (and @predict) to `os`: one
/// planned module per static shape (batch, source length, target length),
/// sharing the variables, the state and one arena. Fails with a diagnostic
/// at the offending op (an op the emitter does not know, a missing plan,
/// buckets whose variables differ).
mlir::LogicalResult emitCpp(llvm::ArrayRef<mlir::ModuleOp> buckets,
                            const CompiledModelInfo &info,
                            llvm::raw_ostream &os);

/// The same program as CUDA C++ (`tgc --target cuda --emit=cuda`): state,
/// arena and inputs on the GPU, elementwise ops and groups as kernels of
/// their own, the other ops calling runtime/kernels/cuda/Kernels.h (cuBLAS GEMMs,
/// tiled attention, one kernel per fused op).
mlir::LogicalResult emitCuda(llvm::ArrayRef<mlir::ModuleOp> buckets,
                             const CompiledModelInfo &info,
                             llvm::raw_ostream &os);

} // namespace tgc

#endif // TGC_CODEGEN_CPU_CPPEMITTER_H
