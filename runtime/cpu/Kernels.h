//===- Kernels.h - the CPU kernels generated training steps call -*- C++ -*-===//
//
// What the C++ emitter (codegen/cpu/) does not write as a loop of its own:
// GEMMs (OpenBLAS), and the ops whose loops have structure (rows, heads,
// tiles): softmax, LayerNorm and its residual fusion, attention, the loss,
// embeddings, reductions, transposes, broadcasts, Adam. All f32, row-major,
// contiguous; every shape is passed explicitly (the generated code passes
// compile-time constants). Outputs never alias inputs unless a comment says
// so. Parallel with OpenMP where the work splits into independent rows or
// heads; GEMMs use OpenBLAS's own threads.
//
// Formulas are those of each op's description in ir/TgOps.td and of the
// reference interpreter (codegen/interpreter/Kernels.h), which is the oracle
// these kernels are tested against. Dropout factors follow runtime/Philox.h.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CPU_KERNELS_H
#define TGC_RUNTIME_CPU_KERNELS_H

#include "runtime/KernelTypes.h"

#include <cstdint>

namespace tgc::cpu {

using runtime::AdamTensor;
using runtime::AttentionConfig;
using runtime::AttentionShape;
using runtime::Dropout;
using runtime::kMaskedScore;
using runtime::Reduction;

//===--- Gemm.cpp ---------------------------------------------------------===//

/// out[b] = op(lhs[b]) op(rhs[b]) for b < batch, with op(lhs) [m, k] and
/// op(rhs) [k, n]; a transposed operand is stored as [k, m] / [n, k].
/// `rhsShared`: rhs is one matrix used by every batch (stride 0). Plain
/// (untransposed-lhs) products with a shared rhs run as one GEMM of
/// batch * m rows.
void matmul(const float *lhs, const float *rhs, float *out, int64_t batch,
            int64_t m, int64_t n, int64_t k, bool transposeLhs,
            bool transposeRhs, bool rhsShared);

/// out = act(input [rows, k] * weight [k, n] + bias [n]), act = relu or
/// identity; the bias and activation run on each block of rows right after
/// its GEMM, while the block is still in cache.
void linear(const float *input, const float *weight, const float *bias,
            float *out, int64_t rows, int64_t k, int64_t n, bool relu);

//===--- TensorKernels.cpp ------------------------------------------------===//

/// result = input with its dimensions permuted: result dim i is input dim
/// permutation[i]. rank <= 8.
void transpose(const float *input, float *out, const int64_t *inputShape,
               const int64_t *permutation, int rank);

/// result[idx] = input[idx restricted to `dims`]: input dimension j is result
/// dimension dims[j], of the same size or 1 (then replicated: the kernel
/// needs inputShape to tell). resultRank <= 8.
void broadcast(const float *input, float *out, const int64_t *resultShape,
               int resultRank, const int64_t *dims, const int64_t *inputShape,
               int inputRank);

/// Reduces `input` over the dimensions flagged in `reduced` (one flag per
/// input dimension) into out, laid out as the input without those
/// dimensions. rank <= 8.
void reduce(const float *input, float *out, const int64_t *shape, int rank,
            const bool *reduced, Reduction kind);

/// out[r, :] = table[ids[r], :] for r < rows.
void embedding(const float *table, const int32_t *ids, float *out,
               int64_t rows, int64_t width);
/// out [vocab, width] = sum over r with ids[r] = v of grad[r, :].
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

//===--- NormKernels.cpp --------------------------------------------------===//

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

/// out = LayerNorm(residual + dropout(sublayer)); saves mean and rstd per
/// row. One pass over the inputs per row.
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

//===--- Attention.cpp ----------------------------------------------------===//


/// out [B, H, Sq, Dv] and lse [B, H, Sq]. Tiled with an online softmax
/// (FlashAttention): per (b, h) and block of queries, blocks of keys update a
/// running max, sum and output; no [Sq, Sk] matrix is ever stored.
void attention(const float *q, const float *k, const float *v, float *out,
               float *lse, const AttentionShape &shape,
               const AttentionConfig &config);
/// dq, dk, dv from the output gradient, recomputing the probabilities
/// tile by tile as exp(s - lse); `output` gives rowsum(dO * O).
void attentionGrad(const float *grad, const float *q, const float *k,
                   const float *v, const float *output, const float *lse,
                   float *dq, float *dk, float *dv, const AttentionShape &shape,
                   const AttentionConfig &config);

//===--- Loss.cpp ---------------------------------------------------------===//

/// Label-smoothed cross-entropy over [rows, classes], averaged over the
/// targets that are not `ignoreIndex`; writes the loss and that count.
void crossEntropy(const float *logits, const int32_t *targets, float *loss,
                  int32_t *tokens, int64_t rows, int64_t classes,
                  float smoothing, int32_t ignoreIndex);
void crossEntropyGrad(float lossGrad, const float *logits,
                      const int32_t *targets, float *out, int64_t rows,
                      int64_t classes, float smoothing, int32_t ignoreIndex);

//===--- Adam.cpp ---------------------------------------------------------===//

/// Bias-corrected Adam on every tensor in one parallel pass (step >= 1).
void adamUpdate(const AdamTensor *tensors, int count, float lr, int32_t step,
                float beta1, float beta2, float epsilon);

} // namespace tgc::cpu

#endif // TGC_RUNTIME_CPU_KERNELS_H
