//===- Kernels.h - the CUDA kernels generated steps call -------*- C++ -*-===//
//
// The CUDA twin of runtime/kernels/cpu/Kernels.h: the same functions, arguments and
// helper structs (runtime/kernels/KernelDeclarations.inc) in namespace tgc::cuda, so
// that the CUDA emitter writes the same calls as the C++ one. Differences:
//   - every tensor pointer is a DEVICE pointer (f32, row-major, contiguous);
//   - shapes, permutations, flags and the AdamTensor table are host values;
//   - adamUpdate's lr and step are DEVICE pointers (the generated step
//     keeps them on the GPU, next to the rest of its inputs);
//   - every call only enqueues work on stream() (cuBLAS included) and
//     returns; an error does not stop the program: the first one is kept,
//     with file:line and CUDA's message, for firstError() (below).
// GEMMs run on cuBLAS in full f32 (no TF32); linear on cuBLASLt with its
// bias/activation epilogue. Results match the CPU kernels within float rounding
// (different summation orders), and dropout masks are bit-identical: the
// same Philox stream (runtime/kernels/Philox.h), the same element indices.
// test/unit/kernels/cuda checks both.
//
// Plain C++: g++ compiles it as well as nvcc (only Dropout::factor is also
// device code, through TGC_HOST_DEVICE).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CUDA_KERNELS_H
#define TGC_RUNTIME_CUDA_KERNELS_H

#include "runtime/kernels/KernelTypes.h"

#include <cstdint>
#include <cuda_runtime.h>
#include <string>

namespace tgc::cuda {

//===--- Stream.cu --------------------------------------------------------===//

/// The stream every kernel and cuBLAS call is enqueued on (default: the
/// legacy default stream 0). Kernels and cuBLAS are driven from one host
/// thread; ordering work across streams is the caller's business.
void setStream(cudaStream_t stream);
cudaStream_t stream();

/// True when `status` is cudaSuccess. Otherwise false, and the first failed
/// check of the process is kept as "file:line: CUDA error NAME: message"
/// for firstError(). Nothing stops: the calls after it go on (and fail or
/// compute garbage), so whoever drives the kernels asks firstError() after
/// each step and gives up there. As a statement, TGC_CUDA_CHECK(x); (what
/// generated code writes) ignores the result.
bool check(cudaError_t status, const char *file, int line);
#define TGC_CUDA_CHECK(expr) ::tgc::cuda::check((expr), __FILE__, __LINE__)

/// False while every check has passed; true with `why` the first failure's
/// message (a CUDA or cuBLAS error, with the file:line of its check). It
/// stays set for the rest of the process: after a CUDA error the device
/// state and the results are not to be trusted.
bool firstError(std::string &why);

/// Forgets the kept failure. Only for a CUDA graph capture that failed
/// (runtime/program/cuda/StepGraphs.cu): a capture runs no kernel, so its
/// failure says the step cannot be captured, not that the device failed.
void forgetFailure();

/// A device copy of `bytes` at `host` that lives as long as the process: a
/// call's constant table (Adam's chunks), uploaded the first time its
/// contents are seen and found again by them (every byte: padding too, so
/// the caller zeroes it), so that the calls of a step
/// read it without copying it every step, and a CUDA graph can capture
/// them. Null (the error kept for firstError()) when it cannot be
/// allocated, or when contents not seen before meet a stream capture.
const void *persistentTable(const void *host, size_t bytes);

#include "runtime/kernels/KernelDeclarations.inc"

//===--- Reduce.cu --------------------------------------------------------===//

/// Whether `count` floats of DEVICE memory hold no NaN and no infinity
/// (runtime::allFinite's twin, for the GPU's checkTrainStep). Synchronous.
/// True after a CUDA failure, which is kept for firstError(): a failed
/// check blames no op.
bool allFinite(const float *values, int64_t count);

//===--- FusedAttention.cu ------------------------------------------------===//

/// Whether attention with bf16 products runs as the fused kernels (one
/// launch forward, two backward, no scores in device memory) where the
/// shape allows (FusedAttention.h), instead of batched GEMMs and row
/// kernels. Off by default: the training binary's --fused-attention.
void setFusedAttention(bool on);

//===--- Adam.cu ----------------------------------------------------------===//

/// Bias-corrected Adam on every tensor in one launch (step >= 1). `tensors`
/// is a host array (copied before the call returns); lr and step are
/// DEVICE scalars.
void adamUpdate(const AdamTensor *tensors, int count, const float *lr,
                const int32_t *step, float beta1, float beta2, float epsilon);

/// The optimizer step, as the CPU's optimizerStep: the control's values are
/// host values, but for its weight, read from the DEVICE scalar `weight`
/// (control.weight is not read); its accumulator and `norm` (the result)
/// are DEVICE memory.
/// `loss` (DEVICE, or null): from a non-finite one nothing is accumulated
/// or updated and the norm is NaN, as the CPU's step, which does not call
/// the optimizer then.
void optimizerStep(const AdamTensor *tensors, int count,
                   const OptimizerControl &control, const float *lr,
                   const int32_t *step, const float *weight, float *norm,
                   float beta1, float beta2, float epsilon,
                   const float *loss = nullptr);

} // namespace tgc::cuda

#endif // TGC_RUNTIME_CUDA_KERNELS_H
