//===- Attention.cpp - attention and its gradient on small GEMMs ------===//
//
// Scores as the reference (runtime/kernels/reference/Attention.cpp):
//   s_ij = scale q_i.k_j + bias[b, h, i, j] + mask[b, j]
//          + (causal && j > i ? kMaskedScore : 0)
// Each (b, h) is one OpenMP work item and writes only its own rows of every
// output; the heads are split statically, each thread a contiguous range
// (dynamic scheduling measured up to 2x slower on 2 threads, most in the
// sequence-major layout, where neighbouring heads share rows). Its queries
// go in blocks of kQueryBlock rows; a block's scores against every key it
// can see are one [rows, keys] matrix in per-thread scratch (no [Sq, Sk]
// matrix of the whole head or batch exists), so each product of the
// forward and the backward is one small sgemm in the calling thread, and
// the softmax works on whole rows (vectorized expf). The sgemm is
// OpenBLAS's: its OpenMP build runs single-threaded inside a parallel
// region and is documented safe there, and its small-matrix kernels take
// 0.3-0.7 us for a 32x32x32 tile where oneDNN's sgemm takes 0.6-2.6 us
// (AMD EPYC, AVX-512). A block's dropout factors come from one call (the
// Philox stream is contiguous over a block's rows when it sees every key).
// bench/attention_kernels.cpp times both layouts; it also measured the
// earlier tiles of vector loops.
//
// With bf16_products (tg-mixed-precision) the products are bf16 tile
// products instead (Bf16Tile.cpp: vdpbf16ps, f32 sums): q, k and v are read
// as they are, and the f32 operands (probabilities, dO, score gradients)
// rounded as they are packed; without it bf16 q, k, v are widened per head
// and multiplied in f32.
//
// Both layouts of tg.attention run here: a head's rows of q, k, v, out and
// their gradients are `stride` floats apart, D in head-major [B, H, S, D]
// and H x D in sequence-major [B, S, H, D], and the sgemms take the
// stride as their leading dimension, so neither layout is copied.
//
// The gradient of a score bias is the scores' gradient before the scale,
// summed over the bias's broadcast dimensions: each head adds its rows into
// the bias gradient directly when no other head shares them, else into its
// thread's partial sums, added up in thread order after (deterministic for
// a given thread count).
//
// Causal blocks stop at the last key any of their queries sees; within the
// block, later keys' probabilities exp(s - max) underflow to exactly 0
// whenever the row sees some unmasked key. (A row whose every key is masked
// weighs its keys alike: in float, -1e9 + s rounds s away; the reference
// kernel does so too in the interpreter's f32 precision. Its lse rounds to
// -1e9 as well, so the backward takes such a row's weights again from its
// scores, not from exp(s - lse).)
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cpu/Bf16Tile.h"
#include "runtime/kernels/cpu/F32Tile.h"
#include "runtime/kernels/cpu/Kernels.h"
#include "runtime/kernels/cpu/ReusedBuffer.h"
#include "runtime/kernels/cpu/VectorMath.h"

#include <algorithm>
#include <cblas.h>
#include <cmath>
#include <omp.h>
#include <type_traits>
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
/// expf on the masked scores themselves. A NaN score (from q, k or a bias)
/// stays NaN, as in the reference, so that it reaches the loss: every
/// comparison with it is false.
inline void expOrZero(float *row, int64_t n, float shift) {
  constexpr float kFloor = -87.0f;
#pragma omp simd
  for (int64_t j = 0; j < n; ++j)
    row[j] = std::max(row[j] - shift, kFloor);
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) {
    float e = expf(row[j]);
    row[j] = row[j] <= kFloor ? 0.0f : e;
  }
}

/// A head's rows in one tensor: row i at base + i * stride.
struct HeadRows {
  int64_t base, stride;
};

