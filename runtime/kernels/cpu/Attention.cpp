//===- Attention.cpp - tiled attention and its gradient --------------===//
//
// Scores as the reference (runtime/kernels/reference/Attention.cpp):
//   s_ij = scale q_i.k_j + mask[b, j] + (causal && j > i ? kMaskedScore : 0)
// computed one [kQueryBlock x kKeyBlock] tile at a time into per-thread
// stack scratch; no [Sq, Sk] matrix exists. Each (b, h) is one OpenMP work
// item and writes only its own rows of every output.
//
// Causal tiles whose keys all lie after every query of the block are skipped:
// their probabilities exp(s - max) underflow to exactly 0 whenever the row
// sees some unmasked key. (A row whose every key is masked is not
// reproduced anyway: in float, -1e9 + s rounds s away.)
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cpu/DropoutFactors.h"
#include "runtime/kernels/cpu/Kernels.h"
#include "runtime/kernels/cpu/VectorMath.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace tgc::cpu {

namespace {
constexpr int64_t kQueryBlock = 16, kKeyBlock = 64;
/// Below this many multiply-adds the heads run serially.
constexpr int64_t kParallelWork = 1 << 16;

/// One (b, h): its rows of q, k, v and its mask row (or null), and k (and
/// for the backward v) transposed, [dim, keys], so that a tile's dot
/// products run as vector operations along the keys.
struct Head {
  const float *q, *k, *v, *mask;
  int64_t b, h;
  const float *kT = nullptr, *vT = nullptr;
};

/// One tile: queries [i0, i0 + nq), keys [j0, j0 + nk).
struct Tile {
  int64_t i0, nq, j0, nk;
};
} // namespace

/// rows [count, width] transposed into out [width, count].
static void transposeInto(const float *rows, int64_t count, int64_t width,
                          float *out) {
  for (int64_t r = 0; r < count; ++r)
    for (int64_t c = 0; c < width; ++c)
      out[c * count + r] = rows[r * width + c];
}

/// The head's views of its rows `hq`, `hk`, `hv` and, with at least a full
/// tile of keys (where the transposition pays: 15% faster tiles on the base
/// model's 64 keys, 5% slower on 32), k^T (and v^T when `withValues`) in
/// this thread's scratch, which grows to the largest head once and is reused
/// after.
static Head headView(const float *hq, const float *hk, const float *hv,
                     const AttentionShape &s, const AttentionConfig &config,
                     int64_t bh, bool withValues) {
  Head head{hq, hk, hv,
            config.mask ? config.mask + (bh / s.heads) * s.keys : nullptr,
            bh / s.heads, bh % s.heads};
  if (s.keys < kKeyBlock)
    return head;
  thread_local std::vector<float> scratch;
  size_t size = s.keys * (s.keyDim + (withValues ? s.valueDim : 0));
  if (scratch.size() < size)
    scratch.resize(size);
  transposeInto(head.k, s.keys, s.keyDim, scratch.data());
  head.kT = scratch.data();
  if (withValues) {
    transposeInto(head.v, s.keys, s.valueDim, scratch.data() + s.keys * s.keyDim);
    head.vT = scratch.data() + s.keys * s.keyDim;
  }
  return head;
}

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

/// headView of head `bh` of the whole q, k, v.
template <typename T>
static Head headOf(const T *q, const T *k, const T *v, const AttentionShape &s,
                   const AttentionConfig &config, int64_t bh,
                   bool withValues) {
  int64_t qCount = s.queries * s.keyDim, kCount = s.keys * s.keyDim,
          vCount = s.keys * s.valueDim;
  return headView(headRows<0>(q, bh * qCount, qCount),
                  headRows<1>(k, bh * kCount, kCount),
                  headRows<2>(v, bh * vCount, vCount), s, config, bh,
                  withValues);
}

