//===- FusedAttention.cu - attention in one kernel each way (bf16) --===//
//
// tg.attention and tg.attention_grad with bf16_products, flash-attention
// style: no [Sq, Sk] scores in device memory, one launch for the forward
// and two for the backward, every product a 16x16x16 bf16 tensor-core tile
// (WMMA) with f32 accumulation. q, k, v (and the output and gradients) are
// read and written in their own layout, head-major or sequence-major,
// through HeadLayout: no per-head GEMMs, no pointer tables.
//
// A block owns 64 rows (4 warps of 16) of one head, and the other side's
// rows stream past it in tiles of 64 through shared memory. A warp's
// products land in its own f32 buffer in shared memory, where its lanes
// (two a row, 32 columns each) apply the masks, the softmax and the dropout
// factors, and leave the bf16 operand of the next product beside it.
//
// Numerics: those of AttentionBf16.cu and the CPU (see there), roundings
// included:
//   forward:  out_i = sum_j r(e_ij f_ij) v_j / l_i, e = exp(s - m_i) with
//             m_i the row's maximum (a first pass over the key tiles finds
//             it; an online softmax would round e before its last
//             rescaling), l_i = sum_j e_ij (undropped), lse_i = m_i + log l_i;
//             where the keys fit one tile (64) the second pass reuses the
//             first's products;
//   backward: D_i = sum_j p f dp from the rounded dO (as the CPU: not
//   dO . O, which the roundings would make differ), then
//   ds = r(scale p (f dp - D_i)), dq = ds k (one kernel, a block per query
//   tile: a pass for D_i and one for dq, a single pass where the keys fit
//   a tile), dv = r(p f)^T r(dO), dk = ds^T q (one kernel, a block per key
//   tile, reading D). Each gradient row is summed by one warp in a fixed
//   order: no atomics, the same bits every run.
// Dropout factors come from the same Philox stream as everywhere
// (Dropout::factors4 where four adjacent keys start a block, else factor).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cuda/AttentionScores.cuh"
#include "runtime/kernels/cuda/Bf16Quads.cuh"
#include "runtime/kernels/cuda/FusedAttention.h"

#include <algorithm>
#include <cstdio>
#include <cuda_bf16.h>
#include <mma.h>

