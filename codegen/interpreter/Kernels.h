//===- Kernels.h - reference kernels of the tg ops --------------*- C++ -*-===//
//
// One plain function per tg op (or op family), computed in double on
// HostTensors. They assume operands that passed the op's verifier; data
// checks (ids in range, Adam step >= 1) are the interpreter's. Formulas follow
// each op's description in ir/TgOps.td.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_INTERPRETER_KERNELS_H
#define TGC_CODEGEN_INTERPRETER_KERNELS_H

#include "codegen/HostTensor.h"
#include "runtime/Philox.h"

#include <cstdint>
#include <span>

namespace tgc::interp {

/// One dropout site: the (seed, step) key, op_id and rate of runtime/Philox.h's
/// stream. The default (rate 0) keeps every element with factor 1.
struct DropoutStream {
  uint32_t seed = 0, step = 0, opId = 0;
  float rate = 0.0f;

  /// What dropout multiplies element `index` by: 0 or 1 / (1 - rate).
  double factor(uint64_t index) const {
    return runtime::dropoutKeep(seed, step, opId, index, rate)
               ? 1.0 / (1.0 - static_cast<double>(rate))
               : 0.0;
  }
};

/// What additive masks add to a hidden score (finite, so fully masked rows
/// stay finite).
inline constexpr double kMaskedScore = -1e9;

//===--- TensorKernels.cpp: matmul, shapes, reductions, embeddings --------===//

HostTensor matmul(const HostTensor &lhs, const HostTensor &rhs,
                  bool transposeLhs, bool transposeRhs);
HostTensor broadcast(const HostTensor &input, std::span<const int64_t> dims,
                     std::vector<int64_t> resultShape);
HostTensor transpose(const HostTensor &input,
                     std::span<const int64_t> permutation);
enum class Reduction { Sum, Max, Mean };
HostTensor reduce(const HostTensor &input, std::span<const int64_t> dims,
                  bool keepDims, Reduction kind);
HostTensor embedding(const HostTensor &table, const HostTensor &ids);
HostTensor embeddingGrad(const HostTensor &grad, const HostTensor &ids,
                         int64_t vocab);

//===--- NormKernels.cpp: softmax, LayerNorm, dropout, their fusion -------===//

HostTensor softmax(const HostTensor &input, int64_t axis);
HostTensor softmaxGrad(const HostTensor &output, const HostTensor &grad,
                       int64_t axis);
/// Elementwise `input * stream.factor(i)`: tg.dropout and tg.dropout_grad.
HostTensor dropout(const HostTensor &input, const DropoutStream &stream);

HostTensor layerNorm(const HostTensor &input, const HostTensor &gamma,
                     const HostTensor &beta, double epsilon);
struct LayerNormGrads {
  HostTensor input, gamma, beta;
};
LayerNormGrads layerNormGrad(const HostTensor &grad, const HostTensor &input,
                             const HostTensor &gamma, double epsilon);

struct ResidualLayerNormResult {
  HostTensor result, mean, rstd;
};
ResidualLayerNormResult
residualLayerNorm(const HostTensor &residual, const HostTensor &sublayer,
                  const HostTensor &gamma, const HostTensor &beta,
                  const DropoutStream &stream, double epsilon);
struct ResidualLayerNormGrads {
  HostTensor residual, sublayer, gamma, beta;
};
/// Uses the saved `mean` and `rstd` rather than recomputing them.
ResidualLayerNormGrads
residualLayerNormGrad(const HostTensor &grad, const HostTensor &residual,
                      const HostTensor &sublayer, const HostTensor &gamma,
                      const HostTensor &mean, const HostTensor &rstd,
                      const DropoutStream &stream);

//===--- AttentionKernels.cpp: tg.attention and its gradient --------------===//

struct AttentionConfig {
  const HostTensor *mask = nullptr; ///< additive [B, Sk], or none
  bool causal = false;
  int64_t causalOffset = 0; ///< query i sits at position causalOffset + i
  double scale = 1.0;
  DropoutStream dropout; ///< index: flat into the [B, H, Sq, Sk] probabilities
};
struct AttentionResult {
  HostTensor output, lse;
};
AttentionResult attention(const HostTensor &query, const HostTensor &key,
                          const HostTensor &value,
                          const AttentionConfig &config);
struct AttentionGrads {
  HostTensor query, key, value;
};
/// Recomputes the probabilities from q, k and the saved `lse`.
AttentionGrads attentionGrad(const HostTensor &grad, const HostTensor &query,
                             const HostTensor &key, const HostTensor &value,
                             const HostTensor &lse,
                             const AttentionConfig &config);

//===--- TrainingKernels.cpp: masks, positions, loss, Adam ----------------===//

HostTensor causalMask(int64_t size);
HostTensor paddingMask(const HostTensor &ids, int64_t padId);
/// Rows for positions first .. first + positions - 1.
HostTensor positionalEncoding(int64_t positions, int64_t width,
                              int64_t first = 0);

struct CrossEntropyResult {
  HostTensor loss, tokens;
};
CrossEntropyResult crossEntropy(const HostTensor &logits,
                                const HostTensor &targets, double smoothing,
                                int64_t ignoreIndex);
HostTensor crossEntropyGrad(double lossGrad, const HostTensor &logits,
                            const HostTensor &targets, double smoothing,
                            int64_t ignoreIndex);

/// One Adam step in place, bias-corrected with t = step (>= 1).
void adamUpdate(HostTensor &param, HostTensor &moment1, HostTensor &moment2,
                const HostTensor &grad, double lr, int64_t step, double beta1,
                double beta2, double epsilon);

} // namespace tgc::interp

#endif // TGC_CODEGEN_INTERPRETER_KERNELS_H
