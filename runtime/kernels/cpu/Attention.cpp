//===- Attention.cpp - attention and its gradient on small GEMMs ------===//
//
// Scores as the reference (runtime/kernels/reference/Attention.cpp):
//   s_ij = scale q_i.k_j + mask[b, j] + (causal && j > i ? kMaskedScore : 0)
// Each (b, h) is one OpenMP work item and writes only its own rows of every
// output. Its queries go in blocks of kQueryBlock rows; a block's scores
// against every key it can see are one [rows, keys] matrix in per-thread
// scratch (no [Sq, Sk] matrix of the whole head or batch exists), so each
// product of the forward and the backward is one small sgemm in the calling
// thread, and the softmax works on whole rows (vectorized expf). The sgemm
// is OpenBLAS's: its OpenMP build runs single-threaded inside a parallel
// region and is documented safe there, and its small-matrix kernels take
// 0.3-0.7 us for a 32x32x32 tile where oneDNN's sgemm takes 0.6-2.6 us
// (AMD EPYC, AVX-512): 3L-d256's attention forward + backward 30 -> 22 ms.
// A block's dropout factors come from one call (the Philox stream is
// contiguous over a block's rows when it sees every key). Measured against
// tiles of vector loops (bench/attention_kernels.cpp).
//
// Causal blocks stop at the last key any of their queries sees; within the
// block, later keys' probabilities exp(s - max) underflow to exactly 0
// whenever the row sees some unmasked key. (A row whose every key is masked
// is not reproduced anyway: in float, -1e9 + s rounds s away.)
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cpu/Kernels.h"
#include "runtime/kernels/cpu/VectorMath.h"

#include <algorithm>
#include <cblas.h>
#include <cmath>
#include <vector>

namespace tgc::cpu {

namespace {
constexpr int64_t kQueryBlock = 64;
/// Below this many multiply-adds the heads run serially.
constexpr int64_t kParallelWork = 1 << 16;

/// row[j] = exp(row[j] - shift) in place, and exactly 0 where that would
/// be below float's normal range (masked scores: libmvec's vector expf
/// takes a slow scalar path for arguments that far out, and the terms it
/// would give are below 1e-37 of the row's largest). Two passes: written as
/// one, `x < floor ? 0 : expf(max(x, floor))`, GCC drops the max and calls
/// expf on the masked scores themselves.
inline void expOrZero(float *row, int64_t n, float shift) {
  constexpr float kFloor = -87.0f;
#pragma omp simd
  for (int64_t j = 0; j < n; ++j)
    row[j] = std::max(row[j] - shift, kFloor);
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) {
    float e = expf(row[j]);
    row[j] = row[j] > kFloor ? e : 0.0f;
  }
}

/// One (b, h): its rows of q, k, v (f32) and its mask row (or null).
struct Head {
  const float *q, *k, *v, *mask;
  int64_t b, h;
};

/// out [m, n] = alpha op(a) op(b) + beta out, row-major, in the calling
/// thread (oneDNN runs single-threaded inside an OpenMP parallel region).
/// `lda`: a's stored row length where it is not the default (k, or m
/// transposed).
void smallGemm(const float *a, const float *b, float *out, int64_t m, int64_t n,
               int64_t k, bool transposeA, bool transposeB, float alpha,
               float beta, int64_t lda = 0) {
  if (lda == 0)
    lda = transposeA ? m : k;
  cblas_sgemm(CblasRowMajor, transposeA ? CblasTrans : CblasNoTrans,
              transposeB ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), alpha, a,
              static_cast<int>(lda), b,
              static_cast<int>(transposeB ? k : n), beta, out,
              static_cast<int>(n));
}

/// This thread's scratch matrices of a block, grown to the largest block
/// once and reused after.
struct BlockScratch {
  std::vector<float> scores, factors, grads;
  void reserve(int64_t size) {
    if (static_cast<int64_t>(scores.size()) < size) {
      scores.resize(size);
      factors.resize(size);
      grads.resize(size);
    }
  }
};
BlockScratch &blockScratch(int64_t size) {
  thread_local BlockScratch scratch;
  scratch.reserve(size);
  return scratch;
}
} // namespace

/// `count` values of a head's q, k or v from `first` on, as f32: the f32
/// input itself, or bf16 inputs (tg-mixed-precision) widened into this
/// thread's scratch for `Role`. The products of widened bf16 values are
/// exact in f32, so the kernels below compute what the interpreter does on
/// the rounded values.
template <int Role>
const float *headRows(const float *x, int64_t first, int64_t) {
  return x + first;
}
template <int Role>
const float *headRows(const Bf16 *x, int64_t first, int64_t count) {
  thread_local std::vector<float> widened;
  widened.resize(count);
  for (int64_t i = 0; i < count; ++i)
    widened[i] = runtime::widen(x[first + i]);
  return widened.data();
}

