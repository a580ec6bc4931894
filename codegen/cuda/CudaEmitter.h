//===- CudaEmitter.h - the training step as a CUDA source file -*- C++ -*-===//
//
// The same program as codegen/cpp/CppEmitter.h's, as CUDA C++ (`tgc
// --target cuda --emit=cuda`): state, arena and inputs on the GPU,
// elementwise ops and groups as kernels of their own, the other ops calling
// runtime/kernels/cuda/Kernels.h (cuBLAS GEMMs, tiled attention, one kernel
// per fused op). The lowering is codegen/lowering/'s; this target
// (CudaTarget.h) says how the CUDA program differs from the CPU one.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_CUDA_CUDAEMITTER_H
#define TGC_CODEGEN_CUDA_CUDAEMITTER_H

#include "codegen/lowering/ProgramLowering.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace tgc {

/// Writes each bucket's functions as CUDA C++ to `os` (as emitCpp does
/// C++). Fails with a diagnostic at the offending op.
mlir::LogicalResult emitCuda(llvm::ArrayRef<mlir::ModuleOp> buckets,
                             const CompiledModelInfo &info,
                             llvm::raw_ostream &os);

} // namespace tgc

#endif // TGC_CODEGEN_CUDA_CUDAEMITTER_H