/// out[j] = scale sum_c a[c] bT[c][j0 + j] for j < n: one row of a tile's
/// products, vectorized along j.
static void rowTimesTransposed(const float *a, const float *bT, int64_t dim,
                               int64_t keys, int64_t j0, int64_t n,
                               float scale, float *out) {
  std::fill(out, out + n, 0.0f);
  for (int64_t c = 0; c < dim; ++c) {
    float ac = scale * a[c];
    const float *b = bT + c * keys + j0;
#pragma omp simd
    for (int64_t j = 0; j < n; ++j)
      out[j] += ac * b[j];
  }
}

/// Keys after this one are causally masked for every query of the block
/// starting at i0 with nq rows.
static int64_t keyEnd(const AttentionShape &s, const AttentionConfig &config,
                      int64_t i0, int64_t nq) {
  return config.causal ? std::min(s.keys, config.causalOffset + i0 + nq)
                       : s.keys;
}

static float dot(const float *a, const float *b, int64_t n) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t c = 0; c < n; ++c)
    sum += a[c] * b[c];
  return sum;
}

/// scores[i * kKeyBlock + j] = s_ij and factors likewise, for the tile.
static void tileScores(const Head &head, const AttentionShape &s,
                       const AttentionConfig &config, const Tile &t,
                       float *scores, float *factors) {
  for (int64_t i = 0; i < t.nq; ++i) {
    int64_t query = t.i0 + i;
    const float *qi = head.q + query * s.keyDim;
    float *row = scores + i * kKeyBlock;
    if (head.kT)
      rowTimesTransposed(qi, head.kT, s.keyDim, s.keys, t.j0, t.nk,
                         config.scale, row);
    else
      for (int64_t j = 0; j < t.nk; ++j)
        row[j] = config.scale * dot(qi, head.k + (t.j0 + j) * s.keyDim, s.keyDim);
    for (int64_t j = 0; j < t.nk; ++j) {
      int64_t key = t.j0 + j;
      if (head.mask)
        row[j] += head.mask[key];
      if (config.causal && key > config.causalOffset + query)
        row[j] += kMaskedScore;
    }
    uint64_t first = static_cast<uint64_t>(
        ((head.b * s.heads + head.h) * s.queries + query) * s.keys + t.j0);
    dropoutFactors(config.dropout, first, t.nk, factors + i * kKeyBlock);
  }
}

