//===- Kernels.h - the CPU kernels generated training steps call -*- C++ -*-===//
//
// What the C++ emitter (codegen/cpu/) does not write as a loop of its own:
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

#include <cstdint>

namespace tgc::cpu {

#include "runtime/kernels/KernelDeclarations.inc"

//===--- Adam.cpp ---------------------------------------------------------===//

/// Bias-corrected Adam on every tensor in one parallel pass (step >= 1).
void adamUpdate(const AdamTensor *tensors, int count, float lr, int32_t step,
                float beta1, float beta2, float epsilon);

/// The optimizer step (tg.multi_adam_update with controls): gradients
/// weighted and accumulated as `control.phase` says, the global norm, its
/// clipping, then Adam as adamUpdate, skipped when the norm is NaN or
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

//===--- Gemm.cpp, Attention.cpp: rounded results (CPU only) --------------===//

/// matmul and linear on bf16 operands whose result is rounded to bf16 as it
/// is written (tg-fold-bf16-roundings): the f32 sums of the f32-result
/// versions, each rounded once (runtime::roundToBf16), never stored in f32.
void matmul(const Bf16 *lhs, const Bf16 *rhs, Bf16 *out, int64_t batch,
            int64_t m, int64_t n, int64_t k, bool transposeLhs,
            bool transposeRhs, bool rhsShared);
void linear(const Bf16 *input, const Bf16 *weight, const float *bias,
            Bf16 *out, int64_t rows, int64_t k, int64_t n, bool relu);
/// attention with bf16_products and its output rounded to bf16 as it is
/// written, and attentionGrad with its gradients rounded likewise
/// (tg-fold-bf16-roundings): each head's f32 values, rounded once. A bf16
/// forward output implies bf16_products, whose backward never reads it.
void attention(const Bf16 *q, const Bf16 *k, const Bf16 *v, Bf16 *out,
               float *lse, const AttentionShape &shape,
               const AttentionConfig &config);
void attentionGrad(const float *grad, const Bf16 *q, const Bf16 *k,
                   const Bf16 *v, const float *output, const float *lse,
                   Bf16 *dq, Bf16 *dk, Bf16 *dv, const AttentionShape &shape,
                   const AttentionConfig &config);
void attentionGrad(const float *grad, const Bf16 *q, const Bf16 *k,
                   const Bf16 *v, const Bf16 *output, const float *lse,
                   float *dq, float *dk, float *dv, const AttentionShape &shape,
                   const AttentionConfig &config);
void attentionGrad(const float *grad, const Bf16 *q, const Bf16 *k,
                   const Bf16 *v, const Bf16 *output, const float *lse,
                   Bf16 *dq, Bf16 *dk, Bf16 *dv, const AttentionShape &shape,
                   const AttentionConfig &config);

//===--- Loss.cpp (CPU only) ----------------------------------------------===//

/// tg.output_loss: for each chunk of `chunkRows` of the `rows` rows,
/// logits = hidden W^T (W [classes, width]) into `workspace`, the
/// label-smoothed cross-entropy and its gradient (scaled by lossGrad / the
/// counted tokens) in one pass over each row, in place, then the chunk's
/// rows of hiddenGrad = grad W and weightGrad += grad^T hidden (set by the
/// first chunk). *loss is the mean over counted tokens, *tokens their count.
void outputLoss(const float *hidden, const float *weight,
                const int32_t *targets, float lossGrad, float *loss,
                int32_t *tokens, float *hiddenGrad, float *weightGrad,
                float *workspace, int64_t rows, int64_t width,
                int64_t classes, int64_t chunkRows, float smoothing,
                int32_t ignoreIndex);
/// The same on bf16 hidden states and weight (tg-mixed-precision): each
/// chunk's logit gradient is rounded to bf16 for the two gradient GEMMs.
void outputLoss(const Bf16 *hidden, const Bf16 *weight,
                const int32_t *targets, float lossGrad, float *loss,
                int32_t *tokens, float *hiddenGrad, float *weightGrad,
                float *workspace, int64_t rows, int64_t width,
                int64_t classes, int64_t chunkRows, float smoothing,
                int32_t ignoreIndex);

} // namespace tgc::cpu

#endif // TGC_RUNTIME_CPU_KERNELS_H