/// Where head bh's `positions` rows of `width` floats lie in a [B, H, S, W]
/// tensor, or in a [B, S, H, W] one when sequence-major.
HeadRows rowsOf(const AttentionShape &s, int64_t bh, int64_t positions,
                int64_t width) {
  int64_t b = bh / s.heads, h = bh % s.heads;
  return s.sequenceMajor
             ? HeadRows{(b * positions * s.heads + h) * width, s.heads * width}
             : HeadRows{bh * positions * width, width};
}

/// One (b, h): its rows of q, k, v (row strides qs, ks, vs), its mask row
/// and its [Sq, Sk] score bias (each or null). T is what the products
/// multiply: f32 (f32 inputs, or bf16 ones widened), or bf16
/// (bf16_products).
template <typename T>
struct Head {
  const T *q, *k, *v;
  const float *mask, *bias;
  int64_t qs, ks, vs;
  int64_t b, h;
};

/// A row-major operand of a tile product: its first element, its row
/// stride, and whether the product reads it transposed.
template <typename E>
struct Operand {
  const E *data;
  int64_t stride;
  bool transposed = false;
};

template <typename E>
TileOperand<E> tileOperand(Operand<E> x) {
  return x.transposed ? TileOperand<E>{x.data, 1, x.stride}
                      : TileOperand<E>{x.data, x.stride, 1};
}