namespace tgc::cuda {
namespace {

namespace wmma = nvcuda::wmma;

constexpr int kWarpRows = 16; // rows of the block's tile a warp owns
constexpr int kWarps = 4;
constexpr int kTile = static_cast<int>(kFusedTileRows);
static_assert(kTile == kWarpRows * kWarps, "a block's rows are its warps'");
constexpr int kBlockThreads = kWarps * 32;
/// Two lanes take a row of a warp's buffers, in runs of 4 columns (one
/// 16-byte load, one Philox block): lane half h the runs 8 j + 4 h. Against
/// buffer rows 8 floats (32 bytes) past a multiple of 128 bytes, the 8
/// lanes of each quarter warp's 16-byte loads meet 8 different bank groups.
constexpr int kLaneRuns = kTile / 8;
__device__ inline int laneColumn(int run, int half) {
  return 8 * run + 4 * half;
}

using Bits = uint16_t; // a bf16 in shared memory

using FragmentA =
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major>;
using FragmentBCols =
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major>;
using FragmentBRows =
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major>;
using Accumulator = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;

__device__ inline const __nv_bfloat16 *asBf16(const Bits *p) {
  return reinterpret_cast<const __nv_bfloat16 *>(p);
}

/// Shared memory of head width D. Row strides are padded (bank conflicts),
/// and every piece starts at a multiple of 32 bytes, as WMMA's loads and
/// stores need.
template <int D> struct Layout {
  /// bf16 tiles of kTile rows of one head: q, k, v or the rounded dO.
  static constexpr int tileStride = D + 8;
  static constexpr size_t tileBytes = size_t(kTile) * tileStride * sizeof(Bits);
  /// A warp's f32 buffer: 16 rows of scores (kTile columns) or of its
  /// accumulated output (D columns).
  static constexpr int f32Stride = (D > kTile ? D : kTile) + 8;
  static constexpr size_t f32Bytes =
      size_t(kWarpRows) * f32Stride * sizeof(float);
  /// A warp's bf16 operand: 16 rows of kTile probabilities or gradients.
  static constexpr int bf16Stride = kTile + 8;
  static constexpr size_t bf16Bytes =
      size_t(kWarpRows) * bf16Stride * sizeof(Bits);
  static_assert(tileBytes % 32 == 0 && f32Bytes % 32 == 0 &&
                bf16Bytes % 32 == 0);
};

/// What every fused kernel reads: the operands and where each head's rows
/// are (the output's layout is dO's too).
struct FusedArgs {
  const Bf16 *q, *k, *v;
  HeadLayout qRows, kRows, vRows, outRows;
  AttentionShape s;
  AttentionConfig config;
  /// The head width, keys' and values' (fusedAttentionMisfit): the tiles
  /// are D wide, zeros past it.
  int width;
};

/// Rows [first, first + kTile) of head bh's [rows, width] bf16 matrix into
/// a tile D wide, zeros past `rows` and past `width` (a multiple of 8, at
/// most D): 16 bytes a thread at a time.
template <int D>
__device__ void loadTile(Bits *tile, const Bf16 *x, HeadLayout layout,
                         int64_t bh, int64_t first, int64_t rows, int width) {
  constexpr int pieces = D / 8;
  const Bf16 *head = x + layout.offset(bh);
  for (int i = threadIdx.x; i < kTile * pieces; i += kBlockThreads) {
    const int r = i / pieces, c = i % pieces * 8;
    uint4 value = make_uint4(0, 0, 0, 0);
    if (first + r < rows && c < width)
      value = *reinterpret_cast<const uint4 *>(
          head + (first + r) * layout.rowStride + c);
    *reinterpret_cast<uint4 *>(tile + r * Layout<D>::tileStride + c) = value;
  }
}

/// As loadTile from an f32 matrix (the output gradient), each value rounded
/// to bf16 (the CPU rounds dO once for its products).
template <int D>
__device__ void loadRoundedTile(Bits *tile, const float *x, HeadLayout layout,
                                int64_t bh, int64_t first, int64_t rows,
                                int width) {
  constexpr int pieces = D / 4;
  const float *head = x + layout.offset(bh);
  for (int i = threadIdx.x; i < kTile * pieces; i += kBlockThreads) {
    const int r = i / pieces, c = i % pieces * 4;
    uint2 value = make_uint2(0, 0);
    if (first + r < rows && c < width)
      value = roundedQuad(*reinterpret_cast<const float4 *>(
          head + (first + r) * layout.rowStride + c));
    *reinterpret_cast<uint2 *>(tile + r * Layout<D>::tileStride + c) = value;
  }
}

/// out [16, kTile] = a [16, D] b^T for a warp, b a [kTile, D] tile: both
/// row-major bf16 in shared memory, `out` f32.
template <int D>
__device__ void productWithTransposed(const Bits *a, const Bits *b,
                                      float *out) {
  constexpr int stride = Layout<D>::tileStride;
#pragma unroll
  for (int n = 0; n < kTile / 16; ++n) {
    Accumulator c;
    wmma::fill_fragment(c, 0.0f);
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      FragmentA fa;
      FragmentBCols fb;
      wmma::load_matrix_sync(fa, asBf16(a + kk * 16), stride);
      // b^T (k, n) = b[n][k]: b's rows read as columns.
      wmma::load_matrix_sync(fb, asBf16(b + n * 16 * stride + kk * 16), stride);
      wmma::mma_sync(c, fa, fb, c);
    }
    wmma::store_matrix_sync(out + n * 16, c, Layout<D>::f32Stride,
                            wmma::mem_row_major);
  }
}

/// acc [16, D] += a [16, kTile] b for a warp: a its bf16 buffer, b a
/// [kTile, D] tile.
template <int D>
__device__ void accumulateProduct(Accumulator (&acc)[D / 16], const Bits *a,
                                  const Bits *b) {
  constexpr int stride = Layout<D>::tileStride;
#pragma unroll
  for (int kk = 0; kk < kTile / 16; ++kk) {
    FragmentA fa;
    wmma::load_matrix_sync(fa, asBf16(a + kk * 16), Layout<D>::bf16Stride);
#pragma unroll
    for (int n = 0; n < D / 16; ++n) {
      FragmentBRows fb;
      wmma::load_matrix_sync(fb, asBf16(b + kk * 16 * stride + n * 16), stride);
      wmma::mma_sync(acc[n], fa, fb, acc[n]);
    }
  }
}

template <int D> __device__ void clear(Accumulator (&acc)[D / 16]) {
#pragma unroll
  for (int n = 0; n < D / 16; ++n)
    wmma::fill_fragment(acc[n], 0.0f);
}

/// A warp's accumulated [16, D] rows into its f32 buffer (row-major).
template <int D>
__device__ void storeRows(const Accumulator (&acc)[D / 16], float *buffer) {
#pragma unroll
  for (int n = 0; n < D / 16; ++n)
    wmma::store_matrix_sync(buffer + n * 16, acc[n], Layout<D>::f32Stride,
                            wmma::mem_row_major);
}

/// Multiplies the lane's half of row `row` of a warp's f32 buffer (D
/// columns) by `scale`.
template <int D>
__device__ void scaleRowHalf(float *buffer, int row, int half, float scale) {
  float *values = buffer + row * Layout<D>::f32Stride;
  for (int c = half * (D / 2); c < (half + 1) * (D / 2); ++c)
    values[c] *= scale;
}

/// Writes a warp's f32 buffer (the first `width` columns of its 16 rows) as
/// matrix rows first, first + 1, ... of head bh, those below `rows`, in the
/// result's type: the warp's lanes along each row, adjacent elements.
template <int D, typename T>
__device__ void writeRows(const float *buffer, int lane, int width, T *x,
                          HeadLayout layout, int64_t bh, int64_t first,
                          int64_t rows) {
  T *head = x + layout.offset(bh);
  for (int i = lane; i < kWarpRows * width; i += 32) {
    const int r = i / width, c = i % width;
    if (first + r < rows)
      head[(first + r) * layout.rowStride + c] =
          convertedTo<T>(buffer[r * Layout<D>::f32Stride + c]);
  }
}

/// The dropout factors of the `valid` keys from `key` on in row `query` of
/// head bh (0 for the others, up to 4): one Philox block where the four
/// start one, else one draw each.
__device__ inline void dropoutQuad(const AttentionShape &s,
                                   const AttentionConfig &config, int64_t bh,
                                   int64_t query, int64_t key, int valid,
                                   float f[4]) {
  const uint64_t index =
      static_cast<uint64_t>((bh * s.queries + query) * s.keys + key);
  if (valid == 4 && (index + config.dropout.indexOffset) % 4 == 0) {
    config.dropout.factors4(index, f);
    return;
  }
#pragma unroll
  for (int q = 0; q < 4; ++q)
    f[q] = q < valid ? config.dropout.factor(index + q) : 0.0f;
}

/// The masked scores of a lane's run of 4 keys from `key` on, from their
/// products at `column` of the row (one 16-byte load); -inf for those past
/// `valid`.
__device__ inline void maskedRun(const float *rowProducts, int column,
                                 int64_t key, int valid,
                                 const AttentionShape &s,
                                 const AttentionConfig &config, int64_t bh,
                                 int64_t query, float score[4]) {
  const float4 x = *reinterpret_cast<const float4 *>(rowProducts + column);
  const float product[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
  for (int q = 0; q < 4; ++q)
    score[q] = q < valid
                   ? maskedScore(product[q], s, config, bh, query, key + q)
                   : -INFINITY;
}

/// How many of the 4 keys from `key` on exist (0 on a padding row).
__device__ inline int validKeys(const AttentionShape &s, int64_t key,
                                bool rowExists) {
  if (!rowExists)
    return 0;
  const int64_t left = s.keys - key;
  return left <= 0 ? 0 : left >= 4 ? 4 : static_cast<int>(left);
}

//===--- Forward ----------------------------------------------------------===//

template <int D> constexpr size_t forwardBytes() {
  using L = Layout<D>;
  return 3 * L::tileBytes + kWarps * (L::f32Bytes + L::bf16Bytes);
}

/// Block (bh, query tile): out and lse of 64 queries of head bh. A pass
/// over the key tiles finds each row's maximum m, and a second one sums
/// e = exp(s - m) and r(e f) v: the CPU's roundings, not an online
/// softmax's (which would round e before the last rescaling). Where the
/// keys fit one tile the second pass reuses the first's products.
template <int D, typename Out>
__global__ void __launch_bounds__(kBlockThreads)
    fusedForwardKernel(FusedArgs a, Out *out, float *lse) {
  using L = Layout<D>;
  extern __shared__ __align__(128) unsigned char shared[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  Bits *queries = reinterpret_cast<Bits *>(shared),
       *keys = queries + kTile * L::tileStride,
       *values = keys + kTile * L::tileStride;
  unsigned char *warpArea = shared + 3 * L::tileBytes;
  float *products = reinterpret_cast<float *>(warpArea + warp * L::f32Bytes);
  Bits *kept = reinterpret_cast<Bits *>(warpArea + kWarps * L::f32Bytes +
                                        warp * L::bf16Bytes);

  const AttentionShape &s = a.s;
  const AttentionConfig &config = a.config;
  const int64_t bh = blockIdx.x, firstQuery = int64_t(blockIdx.y) * kTile;
  const int row = lane / 2, half = lane % 2;
  const int64_t query = firstQuery + warp * kWarpRows + row;
  const bool rowExists = query < s.queries;
  loadTile<D>(queries, a.q, a.qRows, bh, firstQuery, s.queries, a.width);

  // q k^T of a key tile into the warp's buffer (and its values beside).
  auto productsOf = [&](int64_t firstKey, bool withValues) {
    __syncthreads(); // every warp is done with the last tile
    loadTile<D>(keys, a.k, a.kRows, bh, firstKey, s.keys, a.width);
    if (withValues)
      loadTile<D>(values, a.v, a.vRows, bh, firstKey, s.keys, a.width);
    __syncthreads();
    productWithTransposed<D>(queries + warp * kWarpRows * L::tileStride, keys,
                             products);
    __syncwarp();
  };
  const float *rowProducts = products + row * L::f32Stride;

  const int64_t keyEnd = visibleKeyEnd(s, config, firstQuery);
  const bool oneTile = keyEnd <= kTile;
  float rowMax = -INFINITY;
  for (int64_t firstKey = 0; firstKey < keyEnd; firstKey += kTile) {
    productsOf(firstKey, oneTile);
    for (int run = 0; run < kLaneRuns; ++run) {
      const int column = laneColumn(run, half);
      const int64_t key = firstKey + column;
      float score[4];
      maskedRun(rowProducts, column, key, validKeys(s, key, rowExists), s,
                config, bh, query, score);
#pragma unroll
      for (int q = 0; q < 4; ++q)
        rowMax = fmaxf(rowMax, score[q]);
    }
  }
  // Every tile's first key exists: an existing row's maximum is finite.
  rowMax = fmaxf(rowMax, __shfl_xor_sync(0xffffffffu, rowMax, 1));

  Accumulator acc[D / 16];
  clear<D>(acc);
  float rowSum = 0.0f;
  Bits *rowKept = kept + row * L::bf16Stride;
  for (int64_t firstKey = 0; firstKey < keyEnd; firstKey += kTile) {
    if (!oneTile)
      productsOf(firstKey, true);
    for (int run = 0; run < kLaneRuns; ++run) {
      const int column = laneColumn(run, half);
      const int64_t key = firstKey + column;
      const int valid = validKeys(s, key, rowExists);
      float score[4], f[4], e[4];
      maskedRun(rowProducts, column, key, valid, s, config, bh, query, score);
      dropoutQuad(s, config, bh, query, key, valid, f);
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        e[q] = q < valid ? expf(score[q] - rowMax) : 0.0f;
        rowSum += e[q];
      }
      *reinterpret_cast<uint2 *>(rowKept + column) = roundedQuad(
          make_float4(e[0] * f[0], e[1] * f[1], e[2] * f[2], e[3] * f[3]));
    }
    __syncwarp();
    accumulateProduct<D>(acc, kept, values);
  }
  rowSum += __shfl_xor_sync(0xffffffffu, rowSum, 1);
  __syncwarp(); // every lane's products are read: the buffer takes the sums
  storeRows<D>(acc, products);
  __syncwarp();
  // out = the sums / l, as the CPU (times 1 / l).
  scaleRowHalf<D>(products, row, half, rowExists ? 1.0f / rowSum : 0.0f);
  __syncwarp();
  writeRows<D>(products, lane, a.width, out, a.outRows, bh,
               firstQuery + warp * kWarpRows, s.queries);
  if (rowExists && half == 0)
    lse[lseIndex(s, bh, query)] = rowMax + logf(rowSum);
}

//===--- Backward: D and dq -----------------------------------------------===//

/// The backward kernels' shared memory: four tiles (q, r(dO), k, v); per
/// warp two f32 buffers (q k^T and r(dO) v^T, or their transposes) and two
/// bf16 operands; a query tile's lse and D.
template <int D> struct BackwardShared {
  using L = Layout<D>;
  static constexpr size_t bytes =
      4 * L::tileBytes + kWarps * (2 * L::f32Bytes + 2 * L::bf16Bytes) +
      2 * kTile * sizeof(float);
  Bits *queries, *outGrads, *keys, *values;
  float *products, *gradProducts;
  Bits *kept, *scoreGrads;
  float *tileLse, *tileDots;

  __device__ BackwardShared(unsigned char *shared, int warp) {
    queries = reinterpret_cast<Bits *>(shared);
    outGrads = queries + kTile * L::tileStride;
    keys = outGrads + kTile * L::tileStride;
    values = keys + kTile * L::tileStride;
    unsigned char *f32Area = shared + 4 * L::tileBytes,
                  *bf16Area = f32Area + 2 * kWarps * L::f32Bytes;
    products = reinterpret_cast<float *>(f32Area + warp * L::f32Bytes);
    gradProducts =
        reinterpret_cast<float *>(f32Area + (kWarps + warp) * L::f32Bytes);
    kept = reinterpret_cast<Bits *>(bf16Area + warp * L::bf16Bytes);
    scoreGrads =
        reinterpret_cast<Bits *>(bf16Area + (kWarps + warp) * L::bf16Bytes);
    tileLse = reinterpret_cast<float *>(bf16Area + 2 * kWarps * L::bf16Bytes);
    tileDots = tileLse + kTile;
  }
};

/// Block (bh, query tile): D_i (into `rowDots`, [B H, Sq]) and dq of 64
/// queries of head bh.
template <int D, typename G>
__global__ void __launch_bounds__(kBlockThreads)
    fusedQueryGradKernel(FusedArgs a, const float *grad, const float *lse,
                         float *rowDots, G *dq) {
  using L = Layout<D>;
  extern __shared__ __align__(128) unsigned char shared[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const BackwardShared<D> m(shared, warp);
  Bits *queries = m.queries, *outGrads = m.outGrads, *keys = m.keys,
       *values = m.values, *scoreGrads = m.scoreGrads;
  float *products = m.products, *gradProducts = m.gradProducts;

  const AttentionShape &s = a.s;
  const AttentionConfig &config = a.config;
  const int64_t bh = blockIdx.x, firstQuery = int64_t(blockIdx.y) * kTile;
  const int row = lane / 2, half = lane % 2;
  const int64_t query = firstQuery + warp * kWarpRows + row;
  const bool rowExists = query < s.queries;
  const float rowLse = rowExists ? lse[lseIndex(s, bh, query)] : 0.0f;
  loadTile<D>(queries, a.q, a.qRows, bh, firstQuery, s.queries, a.width);
  loadRoundedTile<D>(outGrads, grad, a.outRows, bh, firstQuery, s.queries,
                     a.width);

  // q k^T and r(dO) v^T of a key tile into the warp's buffers.
  auto productsOf = [&](int64_t firstKey) {
    __syncthreads();
    loadTile<D>(keys, a.k, a.kRows, bh, firstKey, s.keys, a.width);
    loadTile<D>(values, a.v, a.vRows, bh, firstKey, s.keys, a.width);
    __syncthreads();
    productWithTransposed<D>(queries + warp * kWarpRows * L::tileStride, keys,
                             products);
    productWithTransposed<D>(outGrads + warp * kWarpRows * L::tileStride,
                             values, gradProducts);
    __syncwarp();
  };
  const float *rowProducts = products + row * L::f32Stride,
              *rowGradProducts = gradProducts + row * L::f32Stride;
  // The run of 4 keys from column `column` of the lane's row: p, and the
  // raw r(dO) . v_j.
  auto runOf = [&](int64_t firstKey, int column, int valid, float p[4],
                   float dOv[4]) {
    float score[4];
    maskedRun(rowProducts, column, firstKey + column, valid, s, config, bh,
              query, score);
    const float4 y =
        *reinterpret_cast<const float4 *>(rowGradProducts + column);
    dOv[0] = y.x, dOv[1] = y.y, dOv[2] = y.z, dOv[3] = y.w;
#pragma unroll
    for (int q = 0; q < 4; ++q)
      p[q] = q < valid ? expf(score[q] - rowLse) : 0.0f;
  };

  const int64_t keyEnd = visibleKeyEnd(s, config, firstQuery);
  float rowDot = 0.0f; // D_i = sum_j p f dp
  for (int64_t firstKey = 0; firstKey < keyEnd; firstKey += kTile) {
    productsOf(firstKey);
    for (int run = 0; run < kLaneRuns; ++run) {
      const int column = laneColumn(run, half);
      const int valid = validKeys(s, firstKey + column, rowExists);
      float f[4], p[4], dOv[4];
      dropoutQuad(s, config, bh, query, firstKey + column, valid, f);
      runOf(firstKey, column, valid, p, dOv);
#pragma unroll
      for (int q = 0; q < 4; ++q)
        if (q < valid)
          rowDot += p[q] * f[q] * dOv[q];
    }
  }
  rowDot += __shfl_xor_sync(0xffffffffu, rowDot, 1);
  if (rowExists && half == 0)
    rowDots[bh * s.queries + query] = rowDot;

  // One key tile: its products are still in the buffers.
  const bool oneTile = keyEnd <= kTile;
  Accumulator acc[D / 16];
  clear<D>(acc);
  for (int64_t firstKey = 0; firstKey < keyEnd; firstKey += kTile) {
    if (!oneTile)
      productsOf(firstKey);
    Bits *rowScoreGrads = scoreGrads + row * L::bf16Stride;
    for (int run = 0; run < kLaneRuns; ++run) {
      const int column = laneColumn(run, half);
      const int valid = validKeys(s, firstKey + column, rowExists);
      float f[4], p[4], dOv[4], ds[4];
      dropoutQuad(s, config, bh, query, firstKey + column, valid, f);
      runOf(firstKey, column, valid, p, dOv);
#pragma unroll
      for (int q = 0; q < 4; ++q)
        ds[q] =
            q < valid ? config.scale * p[q] * (f[q] * dOv[q] - rowDot) : 0.0f;
      *reinterpret_cast<uint2 *>(rowScoreGrads + column) =
          roundedQuad(make_float4(ds[0], ds[1], ds[2], ds[3]));
    }
    __syncwarp();
    accumulateProduct<D>(acc, scoreGrads, keys);
  }
  __syncwarp();
  storeRows<D>(acc, products);
  __syncwarp();
  writeRows<D>(products, lane, a.width, dq, a.qRows, bh,
               firstQuery + warp * kWarpRows, s.queries);
}

//===--- Backward: dk and dv ----------------------------------------------===//

/// Block (bh, key tile): dk and dv of 64 keys of head bh, over the query
/// tiles that see them. A warp's buffers hold its 16 keys' rows of the
/// transposed products, k q^T and v r(dO)^T.
template <int D, typename G>
__global__ void __launch_bounds__(kBlockThreads)
    fusedKeyValueGradKernel(FusedArgs a, const float *grad, const float *lse,
                            const float *rowDots, G *dk, G *dv) {
  using L = Layout<D>;
  extern __shared__ __align__(128) unsigned char shared[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const BackwardShared<D> m(shared, warp);
  Bits *queries = m.queries, *outGrads = m.outGrads, *keys = m.keys,
       *values = m.values, *kept = m.kept, *scoreGrads = m.scoreGrads;
  float *products = m.products, *gradProducts = m.gradProducts,
        *tileLse = m.tileLse, *tileDots = m.tileDots;

  const AttentionShape &s = a.s;
  const AttentionConfig &config = a.config;
  const int64_t bh = blockIdx.x, firstKey = int64_t(blockIdx.y) * kTile;
  const int64_t warpKey = firstKey + warp * kWarpRows;
  loadTile<D>(keys, a.k, a.kRows, bh, firstKey, s.keys, a.width);
  loadTile<D>(values, a.v, a.vRows, bh, firstKey, s.keys, a.width);

  Accumulator keyAcc[D / 16], valueAcc[D / 16];
  clear<D>(keyAcc);
  clear<D>(valueAcc);
  for (int64_t firstQuery = firstVisibleQueryTile(config, firstKey);
       firstQuery < s.queries; firstQuery += kTile) {
    __syncthreads(); // every warp is done with the last query tile
    loadTile<D>(queries, a.q, a.qRows, bh, firstQuery, s.queries, a.width);
    loadRoundedTile<D>(outGrads, grad, a.outRows, bh, firstQuery, s.queries,
                       a.width);
    for (int i = threadIdx.x; i < kTile; i += kBlockThreads) {
      const int64_t query = firstQuery + i;
      const bool exists = query < s.queries;
      tileLse[i] = exists ? lse[lseIndex(s, bh, query)] : 0.0f;
      tileDots[i] = exists ? rowDots[bh * s.queries + query] : 0.0f;
    }
    __syncthreads();
    productWithTransposed<D>(keys + warp * kWarpRows * L::tileStride, queries,
                             products);
    productWithTransposed<D>(values + warp * kWarpRows * L::tileStride,
                             outGrads, gradProducts);
    __syncwarp();
    // A lane takes runs of 4 adjacent keys (one Philox block) of a query:
    // a warp's 16 keys are 4 runs, times kTile queries.
    for (int t = lane; t < 4 * kTile; t += 32) {
      const int run = t / kTile, column = t % kTile;
      const int64_t query = firstQuery + column, key = warpKey + run * 4;
      const int valid = validKeys(s, key, query < s.queries);
      float f[4];
      dropoutQuad(s, config, bh, query, key, valid, f);
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int r = run * 4 + q;
        float pf = 0.0f, ds = 0.0f;
        if (q < valid) {
          const float p = expf(maskedScore(products[r * L::f32Stride + column],
                                           s, config, bh, query, key + q) -
                               tileLse[column]);
          pf = p * f[q];
          ds = config.scale * p *
               (f[q] * gradProducts[r * L::f32Stride + column] -
                tileDots[column]);
        }
        kept[r * L::bf16Stride + column] = runtime::roundToBf16(pf).bits;
        scoreGrads[r * L::bf16Stride + column] = runtime::roundToBf16(ds).bits;
      }
    }
    __syncwarp();
    accumulateProduct<D>(valueAcc, kept, outGrads);
    accumulateProduct<D>(keyAcc, scoreGrads, queries);
  }
  __syncwarp();
  storeRows<D>(keyAcc, products);
  storeRows<D>(valueAcc, gradProducts);
  __syncwarp();
  writeRows<D>(products, lane, a.width, dk, a.kRows, bh, warpKey, s.keys);
  writeRows<D>(gradProducts, lane, a.width, dv, a.vRows, bh, warpKey, s.keys);
}

//===--- Launches ---------------------------------------------------------===//

int64_t fusedCalls = 0;
bool fusedEnabled = false; // setFusedAttention

bool aligned16(const void *p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

/// The shared memory the kernels of tile width `width` take a block, at
/// most: the backward's, more than 48 KiB past width 16.
size_t sharedBytesOf(int width) {
  switch (width) {
  case 16:
    return std::max(forwardBytes<16>(), BackwardShared<16>::bytes);
  case 32:
    return std::max(forwardBytes<32>(), BackwardShared<32>::bytes);
  case 64:
    return std::max(forwardBytes<64>(), BackwardShared<64>::bytes);
  default:
    return std::max(forwardBytes<128>(), BackwardShared<128>::bytes);
  }
}

/// The shared memory a block may opt into on this GPU (H100, H200: 227
/// KiB; A100: 163 KiB; sm_86 and sm_89: 99 KiB), or 0 where it cannot be
/// asked.
size_t sharedLimit() {
  static int limit = -1;
  if (limit < 0) {
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                               device) != cudaSuccess) {
      (void)cudaGetLastError(); // the GEMMs will meet it, and keep it
      limit = 0;
    }
  }
  return static_cast<size_t>(limit);
}

/// Says why a call did not run fused, for the first such call of a
/// process.
void tellMisfit(const AttentionShape &s, const char *misfit) {
  static bool told = false;
  if (told)
    return;
  told = true;
  std::fprintf(stderr,
               "note: --fused-attention: an attention of %lld keys, head "
               "width %lld, runs on batched GEMMs: %s\n",
               static_cast<long long>(s.keys), static_cast<long long>(s.keyDim),
               misfit);
}

/// Whether this call runs fused (with the kernels asked for: else false,
/// silently).
bool runsFused(const AttentionShape &s, const AttentionConfig &config,
               bool aligned) {
  if (!fusedEnabled)
    return false;
  const char *misfit = fusedAttentionMisfit(s, config);
  if (!misfit && !aligned)
    misfit = "an operand is not 16-byte aligned";
  if (!misfit && sharedBytesOf(fusedTileWidth(s.keyDim)) > sharedLimit())
    misfit = "its kernels need more shared memory than this GPU gives a block";
  if (misfit) {
    tellMisfit(s, misfit);
    return false;
  }
  ++fusedCalls;
  return true;
}

FusedArgs argsOf(const Bf16 *q, const Bf16 *k, const Bf16 *v,
                 const AttentionShape &s, const AttentionConfig &config) {
  return {q,
          k,
          v,
          tensorHeads(s, s.queries, s.keyDim),
          tensorHeads(s, s.keys, s.keyDim),
          tensorHeads(s, s.keys, s.valueDim),
          tensorHeads(s, s.queries, s.valueDim),
          s,
          config,
          static_cast<int>(s.keyDim)};
}

/// Past 48 KiB of dynamic shared memory a kernel must opt in, once; done
/// on the first (eager) call, before any graph capture.
template <typename Kernel>
void allowSharedMemory(Kernel kernel, size_t bytes, bool &allowed) {
  if (allowed)
    return;
  allowed = TGC_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(bytes)));
}

