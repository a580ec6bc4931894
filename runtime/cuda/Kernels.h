//===- Kernels.h - the CUDA kernels generated steps call -------*- C++ -*-===//
//
// The CUDA twin of runtime/cpu/Kernels.h: the same functions, arguments and
// helper structs in namespace tgc::cuda, so that the CUDA emitter writes the
// same calls as the C++ one. Differences:
//   - every tensor pointer is a DEVICE pointer (f32, row-major, contiguous);
//   - shapes, permutations, flags and the AdamTensor table are host values;
//   - crossEntropyGrad's lossGrad is a host float, while adamUpdate's lr and
//     step are DEVICE pointers (the generated step keeps them on the GPU,
//     next to the rest of its inputs, so no copy back is needed);
//   - every call only enqueues work on stream() (cuBLAS included) and
//     returns; errors exit(1) with file:line and CUDA's message.
// Results match the CPU kernels within float rounding (different summation
// orders), and dropout masks are bit-identical: the same Philox stream
// (runtime/Philox.h), the same element indices. test/unit/cuda checks both.
//
// Plain C++: g++ compiles it as well as nvcc (only Dropout::factor is also
// device code, through TGC_HOST_DEVICE).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CUDA_KERNELS_H
#define TGC_RUNTIME_CUDA_KERNELS_H

#include "runtime/KernelTypes.h"

#include <cstdint>
#include <cuda_runtime.h>

