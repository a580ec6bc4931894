//===- AttentionKernels.cpp - tg.attention and tg.attention_grad --------===//
//
// Per (batch b, head h, query i), with j over keys:
//   s_ij = scale * q_i . k_j + bias[b, h, i, j] + mask[b, j]
//          + (causal && j > i ? -1e9 : 0)
//   (the bias broadcast over a unit batch or head dimension)
//   lse_i = log sum_j exp(s_ij),  p_ij = exp(s_ij) / sum_j' exp(s_ij')
//   (the backward recomputes p_ij as exp(s_ij - lse_i))
//   out_i = sum_j p_ij f_ij v_j,  f = the dropout factor of element
//           ((b * H + h) * Sq + i) * Sk + j of the probabilities.
// With bf16 products (tg-mixed-precision), out_i = sum_j r(e_ij f_ij) v_j
// / sum_j e_ij with e_ij = exp(s_ij - max_j' s_ij') and r() the rounding
// of an f32 to bf16: the kernels multiply v by the unnormalized, rounded
// probabilities and divide after. The backward rounds likewise each
// operand of its four products (see attentionGrad).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/reference/Kernels.h"

#include <algorithm>
#include <cmath>

namespace tgc::reference {

namespace {
/// x as the kernels' products see it: as is, or rounded to f32 and then to
/// bf16 (bf16 products).
double productOperand(double x, bool bf16) {
  return bf16 ? runtime::widen(runtime::roundToBf16(static_cast<float>(x))) : x;
}

/// q [B, H, Sq, Dk], k [B, H, Sk, Dk], v [B, H, Sk, Dv].
struct AttentionDims {
  int64_t batch, heads, queries, keys, keyDim, valueDim;

  AttentionDims(const HostTensor &q, const HostTensor &k, const HostTensor &v)
      : batch(q.shape[0]), heads(q.shape[1]), queries(q.shape[2]),
        keys(k.shape[2]), keyDim(q.shape[3]), valueDim(v.shape[3]) {}

  /// Flat index of row `i` (query or key) of head (b, h) in a [B, H, S, D]
  /// tensor.
  int64_t row(int64_t b, int64_t h, int64_t rows, int64_t i,
              int64_t dim) const {
    return ((b * heads + h) * rows + i) * dim;
  }

  /// Flat index of score (i, j) of head (b, h) in a [B or 1, H or 1, Sq, Sk]
  /// bias.
  int64_t biasIndex(const HostTensor &bias, int64_t b, int64_t h, int64_t i,
                    int64_t j) const {
    int64_t bb = bias.shape[0] == 1 ? 0 : b, bh = bias.shape[1] == 1 ? 0 : h;
    return ((bb * bias.shape[1] + bh) * queries + i) * keys + j;
  }
};
} // namespace

/// The scores s_ij of one query row.
static std::vector<double> scoreRow(const HostTensor &q, const HostTensor &k,
                                    const AttentionConfig &config,
                                    const AttentionDims &d, int64_t b,
                                    int64_t h, int64_t i) {
  std::vector<double> scores(d.keys);
  const double *qi = q.data.data() + d.row(b, h, d.queries, i, d.keyDim);
  for (int64_t j = 0; j < d.keys; ++j) {
    const double *kj = k.data.data() + d.row(b, h, d.keys, j, d.keyDim);
    double dot = 0.0;
    for (int64_t c = 0; c < d.keyDim; ++c)
      dot += qi[c] * kj[c];
    double s = config.scale * dot;
    if (config.bias)
      s += (*config.bias)[d.biasIndex(*config.bias, b, h, i, j)];
    // floatMaskedScores: a row whose every key is masked (a padding row of
    // a batch) weighs its keys alike, as the kernels do, instead of by the
    // scores its mask was to hide.
    if (config.mask) {
      double m = (*config.mask)[b * d.keys + j];
      if (config.floatMaskedScores && m != 0.0)
        s = static_cast<float>(static_cast<float>(s) + static_cast<float>(m));
      else
        s += m;
    }
    if (config.causal && j > config.causalOffset + i)
      s += kMaskedScore;
    scores[j] = s;
  }
  return scores;
}

/// Flat index of probability (i, j) of head (b, h): the dropout index.
static uint64_t probabilityIndex(const AttentionDims &d, int64_t b, int64_t h,
                                 int64_t i, int64_t j) {
  return static_cast<uint64_t>(((b * d.heads + h) * d.queries + i) * d.keys +
                               j);
}

AttentionResult attention(const HostTensor &query, const HostTensor &key,
                          const HostTensor &value,
                          const AttentionConfig &config) {
  AttentionDims d(query, key, value);
  AttentionResult result{HostTensor({d.batch, d.heads, d.queries, d.valueDim}),
                         HostTensor({d.batch, d.heads, d.queries})};
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t h = 0; h < d.heads; ++h)
      for (int64_t i = 0; i < d.queries; ++i) {
        std::vector<double> s = scoreRow(query, key, config, d, b, h, i);
        double max = *std::max_element(s.begin(), s.end());
        double sum = 0.0;
        for (double x : s)
          sum += std::exp(x - max);
        double lse = max + std::log(sum);
        result.lse[(b * d.heads + h) * d.queries + i] = lse;
        double *out =
            result.output.data.data() + d.row(b, h, d.queries, i, d.valueDim);
        // exp(s - max) / sum rather than exp(s - lse): exact for rows whose
        // scores are all near -1e9.
        for (int64_t j = 0; j < d.keys; ++j) {
          double f = dropoutFactor(config.dropout, probabilityIndex(d, b, h, i, j));
          double p = config.bf16Products
                         ? productOperand(std::exp(s[j] - max) * f, true) / sum
                         : std::exp(s[j] - max) / sum * f;
          const double *vj =
              value.data.data() + d.row(b, h, d.keys, j, d.valueDim);
          for (int64_t c = 0; c < d.valueDim; ++c)
            out[c] += p * vj[c];
        }
      }
  return result;
}