/// Head `bh` of the whole q, k, v.
template <typename T>
static Head headOf(const T *q, const T *k, const T *v, const AttentionShape &s,
                   const AttentionConfig &config, int64_t bh) {
  int64_t qCount = s.queries * s.keyDim, kCount = s.keys * s.keyDim,
          vCount = s.keys * s.valueDim;
  return {headRows<0>(q, bh * qCount, qCount), headRows<1>(k, bh * kCount, kCount),
          headRows<2>(v, bh * vCount, vCount),
          config.mask ? config.mask + (bh / s.heads) * s.keys : nullptr,
          bh / s.heads, bh % s.heads};
}

/// Keys after this one are causally masked for every query of the block
/// starting at i0 with nq rows.
static int64_t keyEnd(const AttentionShape &s, const AttentionConfig &config,
                      int64_t i0, int64_t nq) {
  return config.causal ? std::min(s.keys, config.causalOffset + i0 + nq)
                       : s.keys;
}

/// The block's scores [nq, nk] (one GEMM, then the masks) and its dropout
/// factors, [nq, s.keys] (rows as long as the head's, so that a block that
/// sees every key takes its factors in one call).
static void blockScores(const Head &head, const AttentionShape &s,
                        const AttentionConfig &config, int64_t i0, int64_t nq,
                        int64_t nk, float *scores, float *factors) {
  smallGemm(head.q + i0 * s.keyDim, head.k, scores, nq, nk, s.keyDim, false,
            true, config.scale, 0.0f);
  for (int64_t i = 0; i < nq; ++i) {
    int64_t query = i0 + i;
    float *row = scores + i * nk;
    if (head.mask) {
#pragma omp simd
      for (int64_t j = 0; j < nk; ++j)
        row[j] += head.mask[j];
    }
    if (config.causal)
      for (int64_t j = std::max<int64_t>(config.causalOffset + query + 1, 0);
           j < nk; ++j)
        row[j] += kMaskedScore;
  }
  uint64_t first = static_cast<uint64_t>(
      ((head.b * s.heads + head.h) * s.queries + i0) * s.keys);
  if (nk == s.keys) {
    dropoutFactors(config.dropout, first, nq * s.keys, factors);
    return;
  }
  for (int64_t i = 0; i < nq; ++i)
    dropoutFactors(config.dropout, first + i * s.keys, nk, factors + i * s.keys);
}

/// One block of queries: p = exp(s - max) over whole rows, the output rows
/// sum_j p f v_j / l with l the undropped sum, lse = max + log l.
static void attentionBlock(const Head &head, const AttentionShape &s,
                           const AttentionConfig &config, int64_t i0,
                           int64_t nq, float *out, float *lse) {
  const int64_t nk = keyEnd(s, config, i0, nq);
  BlockScratch &scratch = blockScratch(kQueryBlock * s.keys);
  float *scores = scratch.scores.data(), *factors = scratch.factors.data();
  blockScores(head, s, config, i0, nq, nk, scores, factors);
  float inverse[kQueryBlock];
  for (int64_t i = 0; i < nq; ++i) {
    float *row = scores + i * nk;
    const float *f = factors + i * s.keys;
    float max = row[0];
#pragma omp simd reduction(max : max)
    for (int64_t j = 0; j < nk; ++j)
      max = std::max(max, row[j]);
    expOrZero(row, nk, max);
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < nk; ++j) {
      sum += row[j];
      row[j] *= f[j];
    }
    inverse[i] = 1.0f / sum;
    lse[i0 + i] = max + std::log(sum);
  }
  float *o = out + i0 * s.valueDim;
  smallGemm(scores, head.v, o, nq, s.valueDim, nk, false, false, 1.0f, 0.0f);
  for (int64_t i = 0; i < nq; ++i)
    for (int64_t c = 0; c < s.valueDim; ++c)
      o[i * s.valueDim + c] *= inverse[i];
}

template <typename T>
static void attentionOf(const T *q, const T *k, const T *v, float *out,
                        float *lse, const AttentionShape &shape,
                        const AttentionConfig &config) {
  int64_t heads = shape.batch * shape.heads;
  int64_t work = heads * shape.queries * shape.keys *
                 (shape.keyDim + shape.valueDim);
#pragma omp parallel for schedule(dynamic) if (heads > 1 && work >= kParallelWork)
  for (int64_t bh = 0; bh < heads; ++bh) {
    Head head = headOf(q, k, v, shape, config, bh);
    float *headOut = out + bh * shape.queries * shape.valueDim;
    float *headLse = lse + bh * shape.queries;
    for (int64_t i0 = 0; i0 < shape.queries; i0 += kQueryBlock)
      attentionBlock(head, shape, config, i0,
                     std::min(kQueryBlock, shape.queries - i0), headOut,
                     headLse);
  }
}

namespace {
/// One head's gradient rows and the saved forward values it reads.
struct HeadGrads {
  const float *grad, *output, *lse;
  float *dq, *dk, *dv;
};
} // namespace

