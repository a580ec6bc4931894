//===- Kernels.h - the CPU kernels generated training steps call -*- C++ -*-===//
//
// What the C++ program (codegen/cpp/) does not write as a loop of its own:
// GEMMs (oneDNN and OpenBLAS for f32, oneDNN for bf16), and the ops whose loops have structure (rows, heads,
// tiles): softmax, LayerNorm and its residual fusion, attention, the loss,
// embeddings, reductions, transposes, broadcasts, Adam. The declarations
// both backends share are in runtime/kernels/KernelDeclarations.inc (host pointers
// here; the generated code passes compile-time shapes).
//
// Parallel with OpenMP where the work splits into independent rows or
// heads; GEMMs use their library's threads (oneDNN and OpenBLAS both run on
// libgomp's pool). Large linears run on a oneDNN matmul primitive that
// applies the bias and activation in its tiles (MatmulPrimitive.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CPU_KERNELS_H
#define TGC_RUNTIME_CPU_KERNELS_H

#include "runtime/kernels/KernelTypes.h"
#include "runtime/kernels/cpu/SideBySide.h"

#include <cstdint>

namespace tgc::cpu {

#include "runtime/kernels/KernelDeclarations.inc"

//===--- Adam.cpp ---------------------------------------------------------===//

/// Bias-corrected Adam on every tensor in one parallel pass (step >= 1).
void adamUpdate(const AdamTensor *tensors, int count, float lr, int32_t step,
                float beta1, float beta2, float epsilon);

/// The optimizer step (tg.multi_adam_update with controls): gradients
/// weighted and accumulated as `control.phase` says, the global norm, its
/// clipping, then Adam as adamUpdate (AdamW on the tensors that decay),
/// skipped when the norm is NaN or
/// infinite or the phase only accumulates. Returns the norm.
float optimizerStep(const AdamTensor *tensors, int count,
                    const OptimizerControl &control, float lr, int32_t step,
                    float beta1, float beta2, float epsilon);

//===--- DropoutFactors.cpp (CPU only) ------------------------------------===//

/// factors[x] = dropout.factor(start + x) for x < count: 0 or 1 / (1 - rate),
/// the Philox counters of the run vectorized (the kernels' row loops and
/// the generated elementwise loops fill a block of factors at a time).
void dropoutFactors(const Dropout &dropout, uint64_t start, int64_t count,
                    float *factors);

} // namespace tgc::cpu

#endif // TGC_RUNTIME_CPU_KERNELS_H