namespace tgc::cuda {

//===--- Stream.cu --------------------------------------------------------===//

/// The stream every kernel and cuBLAS call is enqueued on (default: the
/// legacy default stream 0). Kernels and cuBLAS are driven from one host
/// thread; ordering work across streams is the caller's business.
void setStream(cudaStream_t stream);
cudaStream_t stream();

/// Exits(1) after printing "file:line: CUDA error NAME: message" unless
/// `status` is cudaSuccess.
void check(cudaError_t status, const char *file, int line);
#define TGC_CUDA_CHECK(expr) ::tgc::cuda::check((expr), __FILE__, __LINE__)

using runtime::AdamTensor; ///< device pointers
using runtime::AttentionConfig; ///< mask: a device pointer
using runtime::AttentionShape;
using runtime::Dropout;
using runtime::kMaskedScore;
using runtime::Reduction;

//===--- Gemm.cu ----------------------------------------------------------===//

/// out[b] = op(lhs[b]) op(rhs[b]) for b < batch, with op(lhs) [m, k] and
/// op(rhs) [k, n]; a transposed operand is stored as [k, m] / [n, k].
/// `rhsShared`: rhs is one matrix used by every batch (stride 0). cuBLAS
/// in full f32 (no TF32).
void matmul(const float *lhs, const float *rhs, float *out, int64_t batch,
            int64_t m, int64_t n, int64_t k, bool transposeLhs,
            bool transposeRhs, bool rhsShared);

/// out = act(input [rows, k] * weight [k, n] + bias [n]), act = relu or
/// identity; bias may be null.
void linear(const float *input, const float *weight, const float *bias,
            float *out, int64_t rows, int64_t k, int64_t n, bool relu);

//===--- TensorKernels.cu -------------------------------------------------===//

/// result = input with its dimensions permuted: result dim i is input dim
/// permutation[i]. rank <= 8.
void transpose(const float *input, float *out, const int64_t *inputShape,
               const int64_t *permutation, int rank);

/// result[idx] = input[idx restricted to `dims`]: input dimension j is result
/// dimension dims[j], of the same size or 1 (then replicated).
/// resultRank <= 8.
void broadcast(const float *input, float *out, const int64_t *resultShape,
               int resultRank, const int64_t *dims, const int64_t *inputShape,
               int inputRank);

/// out[r, :] = table[ids[r], :] for r < rows.
void embedding(const float *table, const int32_t *ids, float *out,
               int64_t rows, int64_t width);
/// out [vocab, width] = sum over r with ids[r] = v of grad[r, :], summed in
/// row order (deterministic, no atomics).
void embeddingGrad(const float *grad, const int32_t *ids, float *out,
                   int64_t rows, int64_t width, int64_t vocab);

/// Sinusoidal positions [positions, width] (sin on even, cos on odd columns)
/// of positions first .. first + positions - 1.
void positionalEncoding(float *out, int64_t positions, int64_t width,
                        int64_t first = 0);
/// Copies `value` [outer, length, inner] into positions index .. index +
/// length - 1 of `target` [outer, extent, inner].
void storeSlice(float *target, const float *value, int64_t outer,
                int64_t length, int64_t extent, int64_t inner, int64_t index);
/// out[i] = ids[i] == padId ? kMaskedScore : 0.
void paddingMask(const int32_t *ids, float *out, int64_t count, int32_t padId);
/// out [size, size]: kMaskedScore above the diagonal, 0 elsewhere.
void causalMask(float *out, int64_t size);

//===--- Reduce.cu --------------------------------------------------------===//

/// Reduces `input` over the dimensions flagged in `reduced` (one host flag
/// per input dimension) into out, laid out as the input without those
/// dimensions. rank <= 8. Accumulates in double.
void reduce(const float *input, float *out, const int64_t *shape, int rank,
            const bool *reduced, Reduction kind);

//===--- NormKernels.cu ---------------------------------------------------===//

/// Softmax over the last dimension of [rows, width].
void softmax(const float *input, float *out, int64_t rows, int64_t width);
/// out = y * (dy - sum(dy * y)) per row, y the softmax output.
void softmaxGrad(const float *output, const float *grad, float *out,
                 int64_t rows, int64_t width);

/// LayerNorm over the last dimension; mean/rstd ([rows]) may be null.
void layerNorm(const float *input, const float *gamma, const float *beta,
               float *out, float *mean, float *rstd, int64_t rows,
               int64_t width, float epsilon);
/// Gradients of layerNorm from its input (statistics recomputed).
void layerNormGrad(const float *grad, const float *input, const float *gamma,
                   float *inputGrad, float *gammaGrad, float *betaGrad,
                   int64_t rows, int64_t width, float epsilon);

/// out = LayerNorm(residual + dropout(sublayer)); saves mean and rstd.
void residualLayerNorm(const float *residual, const float *sublayer,
                       const float *gamma, const float *beta, float *out,
                       float *mean, float *rstd, int64_t rows, int64_t width,
                       const Dropout &dropout, float epsilon);
/// Its gradient from the saved mean and rstd; sublayerGrad =
/// dropout(residualGrad) with the same mask.
void residualLayerNormGrad(const float *grad, const float *residual,
                           const float *sublayer, const float *gamma,
                           const float *mean, const float *rstd,
                           float *residualGrad, float *sublayerGrad,
                           float *gammaGrad, float *betaGrad, int64_t rows,
                           int64_t width, const Dropout &dropout);

//===--- Attention.cu, AttentionGrad.cu -----------------------------------===//


/// out [B, H, Sq, Dv] and lse [B, H, Sq]. One thread block per (b, h) and
/// block of queries runs an online softmax over tiles of keys in shared
/// memory (FlashAttention); no [Sq, Sk] matrix is ever stored.
void attention(const float *q, const float *k, const float *v, float *out,
               float *lse, const AttentionShape &shape,
               const AttentionConfig &config);
/// dq, dk, dv from the output gradient, recomputing the probabilities
/// tile by tile as exp(s - lse); `output` gives rowsum(dO * O).
void attentionGrad(const float *grad, const float *q, const float *k,
                   const float *v, const float *output, const float *lse,
                   float *dq, float *dk, float *dv, const AttentionShape &shape,
                   const AttentionConfig &config);

//===--- Loss.cu ----------------------------------------------------------===//

/// Label-smoothed cross-entropy over [rows, classes], averaged over the
/// targets that are not `ignoreIndex`; writes the loss and that count (both
/// device scalars).
void crossEntropy(const float *logits, const int32_t *targets, float *loss,
                  int32_t *tokens, int64_t rows, int64_t classes,
                  float smoothing, int32_t ignoreIndex);
/// lossGrad is a host value.
void crossEntropyGrad(float lossGrad, const float *logits,
                      const int32_t *targets, float *out, int64_t rows,
                      int64_t classes, float smoothing, int32_t ignoreIndex);

//===--- Adam.cu ----------------------------------------------------------===//

/// Bias-corrected Adam on every tensor in one launch (step >= 1). `tensors`
/// is a host array (copied before the call returns); lr and step are
/// DEVICE scalars.
void adamUpdate(const AdamTensor *tensors, int count, const float *lr,
                const int32_t *step, float beta1, float beta2, float epsilon);

} // namespace tgc::cuda

#endif // TGC_RUNTIME_CUDA_KERNELS_H