/// One block of queries' gradients: with p = exp(s - lse),
/// dp = f (dO_i . v_j), ds = scale p (dp - D_i) and D_i = dO_i . O_i
/// (= sum_j p dp, the softmax's row term),
///   dv += (p f)^T dO,  dq = ds k,  dk += ds^T q.
static void attentionGradBlock(const Head &head, const HeadGrads &g,
                               const AttentionShape &s,
                               const AttentionConfig &config, int64_t i0,
                               int64_t nq) {
  const int64_t nk = keyEnd(s, config, i0, nq);
  BlockScratch &scratch = blockScratch(kQueryBlock * s.keys);
  float *probabilities = scratch.scores.data(), *factors = scratch.factors.data(),
        *grads = scratch.grads.data();
  blockScores(head, s, config, i0, nq, nk, probabilities, factors);
  // dO_i . v_j for the block.
  smallGemm(g.grad + i0 * s.valueDim, head.v, grads, nq, nk, s.valueDim, false,
            true, 1.0f, 0.0f);
  for (int64_t i = 0; i < nq; ++i) {
    int64_t query = i0 + i;
    const float *dO = g.grad + query * s.valueDim, *o = g.output + query * s.valueDim;
    float rowDot = 0.0f;
#pragma omp simd reduction(+ : rowDot)
    for (int64_t c = 0; c < s.valueDim; ++c)
      rowDot += dO[c] * o[c];
    const float rowLse = g.lse[query], scale = config.scale;
    float *p = probabilities + i * nk, *f = factors + i * s.keys,
          *ds = grads + i * nk;
    expOrZero(p, nk, rowLse);
#pragma omp simd
    for (int64_t j = 0; j < nk; ++j) {
      ds[j] = scale * p[j] * (f[j] * ds[j] - rowDot);
      f[j] *= p[j]; // p f, for dv
    }
  }
  smallGemm(factors, g.grad + i0 * s.valueDim, g.dv, nk, s.valueDim, nq, true,
            false, 1.0f, 1.0f, s.keys);
  smallGemm(grads, head.k, g.dq + i0 * s.keyDim, nq, s.keyDim, nk, false, false,
            1.0f, 0.0f);
  smallGemm(grads, head.q + i0 * s.keyDim, g.dk, nk, s.keyDim, nq, true, false,
            1.0f, 1.0f);
}

template <typename T>
static void attentionGradOf(const float *grad, const T *q, const T *k,
                            const T *v, const float *output, const float *lse,
                            float *dq, float *dk, float *dv,
                            const AttentionShape &shape,
                            const AttentionConfig &config) {
  int64_t heads = shape.batch * shape.heads;
  int64_t work = heads * shape.queries * shape.keys *
                 (shape.keyDim + shape.valueDim);
  int64_t qRows = shape.queries, kRows = shape.keys;
#pragma omp parallel for schedule(dynamic) if (heads > 1 && work >= kParallelWork)
  for (int64_t bh = 0; bh < heads; ++bh) {
    Head head = headOf(q, k, v, shape, config, bh);
    HeadGrads g{grad + bh * qRows * shape.valueDim,
                output + bh * qRows * shape.valueDim, lse + bh * qRows,
                dq + bh * qRows * shape.keyDim, dk + bh * kRows * shape.keyDim,
                dv + bh * kRows * shape.valueDim};
    // Keys no block sees (causal) keep zero gradients.
    std::fill(g.dk, g.dk + kRows * shape.keyDim, 0.0f);
    std::fill(g.dv, g.dv + kRows * shape.valueDim, 0.0f);
    for (int64_t i0 = 0; i0 < qRows; i0 += kQueryBlock)
      attentionGradBlock(head, g, shape, config, i0,
                         std::min(kQueryBlock, qRows - i0));
  }
}

void attention(const float *q, const float *k, const float *v, float *out,
               float *lse, const AttentionShape &shape,
               const AttentionConfig &config) {
  attentionOf(q, k, v, out, lse, shape, config);
}

void attention(const Bf16 *q, const Bf16 *k, const Bf16 *v, float *out,
               float *lse, const AttentionShape &shape,
               const AttentionConfig &config) {
  attentionOf(q, k, v, out, lse, shape, config);
}

void attentionGrad(const float *grad, const float *q, const float *k,
                   const float *v, const float *output, const float *lse,
                   float *dq, float *dk, float *dv, const AttentionShape &shape,
                   const AttentionConfig &config) {
  attentionGradOf(grad, q, k, v, output, lse, dq, dk, dv, shape, config);
}

void attentionGrad(const float *grad, const Bf16 *q, const Bf16 *k,
                   const Bf16 *v, const float *output, const float *lse,
                   float *dq, float *dk, float *dv, const AttentionShape &shape,
                   const AttentionConfig &config) {
  attentionGradOf(grad, q, k, v, output, lse, dq, dk, dv, shape, config);
}

} // namespace tgc::cpu
