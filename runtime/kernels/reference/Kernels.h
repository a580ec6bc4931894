//===- Kernels.h - reference kernels of the tg ops --------------*- C++ -*-===//
//
// One plain function per tg op (or op family), computed in double on
// HostTensors. They assume operands that passed the op's verifier; data
// checks (ids in range, Adam step >= 1) are the interpreter's. Formulas follow
// each op's description in ir/Tg*Ops.td.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_KERNELS_REFERENCE_KERNELS_H
#define TGC_RUNTIME_KERNELS_REFERENCE_KERNELS_H

#include "runtime/kernels/reference/HostTensor.h"
#include "runtime/kernels/KernelTypes.h"

#include <cstdint>
#include <span>

namespace tgc::reference {

using runtime::Dropout;

/// What dropout multiplies element `index` by, in double: 0 or
/// 1 / (1 - rate). The same draw as Dropout::factor (runtime/kernels/Philox.h).
inline double dropoutFactor(const Dropout &dropout, uint64_t index) {
  if (dropout.rate <= 0.0f)
    return 1.0;
  return runtime::dropoutKeep(dropout.seed, dropout.step, dropout.opId,
                              index + dropout.indexOffset, dropout.rate)
             ? 1.0 / (1.0 - static_cast<double>(dropout.rate))
             : 0.0;
}

/// What additive masks add to a hidden score (finite, so fully masked rows
/// stay finite).
inline constexpr double kMaskedScore = -1e9;

//===--- Gemm.cpp: matmul, linear -----------------------------------------===//

HostTensor matmul(const HostTensor &lhs, const HostTensor &rhs,
                  bool transposeLhs, bool transposeRhs);
/// input [..., k] x weight [k, n] + bias [n]: tg.linear's pre-activation.
HostTensor linear(const HostTensor &input, const HostTensor &weight,
                  const HostTensor &bias);
/// Each element through tg.linear's epilogue activation.
HostTensor activated(HostTensor values, runtime::Activation activation);

//===--- Tensor.cpp: shapes, reductions, slices, gathers, masks, positions -===//
HostTensor broadcast(const HostTensor &input, std::span<const int64_t> dims,
                     std::vector<int64_t> resultShape);
HostTensor transpose(const HostTensor &input,
                     std::span<const int64_t> permutation);
using runtime::Reduction;
HostTensor reduce(const HostTensor &input, std::span<const int64_t> dims,
                  bool keepDims, Reduction kind);
HostTensor embedding(const HostTensor &table, const HostTensor &ids);
HostTensor embeddingGrad(const HostTensor &grad, const HostTensor &ids,
                         int64_t vocab);
/// Copies `value` into `target` at `index` along `axis` (the caller checks
/// that it fits).
void storeSlice(HostTensor &target, const HostTensor &value, int64_t axis,
                int64_t index);
/// Elements [start, start + size) of `input` along `dim`.
HostTensor slice(const HostTensor &input, int64_t dim, int64_t start,
                 int64_t size);
/// Zeros of `inputShape` with `grad` at [start, ...) along `dim`.
HostTensor sliceGrad(const HostTensor &grad, int64_t dim, int64_t start,
                     std::vector<int64_t> inputShape);
/// The inputs one after the other along `dim`.
HostTensor concat(std::span<const HostTensor *const> inputs, int64_t dim);
/// input[a..., indices[i...], b...] (numpy take); indices in range.
HostTensor gather(const HostTensor &input, const HostTensor &indices,
                  int64_t dim);
/// Zeros of `inputShape` into which each gathered entry's gradient is added
/// where it was taken.
HostTensor gatherGrad(const HostTensor &grad, const HostTensor &indices,
                      int64_t dim, std::vector<int64_t> inputShape);
HostTensor causalMask(int64_t size);
HostTensor paddingMask(const HostTensor &ids, int64_t padId);
/// Rows for positions first .. first + positions - 1.
HostTensor positionalEncoding(int64_t positions, int64_t width,
                              int64_t first = 0);
/// Rotary embedding of input [..., S, D]: position first + s turns the
/// pairs (x[i], x[i + D/2]) by (first + s) * base^(-2i/D); `inverse`
/// negates the angle.
HostTensor rotary(const HostTensor &input, double base, bool inverse,
                  int64_t first = 0);

//===--- Norm.cpp: softmax, LayerNorm, RMSNorm, dropout, their fusion ===//

HostTensor softmax(const HostTensor &input, int64_t axis);
HostTensor softmaxGrad(const HostTensor &output, const HostTensor &grad,
                       int64_t axis);
/// Elementwise `input * dropoutFactor(dropout, i)`: tg.dropout and tg.dropout_grad.
HostTensor dropout(const HostTensor &input, const Dropout &dropout);

HostTensor layerNorm(const HostTensor &input, const HostTensor &gamma,
                     const HostTensor &beta, double epsilon);
/// The gradients of a norm's input, gamma and (LayerNorm's) beta; an
/// RMSNorm's beta is empty.
struct NormGrads {
  HostTensor input, gamma, beta;
};
NormGrads layerNormGrad(const HostTensor &grad, const HostTensor &input,
                        const HostTensor &gamma, double epsilon);
HostTensor rmsNorm(const HostTensor &input, const HostTensor &gamma,
                   double epsilon);
NormGrads rmsNormGrad(const HostTensor &grad, const HostTensor &input,
                      const HostTensor &gamma, double epsilon);

/// The fused residual norms take `beta` for LayerNorm and null for RMSNorm,
/// whose mean is then empty. `sum` is h = residual + dropout(sublayer).
struct ResidualNormResult {
  HostTensor result, mean, rstd, sum;
};
ResidualNormResult residualNorm(const HostTensor &residual,
                                const HostTensor &sublayer,
                                const HostTensor &gamma,
                                const HostTensor *beta, const Dropout &dropout,
                                double epsilon);
/// An RMSNorm's beta gradient is empty.
struct ResidualNormGrads {
  HostTensor residual, sublayer, gamma, beta;
};
/// From the forward's `result` and saved `rstd`: the normalized rows are
/// (result - beta) / gamma (RMSNorm: result / gamma). A `sumGrad` (the
/// gradient of the forward's sum) adds to the residual's gradient, and
/// through the dropout mask to the sublayer's.
ResidualNormGrads residualNormGrad(const HostTensor &grad,
                                   const HostTensor &result,
                                   const HostTensor &gamma,
                                   const HostTensor *beta,
                                   const HostTensor &rstd,
                                   const Dropout &dropout,
                                   const HostTensor *sumGrad = nullptr);

//===--- Attention.cpp: tg.attention and its gradient --------------===//

struct AttentionConfig {
  const HostTensor *mask = nullptr; ///< additive [B, Sk], or none
  /// Additive score bias [B or 1, H or 1, Sq, Sk], or none.
  const HostTensor *bias = nullptr;
  /// attentionGrad also returns the bias's gradient.
  bool biasGrad = false;
  bool causal = false;
  int64_t causalOffset = 0; ///< query i sits at position causalOffset + i
  double scale = 1.0;
  Dropout dropout; ///< index: flat into the [B, H, Sq, Sk] probabilities
  /// tg.attention's bf16_products: what multiplies v, and in the gradient
  /// what multiplies v, q, k and dO, is rounded to bf16 (as f32) first.
  bool bf16Products = false;
  /// A masked score is added in float, as every kernel (and an unfused
  /// tg.add in float) adds it: -1e9 + s is -1e9 for |s| < 32, so a row
  /// whose every key is masked weighs them alike. The interpreter's f32
  /// precision sets it; in f64 the mask is added in double.
  bool floatMaskedScores = false;
};
struct AttentionResult {
  HostTensor output, lse;
};
AttentionResult attention(const HostTensor &query, const HostTensor &key,
                          const HostTensor &value,
                          const AttentionConfig &config);
struct AttentionGrads {
  HostTensor query, key, value;
  HostTensor bias; ///< with config.biasGrad: the bias's shape
};
/// Recomputes the probabilities from q, k and the saved `lse`.
AttentionGrads attentionGrad(const HostTensor &grad, const HostTensor &query,
                             const HostTensor &key, const HostTensor &value,
                             const HostTensor &lse,
                             const AttentionConfig &config);

//===--- Loss.cpp: label-smoothed cross-entropy ---------------------------===//

struct CrossEntropyResult {
  HostTensor loss, tokens;
};
CrossEntropyResult crossEntropy(const HostTensor &logits,
                                const HostTensor &targets, double smoothing,
                                int64_t ignoreIndex);
HostTensor crossEntropyGrad(double lossGrad, const HostTensor &logits,
                            const HostTensor &targets, double smoothing,
                            int64_t ignoreIndex);

//===--- Adam.cpp ---------------------------------------------------------===//

/// One Adam step in place, bias-corrected with t = step (>= 1); AdamW's
/// decoupled decay `param -= lr * weightDecay * param` with it.
void adamUpdate(HostTensor &param, HostTensor &moment1, HostTensor &moment2,
                const HostTensor &grad, double lr, int64_t step, double beta1,
                double beta2, double epsilon, double weightDecay = 0.0);

} // namespace tgc::reference

#endif // TGC_RUNTIME_KERNELS_REFERENCE_KERNELS_H