// With P the probabilities, F the dropout factors and dO the output gradient:
//   dV_j += P_ij F_ij dO_i,  dP_ij = F_ij (dO_i . v_j),
//   dS_ij = P_ij (dP_ij - sum_j' P_ij' dP_ij'),
//   dQ_i += scale dS_ij k_j,  dK_j += scale dS_ij q_i,
//   dBias[b, h, i, j] += dS_ij (summed over a unit batch or head dimension).
// With bf16 products, r(dO_i) in dP and dV, r(P_ij F_ij) in dV and
// r(scale dS_ij) in dQ and dK.
AttentionGrads attentionGrad(const HostTensor &grad, const HostTensor &query,
                             const HostTensor &key, const HostTensor &value,
                             const HostTensor &lse,
                             const AttentionConfig &config) {
  AttentionDims d(query, key, value);
  AttentionGrads grads{HostTensor(query.shape), HostTensor(key.shape),
                       HostTensor(value.shape), HostTensor()};
  if (config.biasGrad)
    grads.bias = HostTensor(config.bias->shape);
  std::vector<double> p(d.keys), factor(d.keys), dp(d.keys),
      roundedGrad(d.valueDim);
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t h = 0; h < d.heads; ++h)
      for (int64_t i = 0; i < d.queries; ++i) {
        std::vector<double> s = scoreRow(query, key, config, d, b, h, i);
        double rowLse = lse[(b * d.heads + h) * d.queries + i];
        const double *dO =
            grad.data.data() + d.row(b, h, d.queries, i, d.valueDim);
        const bool bf16 = config.bf16Products;
        for (int64_t c = 0; c < d.valueDim; ++c)
          roundedGrad[c] = productOperand(dO[c], bf16);
        // A row whose every key is masked: its lse (about -1e9) held in f32
        // (the interpreter's tensors) has lost log(sum), and exp(s - lse)
        // would weigh each key 1, not as the forward did; taken again here.
        if (runtime::everyKeyMasked(static_cast<float>(rowLse))) {
          const double max = *std::max_element(s.begin(), s.end());
          double sum = 0.0;
          for (double x : s)
            sum += std::exp(x - max);
          rowLse = max + std::log(sum);
        }
        double rowDot = 0.0;
        for (int64_t j = 0; j < d.keys; ++j) {
          p[j] = std::exp(s[j] - rowLse);
          factor[j] = dropoutFactor(config.dropout, probabilityIndex(d, b, h, i, j));
          const double *vj =
              value.data.data() + d.row(b, h, d.keys, j, d.valueDim);
          double *dvj =
              grads.value.data.data() + d.row(b, h, d.keys, j, d.valueDim);
          double dropped = 0.0, kept = productOperand(p[j] * factor[j], bf16);
          for (int64_t c = 0; c < d.valueDim; ++c) {
            dropped += roundedGrad[c] * vj[c];
            dvj[c] += kept * roundedGrad[c];
          }
          dp[j] = factor[j] * dropped;
          rowDot += p[j] * dp[j];
        }
        const double *qi =
            query.data.data() + d.row(b, h, d.queries, i, d.keyDim);
        double *dqi =
            grads.query.data.data() + d.row(b, h, d.queries, i, d.keyDim);
        for (int64_t j = 0; j < d.keys; ++j) {
          if (config.biasGrad)
            grads.bias[d.biasIndex(grads.bias, b, h, i, j)] +=
                p[j] * (dp[j] - rowDot);
          double ds = productOperand(config.scale * p[j] * (dp[j] - rowDot), bf16);
          const double *kj = key.data.data() + d.row(b, h, d.keys, j, d.keyDim);
          double *dkj =
              grads.key.data.data() + d.row(b, h, d.keys, j, d.keyDim);
          for (int64_t c = 0; c < d.keyDim; ++c) {
            dqi[c] += ds * kj[c];
            dkj[c] += ds * qi[c];
          }
        }
      }
  return grads;
}

} // namespace tgc::reference