dim3 gridOf(const AttentionShape &s, int64_t rows) {
  return dim3(static_cast<unsigned>(s.batch * s.heads),
              static_cast<unsigned>((rows + kTile - 1) / kTile));
}

template <int D, typename Out>
void launchForward(const FusedArgs &a, Out *out, float *lse) {
  static bool allowed = false;
  constexpr size_t bytes = forwardBytes<D>();
  allowSharedMemory(fusedForwardKernel<D, Out>, bytes, allowed);
  fusedForwardKernel<D, Out>
      <<<gridOf(a.s, a.s.queries), kBlockThreads, bytes, stream()>>>(a, out,
                                                                     lse);
  TGC_CUDA_CHECK_LAUNCH();
}

template <int D, typename G>
void launchGrad(const FusedArgs &a, const float *grad, const float *lse, G *dq,
                G *dk, G *dv) {
  static bool allowedQuery = false, allowedKey = false;
  constexpr size_t bytes = BackwardShared<D>::bytes;
  allowSharedMemory(fusedQueryGradKernel<D, G>, bytes, allowedQuery);
  allowSharedMemory(fusedKeyValueGradKernel<D, G>, bytes, allowedKey);
  Scratch rowDots(a.s.batch * a.s.heads * a.s.queries * sizeof(float));
  if (a.s.queries > 0 && !rowDots.as<float>())
    return; // no scratch: the error is recorded (firstError), not a crash
  if (a.s.queries > 0) { // no query tiles: dk = dv = 0 below
    fusedQueryGradKernel<D, G>
        <<<gridOf(a.s, a.s.queries), kBlockThreads, bytes, stream()>>>(
            a, grad, lse, rowDots.as<float>(), dq);
    TGC_CUDA_CHECK_LAUNCH();
  }
  fusedKeyValueGradKernel<D, G>
      <<<gridOf(a.s, a.s.keys), kBlockThreads, bytes, stream()>>>(
          a, grad, lse, rowDots.as<float>(), dk, dv);
  TGC_CUDA_CHECK_LAUNCH();
}

} // namespace