/// out [m, n] (row stride ldOut) = alpha op(a) op(b) + beta out, in the
/// calling thread: for f32 products f32TileProduct on AVX2 CPUs without
/// AVX-512, else OpenBLAS's sgemm (it runs single-threaded inside an OpenMP
/// parallel region); bf16TileProduct for bf16 ones (T = Bf16), which rounds
/// f32 operands to bf16 as it packs them.
template <typename T, typename A, typename B>
void product(Operand<A> a, Operand<B> b, float *out, int64_t ldOut, int64_t m,
             int64_t n, int64_t k, float alpha, float beta) {
  if constexpr (std::is_same_v<T, Bf16>) {
    bf16TileProduct(tileOperand(a), tileOperand(b), out, ldOut, m, n, k, alpha,
                    beta);
  } else if constexpr (kF32TilesBeatBlas) {
    static_assert(std::is_same_v<A, float> && std::is_same_v<B, float>);
    f32TileProduct(tileOperand(a), tileOperand(b), out, ldOut, m, n, k, alpha,
                   beta);
  } else {
    static_assert(std::is_same_v<A, float> && std::is_same_v<B, float>);
    cblas_sgemm(CblasRowMajor, a.transposed ? CblasTrans : CblasNoTrans,
                b.transposed ? CblasTrans : CblasNoTrans, static_cast<int>(m),
                static_cast<int>(n), static_cast<int>(k), alpha, a.data,
                static_cast<int>(a.stride), b.data, static_cast<int>(b.stride),
                beta, out, static_cast<int>(ldOut));
  }
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

/// A head's `count` rows of `width` values of q, k or v as its products
/// read them: the input itself, rows `stride` apart (f32 inputs, or bf16
/// ones with bf16 products), or bf16 inputs widened into this thread's
/// scratch for `Role`, contiguous (the products of widened bf16 values are
/// exact in f32, so the f32 products compute what the interpreter does on
/// the rounded values).
template <typename T, int Role>
Operand<T> headRows(const T *x, HeadRows rows, int64_t, int64_t) {
  return {x + rows.base, rows.stride};
}
template <typename T, int Role>
std::enable_if_t<std::is_same_v<T, float>, Operand<float>>
headRows(const Bf16 *x, HeadRows rows, int64_t count, int64_t width) {
  thread_local std::vector<float> widened;
  widened.resize(count * width);
  for (int64_t i = 0; i < count; ++i)
    for (int64_t c = 0; c < width; ++c)
      widened[i * width + c] =
          runtime::widen(x[rows.base + i * rows.stride + c]);
  return {widened.data(), width};
}

/// Where head bh's [Sq, Sk] rows of the score bias (and of its gradient)
/// start.
static int64_t biasOffset(const AttentionShape &s,
                          const AttentionConfig &config, int64_t bh) {
  return bh / s.heads * config.biasBatchStride +
         bh % s.heads * config.biasHeadStride;
}

/// Head `bh` of the whole q, k, v (stored as S), with products in T.
template <typename T, typename S>
static Head<T> headOf(const S *q, const S *k, const S *v,
                      const AttentionShape &s, const AttentionConfig &config,
                      int64_t bh) {
  Operand<T> hq = headRows<T, 0>(q, rowsOf(s, bh, s.queries, s.keyDim),
                                 s.queries, s.keyDim),
             hk = headRows<T, 1>(k, rowsOf(s, bh, s.keys, s.keyDim), s.keys,
                                 s.keyDim),
             hv = headRows<T, 2>(v, rowsOf(s, bh, s.keys, s.valueDim), s.keys,
                                 s.valueDim);
  return {hq.data,   hk.data,   hv.data,
          config.mask ? config.mask + (bh / s.heads) * s.keys : nullptr,
          config.bias ? config.bias + biasOffset(s, config, bh) : nullptr,
          hq.stride, hk.stride, hv.stride,
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
template <typename T>
static void blockScores(const Head<T> &head, const AttentionShape &s,
                        const AttentionConfig &config, int64_t i0, int64_t nq,
                        int64_t nk, float *scores, float *factors) {
  product<T>(Operand<T>{head.q + i0 * head.qs, head.qs},
             Operand<T>{head.k, head.ks, true}, scores, nk, nq, nk, s.keyDim,
             config.scale, 0.0f);
  for (int64_t i = 0; i < nq; ++i) {
    int64_t query = i0 + i;
    float *row = scores + i * nk;
    if (head.bias) {
      const float *bias = head.bias + query * s.keys;
#pragma omp simd
      for (int64_t j = 0; j < nk; ++j)
        row[j] += bias[j];
    }
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

/// `count` rows of `width` f32 values (contiguous) rounded into rows
/// `rows.stride` apart from `out + rows.base`.
static void roundRows(const float *in, Bf16 *out, HeadRows rows, int64_t count,
                      int64_t width) {
  for (int64_t i = 0; i < count; ++i) {
    Bf16 *row = out + rows.base + i * rows.stride;
#pragma omp simd
    for (int64_t c = 0; c < width; ++c)
      row[c] = runtime::roundToBf16(in[i * width + c]);
  }
}

/// `count` rows of `width` floats `rows.stride` apart from `in + rows.base`,
/// copied into contiguous rows at `out`; and back.
static void gatherRows(const float *in, HeadRows rows, int64_t count,
                       int64_t width, float *out) {
  for (int64_t i = 0; i < count; ++i)
    std::copy_n(in + rows.base + i * rows.stride, width, out + i * width);
}
static void scatterRows(const float *in, float *out, HeadRows rows,
                        int64_t count, int64_t width) {
  for (int64_t i = 0; i < count; ++i)
    std::copy_n(in + i * width, width, out + rows.base + i * rows.stride);
}

/// One block of queries: p = exp(s - max) over whole rows, the output rows
/// sum_j p f v_j / l with l the undropped sum, lse = max + log l. `out` and
/// `lse` are the head's rows; a bf16 `out` (O, tg-fold-bf16-roundings)
/// gets the f32 rows, computed in this thread's scratch, rounded once.
template <typename T, typename O>
static void attentionBlock(const Head<T> &head, const AttentionShape &s,
                           const AttentionConfig &config, int64_t i0,
                           int64_t nq, O *out, int64_t outStride, float *lse,
                           int64_t lseStride) {
  const int64_t nk = keyEnd(s, config, i0, nq);
  BlockScratch &scratch = blockScratch(kQueryBlock * s.keys);
  float *scores = scratch.scores.data(), *factors = scratch.factors.data();
  blockScores(head, s, config, i0, nq, nk, scores, factors);
  float inverse[kQueryBlock];
  for (int64_t i = 0; i < nq; ++i) {
    float *row = scores + i * nk;
    const float *f = factors + i * s.keys;
    float max = maxOf(row, nk);
    expOrZero(row, nk, max);
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < nk; ++j) {
      sum += row[j];
      row[j] *= f[j];
    }
    inverse[i] = 1.0f / sum;
    lse[(i0 + i) * lseStride] = max + std::log(sum);
  }
  float *o;
  int64_t ldo;
  if constexpr (std::is_same_v<O, float>) {
    o = out + i0 * outStride;
    ldo = outStride;
  } else {
    struct UnroundedBlockOutput;
    o = reusedScratch<UnroundedBlockOutput, float>(nq * s.valueDim);
    ldo = s.valueDim;
  }
  product<T>(Operand<float>{scores, nk}, Operand<T>{head.v, head.vs}, o, ldo,
             nq, s.valueDim, nk, 1.0f, 0.0f);
  for (int64_t i = 0; i < nq; ++i)
    for (int64_t c = 0; c < s.valueDim; ++c)
      o[i * ldo + c] *= inverse[i];
  if constexpr (!std::is_same_v<O, float>)
    roundRows(o, out, HeadRows{i0 * outStride, outStride}, nq, s.valueDim);
}

/// T: the products' type; S: the inputs'; O: the output's.
template <typename T, typename S, typename O>
static void attentionOf(const S *q, const S *k, const S *v, O *out,
                        float *lse, const AttentionShape &shape,
                        const AttentionConfig &config) {
  int64_t heads = shape.batch * shape.heads;
  int64_t work = heads * shape.queries * shape.keys *
                 (shape.keyDim + shape.valueDim);
#pragma omp parallel for schedule(static) if (heads > 1 && work >= kParallelWork)
  for (int64_t bh = 0; bh < heads; ++bh) {
    Head<T> head = headOf<T>(q, k, v, shape, config, bh);
    HeadRows outRows = rowsOf(shape, bh, shape.queries, shape.valueDim),
             lseRows = rowsOf(shape, bh, shape.queries, 1);
    for (int64_t i0 = 0; i0 < shape.queries; i0 += kQueryBlock)
      attentionBlock(head, shape, config, i0,
                     std::min(kQueryBlock, shape.queries - i0),
                     out + outRows.base, outRows.stride, lse + lseRows.base,
                     lseRows.stride);
  }
}

namespace {
/// One head's gradient rows and the saved forward values it reads: grad
/// and output rows `os` apart, lse `lseStride`, dq, dk, dv `qs`, `ks`, `vs`
/// (the layout's strides, whatever head.q's are after widening); the
/// [Sq, Sk] rows its score bias's gradient adds into, or null.
struct HeadGrads {
  const float *grad, *output, *lse;
  float *dq, *dk, *dv;
  int64_t os, lseStride, qs, ks, vs;
  float *biasGrad;
};
} // namespace

/// One block of queries' gradients: with p = exp(s - lse),
/// dp = f (dO_i . v_j), ds = scale p (dp - D_i) and D_i = dO_i . O_i
/// (= sum_j p dp, the softmax's row term),
///   dv += (p f)^T dO,  dq = ds k,  dk += ds^T q,  dbias += p (dp - D_i).
template <typename T>
static void attentionGradBlock(const Head<T> &head, const HeadGrads &g,
                               const AttentionShape &s,
                               const AttentionConfig &config, int64_t i0,
                               int64_t nq) {
  const int64_t nk = keyEnd(s, config, i0, nq);
  BlockScratch &scratch = blockScratch(kQueryBlock * s.keys);
  float *probabilities = scratch.scores.data(), *factors = scratch.factors.data(),
        *grads = scratch.grads.data();
  blockScores(head, s, config, i0, nq, nk, probabilities, factors);
  // dO_i . v_j for the block.
  product<T>(Operand<float>{g.grad + i0 * g.os, g.os},
             Operand<T>{head.v, head.vs, true}, grads, nk, nq, nk, s.valueDim,
             1.0f, 0.0f);
  for (int64_t i = 0; i < nq; ++i) {
    int64_t query = i0 + i;
    const float rowLse = g.lse[query * g.lseStride], scale = config.scale;
    float *p = probabilities + i * nk, *f = factors + i * s.keys,
          *ds = grads + i * nk;
    if (everyKeyMasked(rowLse)) {
      // Every key of the row is masked: in f32 its lse, -1e9 + log(sum),
      // rounds to -1e9, and exp(s - lse) would weigh each key 1. The
      // forward's weights exp(s - max) / sum instead.
      const float max = maxOf(p, nk);
      expOrZero(p, nk, max);
      float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
      for (int64_t j = 0; j < nk; ++j)
        sum += p[j];
      const float inverse = 1.0f / sum;
#pragma omp simd
      for (int64_t j = 0; j < nk; ++j)
        p[j] *= inverse;
    } else {
      expOrZero(p, nk, rowLse);
    }
    // D_i: dO_i . O_i in f32; with bf16 products, sum_j p dp from the
    // rounded dO the products saw (dO . O would differ from it by the
    // roundings, and p (dp - D) cancels).
    float rowDot = 0.0f;
    if constexpr (std::is_same_v<T, Bf16>) {
#pragma omp simd reduction(+ : rowDot)
      for (int64_t j = 0; j < nk; ++j)
        rowDot += p[j] * f[j] * ds[j];
    } else {
      const float *dO = g.grad + query * g.os, *o = g.output + query * g.os;
#pragma omp simd reduction(+ : rowDot)
      for (int64_t c = 0; c < s.valueDim; ++c)
        rowDot += dO[c] * o[c];
    }
    if (g.biasGrad) {
      float *biasGrad = g.biasGrad + query * s.keys;
#pragma omp simd
      for (int64_t j = 0; j < nk; ++j) {
        const float logitGrad = p[j] * (f[j] * ds[j] - rowDot);
        biasGrad[j] += logitGrad;
        ds[j] = scale * logitGrad;
      }
    } else {
#pragma omp simd
      for (int64_t j = 0; j < nk; ++j)
        ds[j] = scale * p[j] * (f[j] * ds[j] - rowDot);
    }
#pragma omp simd
    for (int64_t j = 0; j < nk; ++j)
      f[j] *= p[j]; // p f, for dv
  }
  product<T>(Operand<float>{factors, s.keys, true},
             Operand<float>{g.grad + i0 * g.os, g.os}, g.dv, g.vs, nk,
             s.valueDim, nq, 1.0f, 1.0f);
  product<T>(Operand<float>{grads, nk}, Operand<T>{head.k, head.ks},
             g.dq + i0 * g.qs, g.qs, nq, s.keyDim, nk, 1.0f, 0.0f);
  product<T>(Operand<float>{grads, nk, true},
             Operand<T>{head.q + i0 * head.qs, head.qs}, g.dk, g.ks, nk,
             s.keyDim, nq, 1.0f, 1.0f);
}

/// One head's gradients into g's rows: zeros for the keys no block sees
/// (causal), then block after block of queries.
template <typename T>
static void headGradients(const Head<T> &head, const HeadGrads &g,
                          const AttentionShape &shape,
                          const AttentionConfig &config) {
  for (int64_t j = 0; j < shape.keys; ++j) {
    std::fill_n(g.dk + j * g.ks, shape.keyDim, 0.0f);
    std::fill_n(g.dv + j * g.vs, shape.valueDim, 0.0f);
  }
  for (int64_t i0 = 0; i0 < shape.queries; i0 += kQueryBlock)
    attentionGradBlock(head, g, shape, config, i0,
                       std::min(kQueryBlock, shape.queries - i0));
}

/// Whether a head's rows lie a multiple of 1 KiB apart: sequence-major with
/// H x D a multiple of 256 floats (the 3-layer bench row's 4 x 64, the
/// 6-layer rows' 8 x 64). Rows that far apart fall into a few of L1's 64
/// sets (a 2 KiB stride: 8 of them for 64-float rows), so the rows of the
/// backward's five operands evict each other while the tiles read them
/// again and again: bench/attention_kernels.cpp had the 6L backward at 1.45x
/// and the 3L one at 1.25x their head-major time. 512-byte strides (the 2L
/// row's 4 x 32) spread over enough sets, and copying them cost 5%.
static bool rowsShareCacheSets(const AttentionShape &shape) {
  return shape.sequenceMajor && shape.heads * shape.keyDim % 256 == 0 &&
         shape.heads * shape.valueDim % 256 == 0;
}

/// headGradients of a head whose rows share cache sets, on contiguous
/// copies of its rows: q, k, v, dO and O copied in, dq, dk and dv copied
/// out, once per head (the copies are a few percent of the head's products;
/// the 6L backward went from 13.9 to 12.0 ms and the 3L one from 5.9 to 5.1
/// on AMD EPYC Zen 3, medians of 8 interleaved runs).
static void headGradientsGathered(const Head<float> &head, const float *grad,
                                  const float *output, const float *lse,
                                  int64_t lseStride, float *dq, float *dk,
                                  float *dv, float *biasGrad, HeadRows o,
                                  HeadRows dqRows,
                                  HeadRows dkRows, HeadRows dvRows,
                                  const AttentionShape &shape,
                                  const AttentionConfig &config) {
  const int64_t qn = shape.queries, kn = shape.keys, kd = shape.keyDim,
                vd = shape.valueDim;
  struct GatheredHead;
  float *q = reusedScratch<GatheredHead, float>(2 * (qn + kn) * kd +
                                                2 * kn * vd + 2 * qn * vd);
  float *k = q + qn * kd, *v = k + kn * kd, *dO = v + kn * vd,
        *out = dO + qn * vd, *hq = out + qn * vd, *hk = hq + qn * kd,
        *hv = hk + kn * kd;
  gatherRows(head.q, HeadRows{0, head.qs}, qn, kd, q);
  gatherRows(head.k, HeadRows{0, head.ks}, kn, kd, k);
  gatherRows(head.v, HeadRows{0, head.vs}, kn, vd, v);
  gatherRows(grad, o, qn, vd, dO);
  gatherRows(output, o, qn, vd, out);
  Head<float> gathered{q,  k,  v,      head.mask, head.bias,
                       kd, kd, vd,     head.b,    head.h};
  headGradients(gathered,
                HeadGrads{dO, out, lse, hq, hk, hv, vd, lseStride, kd, kd, vd,
                          biasGrad},
                shape, config);
  scatterRows(hq, dq, dqRows, qn, kd);
  scatterRows(hk, dk, dkRows, kn, kd);
  scatterRows(hv, dv, dvRows, kn, vd);
}

namespace {
/// Where each head adds its score bias's gradient: into config.biasGrad
/// itself when no two heads share bias rows, else into the calling thread's
/// partial sums, which finish() adds into it in thread order.
class BiasGradSums {
public:
  BiasGradSums(const AttentionShape &s, const AttentionConfig &config)
      : shape(s), config(config) {
    if (!config.biasGrad)
      return;
    size = s.queries * s.keys * (config.biasHeadStride ? s.heads : 1) *
           (config.biasBatchStride ? s.batch : 1);
    std::fill_n(config.biasGrad, size, 0.0f);
    if ((!config.biasBatchStride && s.batch > 1) ||
        (!config.biasHeadStride && s.heads > 1))
      partials.assign(size * omp_get_max_threads(), 0.0f);
  }

  /// Head bh's [Sq, Sk] rows for the calling thread, or null.
  float *of(int64_t bh) {
    if (!config.biasGrad)
      return nullptr;
    float *base = partials.empty()
                      ? config.biasGrad
                      : partials.data() + omp_get_thread_num() * size;
    return base + biasOffset(shape, config, bh);
  }

  void finish() {
    for (size_t first = 0; first < partials.size(); first += size)
#pragma omp simd
      for (int64_t i = 0; i < size; ++i)
        config.biasGrad[i] += partials[first + i];
  }

private:
  const AttentionShape &shape;
  const AttentionConfig &config;
  int64_t size = 0;
  std::vector<float> partials;
};
} // namespace

/// T: the products' type; S: the inputs'; G: the gradients' (f32, or bf16
/// when tg-fold-bf16-roundings gave tg.attention_grad bf16 results: each
/// head is computed in f32 in this thread's scratch and rounded once, the
/// values its f32 results would have had, rounded).
template <typename T, typename S, typename G>
static void attentionGradOf(const float *grad, const S *q, const S *k,
                            const S *v, const float *output, const float *lse,
                            G *dq, G *dk, G *dv, const AttentionShape &shape,
                            const AttentionConfig &config) {
  int64_t heads = shape.batch * shape.heads;
  int64_t work = heads * shape.queries * shape.keys *
                 (shape.keyDim + shape.valueDim);
  int64_t qRows = shape.queries, kRows = shape.keys;
  BiasGradSums biasGrads(shape, config);
#pragma omp parallel for schedule(static) if (heads > 1 && work >= kParallelWork)
  for (int64_t bh = 0; bh < heads; ++bh) {
    Head<T> head = headOf<T>(q, k, v, shape, config, bh);
    float *biasGrad = biasGrads.of(bh);
    HeadRows o = rowsOf(shape, bh, qRows, shape.valueDim),
             l = rowsOf(shape, bh, qRows, 1),
             dqRows = rowsOf(shape, bh, qRows, shape.keyDim),
             dkRows = rowsOf(shape, bh, kRows, shape.keyDim),
             dvRows = rowsOf(shape, bh, kRows, shape.valueDim);
    // Null for a bf16 forward output, which bf16 products never read.
    const float *savedOutput = output ? output + o.base : nullptr;
    if constexpr (std::is_same_v<T, float> && std::is_same_v<S, float> &&
                  std::is_same_v<G, float>) {
      if (rowsShareCacheSets(shape)) {
        headGradientsGathered(head, grad, output, lse + l.base, l.stride, dq,
                              dk, dv, biasGrad, o, dqRows, dkRows, dvRows,
                              shape, config);
        continue;
      }
    }
    if constexpr (std::is_same_v<G, float>) {
      headGradients(head,
                    HeadGrads{grad + o.base, savedOutput, lse + l.base,
                              dq + dqRows.base, dk + dkRows.base,
                              dv + dvRows.base, o.stride, l.stride,
                              dqRows.stride, dkRows.stride, dvRows.stride,
                              biasGrad},
                    shape, config);
    } else {
      struct UnroundedHeadGrads;
      float *f32 = reusedScratch<UnroundedHeadGrads, float>(
          qRows * shape.keyDim + kRows * (shape.keyDim + shape.valueDim));
      float *hq = f32, *hk = hq + qRows * shape.keyDim,
            *hv = hk + kRows * shape.keyDim;
      headGradients(head,
                    HeadGrads{grad + o.base, savedOutput, lse + l.base, hq,
                              hk, hv, o.stride, l.stride, shape.keyDim,
                              shape.keyDim, shape.valueDim, biasGrad},
                    shape, config);
      roundRows(hq, dq, dqRows, qRows, shape.keyDim);
      roundRows(hk, dk, dkRows, kRows, shape.keyDim);
      roundRows(hv, dv, dvRows, kRows, shape.valueDim);
    }
  }
  biasGrads.finish();
}

void attention(const float *q, const float *k, const float *v, float *out,
               float *lse, const AttentionShape &shape,
               const AttentionConfig &config) {
  attentionOf<float>(q, k, v, out, lse, shape, config);
}

void attention(const Bf16 *q, const Bf16 *k, const Bf16 *v, float *out,
               float *lse, const AttentionShape &shape,
               const AttentionConfig &config) {
  if (config.bf16Products)
    attentionOf<Bf16>(q, k, v, out, lse, shape, config);
  else
    attentionOf<float>(q, k, v, out, lse, shape, config);
}

void attention(const Bf16 *q, const Bf16 *k, const Bf16 *v, Bf16 *out,
               float *lse, const AttentionShape &shape,
               const AttentionConfig &config) {
  attentionOf<Bf16>(q, k, v, out, lse, shape, config);
}

void attentionGrad(const float *grad, const float *q, const float *k,
                   const float *v, const float *output, const float *lse,
                   float *dq, float *dk, float *dv, const AttentionShape &shape,
                   const AttentionConfig &config) {
  attentionGradOf<float>(grad, q, k, v, output, lse, dq, dk, dv, shape, config);
}

/// bf16 q, k, v: bf16 products (bf16_products), or f32 ones of the widened
/// values; G: the gradients' type.
template <typename G>
static void bf16AttentionGradOf(const float *grad, const Bf16 *q,
                                const Bf16 *k, const Bf16 *v,
                                const float *output, const float *lse, G *dq,
                                G *dk, G *dv, const AttentionShape &shape,
                                const AttentionConfig &config) {
  if (config.bf16Products)
    attentionGradOf<Bf16>(grad, q, k, v, output, lse, dq, dk, dv, shape, config);
  else
    attentionGradOf<float>(grad, q, k, v, output, lse, dq, dk, dv, shape,
                           config);
}

void attentionGrad(const float *grad, const Bf16 *q, const Bf16 *k,
                   const Bf16 *v, const float *output, const float *lse,
                   float *dq, float *dk, float *dv, const AttentionShape &shape,
                   const AttentionConfig &config) {
  bf16AttentionGradOf(grad, q, k, v, output, lse, dq, dk, dv, shape, config);
}

void attentionGrad(const float *grad, const Bf16 *q, const Bf16 *k,
                   const Bf16 *v, const float *output, const float *lse,
                   Bf16 *dq, Bf16 *dk, Bf16 *dv, const AttentionShape &shape,
                   const AttentionConfig &config) {
  bf16AttentionGradOf(grad, q, k, v, output, lse, dq, dk, dv, shape, config);
}

/// A bf16 forward output comes only with bf16 products, whose backward
/// never reads it (its row term is sum_j p dp from the rounded dO).
template <typename G>
static void roundedOutputGradOf(const float *grad, const Bf16 *q,
                                const Bf16 *k, const Bf16 *v, const float *lse,
                                G *dq, G *dk, G *dv,
                                const AttentionShape &shape,
                                const AttentionConfig &config) {
  attentionGradOf<Bf16>(grad, q, k, v, static_cast<const float *>(nullptr),
                        lse, dq, dk, dv, shape, config);
}

void attentionGrad(const float *grad, const Bf16 *q, const Bf16 *k,
                   const Bf16 *v, const Bf16 *, const float *lse, float *dq,
                   float *dk, float *dv, const AttentionShape &shape,
                   const AttentionConfig &config) {
  roundedOutputGradOf(grad, q, k, v, lse, dq, dk, dv, shape, config);
}

void attentionGrad(const float *grad, const Bf16 *q, const Bf16 *k,
                   const Bf16 *v, const Bf16 *, const float *lse, Bf16 *dq,
                   Bf16 *dk, Bf16 *dv, const AttentionShape &shape,
                   const AttentionConfig &config) {
  roundedOutputGradOf(grad, q, k, v, lse, dq, dk, dv, shape, config);
}

} // namespace tgc::cpu