/// Online softmax over the key tiles of one block of queries: a running max
/// m and sum l per row, the output rows accumulating sum_j e^(s_ij - m) f_ij
/// v_j and rescaled whenever m grows. The normalizer l is the undropped sum.
static void attentionBlock(const Head &head, const AttentionShape &s,
                           const AttentionConfig &config, int64_t i0,
                           int64_t nq, float *out, float *lse) {
  float scores[kQueryBlock * kKeyBlock], factors[kQueryBlock * kKeyBlock];
  float m[kQueryBlock], l[kQueryBlock];
  std::fill(m, m + nq, -std::numeric_limits<float>::infinity());
  std::fill(l, l + nq, 0.0f);
  std::fill(out + i0 * s.valueDim, out + (i0 + nq) * s.valueDim, 0.0f);
  int64_t end = keyEnd(s, config, i0, nq);
  for (int64_t j0 = 0; j0 < end; j0 += kKeyBlock) {
    Tile t{i0, nq, j0, std::min(kKeyBlock, end - j0)};
    tileScores(head, s, config, t, scores, factors);
    for (int64_t i = 0; i < nq; ++i) {
      float *row = scores + i * kKeyBlock;
      const float *f = factors + i * kKeyBlock;
      float max = m[i];
#pragma omp simd reduction(max : max)
      for (int64_t j = 0; j < t.nk; ++j)
        max = std::max(max, row[j]);
      float alpha = std::exp(m[i] - max), sum = 0.0f;
#pragma omp simd reduction(+ : sum)
      for (int64_t j = 0; j < t.nk; ++j) {
        float p = std::exp(row[j] - max);
        sum += p;
        row[j] = p * f[j];
      }
      l[i] = l[i] * alpha + sum;
      m[i] = max;
      float *o = out + (i0 + i) * s.valueDim;
      if (alpha != 1.0f)
        for (int64_t c = 0; c < s.valueDim; ++c)
          o[c] *= alpha;
      for (int64_t j = 0; j < t.nk; ++j) {
        float w = row[j];
        if (w == 0.0f) // masked, underflowed or dropped
          continue;
        const float *vj = head.v + (j0 + j) * s.valueDim;
        for (int64_t c = 0; c < s.valueDim; ++c)
          o[c] += w * vj[c];
      }
    }
  }
  for (int64_t i = 0; i < nq; ++i) {
    float *o = out + (i0 + i) * s.valueDim, inverse = 1.0f / l[i];
    for (int64_t c = 0; c < s.valueDim; ++c)
      o[c] *= inverse;
    lse[i0 + i] = m[i] + std::log(l[i]);
  }
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
    Head head = headOf(q, k, v, shape, config, bh, /*withValues=*/false);
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

/// Adds one block of queries' contributions to dq, dk, dv, with
/// p = exp(s - lse), dp = f (dO_i . v_j), ds = scale p (dp - D_i) and
/// D_i = dO_i . O_i (= sum_j p dp, the softmax's row term).
static void attentionGradBlock(const Head &head, const HeadGrads &g,
                               const AttentionShape &s,
                               const AttentionConfig &config, int64_t i0,
                               int64_t nq) {
  float scores[kQueryBlock * kKeyBlock], factors[kQueryBlock * kKeyBlock];
  float rowDot[kQueryBlock];
  for (int64_t i = 0; i < nq; ++i)
    rowDot[i] = dot(g.grad + (i0 + i) * s.valueDim,
                    g.output + (i0 + i) * s.valueDim, s.valueDim);
  int64_t end = keyEnd(s, config, i0, nq);
  for (int64_t j0 = 0; j0 < end; j0 += kKeyBlock) {
    Tile t{i0, nq, j0, std::min(kKeyBlock, end - j0)};
    tileScores(head, s, config, t, scores, factors);
    for (int64_t i = 0; i < nq; ++i) {
      int64_t query = i0 + i;
      const float *dO = g.grad + query * s.valueDim;
      const float *qi = head.q + query * s.keyDim;
      float *dqi = g.dq + query * s.keyDim;
      float rowLse = g.lse[query], *probabilities = scores + i * kKeyBlock;
#pragma omp simd
      for (int64_t j = 0; j < t.nk; ++j)
        probabilities[j] = std::exp(probabilities[j] - rowLse);
      float gradDots[kKeyBlock]; // dO_i . v_j
      if (head.vT)
        rowTimesTransposed(dO, head.vT, s.valueDim, s.keys, j0, t.nk, 1.0f,
                           gradDots);
      else
        for (int64_t j = 0; j < t.nk; ++j)
          gradDots[j] = dot(dO, head.v + (j0 + j) * s.valueDim, s.valueDim);
      for (int64_t j = 0; j < t.nk; ++j) {
        float p = probabilities[j];
        if (p == 0.0f) // contributes nothing to any gradient
          continue;
        float f = factors[i * kKeyBlock + j];
        int64_t key = j0 + j;
        const float *kj = head.k + key * s.keyDim;
        float *dkj = g.dk + key * s.keyDim, *dvj = g.dv + key * s.valueDim;
        float dp = f * gradDots[j];
        float pf = p * f;
        for (int64_t c = 0; c < s.valueDim; ++c)
          dvj[c] += pf * dO[c];
        float ds = config.scale * p * (dp - rowDot[i]);
        for (int64_t c = 0; c < s.keyDim; ++c) {
          dqi[c] += ds * kj[c];
          dkj[c] += ds * qi[c];
        }
      }
    }
  }
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
    Head head = headOf(q, k, v, shape, config, bh, /*withValues=*/true);
    HeadGrads g{grad + bh * qRows * shape.valueDim,
                output + bh * qRows * shape.valueDim, lse + bh * qRows,
                dq + bh * qRows * shape.keyDim, dk + bh * kRows * shape.keyDim,
                dv + bh * kRows * shape.valueDim};
    std::fill(g.dq, g.dq + qRows * shape.keyDim, 0.0f);
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