void setFusedAttention(bool on) { fusedEnabled = on; }

void noteUnfusedAttention(const AttentionShape &s,
                          const AttentionConfig &config) {
  if (fusedEnabled)
    tellMisfit(s, fusedAttentionMisfit(s, config));
}

int64_t fusedAttentionCalls() { return fusedCalls; }

template <typename Out>
bool fusedAttention(const Bf16 *q, const Bf16 *k, const Bf16 *v, Out *out,
                    float *lse, const AttentionShape &s,
                    const AttentionConfig &config) {
  if (!runsFused(s, config, aligned16(q) && aligned16(k) && aligned16(v)))
    return false;
  if (s.batch * s.heads == 0 || s.queries == 0)
    return true;
  const FusedArgs a = argsOf(q, k, v, s, config);
  switch (fusedTileWidth(s.keyDim)) {
  case 16:
    launchForward<16>(a, out, lse);
    break;
  case 32:
    launchForward<32>(a, out, lse);
    break;
  case 64:
    launchForward<64>(a, out, lse);
    break;
  default:
    launchForward<128>(a, out, lse);
    break;
  }
  return true;
}

template <typename G>
bool fusedAttentionGrad(const float *grad, const Bf16 *q, const Bf16 *k,
                        const Bf16 *v, G *dq, G *dk, G *dv, const float *lse,
                        const AttentionShape &s,
                        const AttentionConfig &config) {
  if (!runsFused(s, config,
                 aligned16(q) && aligned16(k) && aligned16(v) &&
                     aligned16(grad)))
    return false;
  if (s.batch * s.heads == 0)
    return true;
  const FusedArgs a = argsOf(q, k, v, s, config);
  switch (fusedTileWidth(s.keyDim)) {
  case 16:
    launchGrad<16>(a, grad, lse, dq, dk, dv);
    break;
  case 32:
    launchGrad<32>(a, grad, lse, dq, dk, dv);
    break;
  case 64:
    launchGrad<64>(a, grad, lse, dq, dk, dv);
    break;
  default:
    launchGrad<128>(a, grad, lse, dq, dk, dv);
    break;
  }
  return true;
}

template bool fusedAttention(const Bf16 *, const Bf16 *, const Bf16 *, float *,
                             float *, const AttentionShape &,
                             const AttentionConfig &);
template bool fusedAttention(const Bf16 *, const Bf16 *, const Bf16 *, Bf16 *,
                             float *, const AttentionShape &,
                             const AttentionConfig &);
template bool fusedAttentionGrad(const float *, const Bf16 *, const Bf16 *,
                                 const Bf16 *, float *, float *, float *,
                                 const float *, const AttentionShape &,
                                 const AttentionConfig &);
template bool fusedAttentionGrad(const float *, const Bf16 *, const Bf16 *,
                                 const Bf16 *, Bf16 *, Bf16 *, Bf16 *,
                                 const float *, const AttentionShape &,
                                 const AttentionConfig &);

} // namespace tgc::cuda
