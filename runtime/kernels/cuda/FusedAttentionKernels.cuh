//===- FusedAttentionKernels.cuh - attention, one kernel a way -*- CUDA -*-===//
//
// tg.attention and tg.attention_grad with bf16_products, flash-attention
// style: no [Sq, Sk] scores in device memory, one launch for the forward
// and two for the backward. q, k, v (and the output and gradients) are
// read and written in their own layout, head-major or sequence-major,
// through HeadLayout: no per-head GEMMs, no pointer tables.
//
// A block owns 64 rows (4 warps of 16) of one head, and the other side's
// rows stream past it in tiles of 64 through shared memory. Every product
// is a warp's bf16 tensor-core tiles (mma.m16n8k16, TensorCoreTiles.cuh)
// whose f32 results stay in its registers: each lane masks, exponentiates
// and drops its own elements of a score tile, and the rounded
// probabilities (or score gradients) are the next product's operand as
// they are. Shared memory holds only the streamed tiles of q, k, v and
// r(dO) (and a query tile's lse and D).
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
//   tile, reading D, its warps' scores transposed: 16 keys by 64 queries).
//   Each gradient element is summed by one lane in a fixed order: no
//   atomics, the same bits every run. A row whose every key is masked
//   has an lse that rounds to the mask's -1e9 (KernelTypes.h,
//   everyKeyMasked): where a query tile has one, the dq kernel finds its m
//   and l again (two more passes) and weighs p = exp(s - m) / l, as the
//   forward did, and leaves them to the dk and dv kernel (RowTerms).
// Dropout factors come from the same Philox stream as everywhere: where
// four adjacent keys start a Philox block, one block a lane, handed round
// by FragmentLayout.h's plans; else one draw a factor.
//
// Internal to TgcCudaKernels: FusedAttention.cu launches these kernels;
// FusedAttentionEmulatedTest.cpp runs them on the host, a warp's 32 lanes
// emulated, against the CPU kernel.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CUDA_FUSEDATTENTIONKERNELS_CUH
#define TGC_RUNTIME_CUDA_FUSEDATTENTIONKERNELS_CUH

#include "runtime/kernels/cuda/AttentionScores.cuh"
#include "runtime/kernels/cuda/Bf16Quads.cuh"
#include "runtime/kernels/cuda/FusedAttention.h"
#include "runtime/kernels/cuda/TensorCoreTiles.cuh"

namespace tgc::cuda::fused {

using tiles::Accumulator;
using tiles::Bits;
using tiles::OperandA;

constexpr int kWarpRows = 16; // rows of the block's tile a warp owns
constexpr int kWarps = 4;
constexpr int kTile = static_cast<int>(kFusedTileRows);
static_assert(kTile == kWarpRows * kWarps, "a block's rows are its warps'");
constexpr int kBlockThreads = kWarps * 32;
/// Accumulator tiles (8 columns each) across a tile of the other side's
/// rows, and A operands (16 columns each) they make.
constexpr int kTileColumns = kTile / 8;
constexpr int kTileOperands = kTile / 16;

/// Shared memory of head width D: bf16 tiles of kTile rows of one head (q,
/// k, v or the rounded dO), rows padded by 8 elements (TensorCoreTiles.cuh).
template <int D> struct Layout {
  static constexpr int stride = D + 8;
  static constexpr size_t tileBytes = size_t(kTile) * stride * sizeof(Bits);
  static_assert(tileBytes % 16 == 0, "tiles start 16-byte aligned");
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

/// A call's FusedArgs, each operand's heads where its layout has them.
inline FusedArgs argsOf(const Bf16 *q, const Bf16 *k, const Bf16 *v,
                        const AttentionShape &s,
                        const AttentionConfig &config) {
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

/// The grid of a kernel whose blocks own tiles of `rows`: (head, tile).
inline dim3 gridOf(const AttentionShape &s, int64_t rows) {
  return dim3(static_cast<unsigned>(s.batch * s.heads),
              static_cast<unsigned>((rows + kTile - 1) / kTile));
}

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
    *reinterpret_cast<uint4 *>(tile + r * Layout<D>::stride + c) = value;
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
    *reinterpret_cast<uint2 *>(tile + r * Layout<D>::stride + c) = value;
  }
}

/// The two matrix rows a lane's accumulator elements lie in (group and
/// group + 8 of its warp's 16, FragmentLayout.h), and whether they exist.
struct LaneRows {
  int row[2];
  bool exists[2];
  __device__ LaneRows(int warpFirst, int rows, int lane) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      row[h] = warpFirst + fragment::groupOf(lane) + 8 * h;
      exists[h] = row[h] < rows;
    }
  }
};

/// maskedScore for the fused kernels, its per-block parts found once and
/// the rest in 32-bit indices: no score bias (fusedAttentionMisfit), the
/// padding mask's row of the head's batch element.
struct ScoreMask {
  float scale;
  const float *keyMask;
  bool causal;
  int causalOffset;
  __device__ ScoreMask(const AttentionShape &s, const AttentionConfig &config,
                       int64_t bh)
      : scale(config.scale),
        keyMask(config.mask ? config.mask + bh / s.heads * s.keys : nullptr),
        causal(config.causal),
        causalOffset(static_cast<int>(config.causalOffset)) {}
  /// s_ij from the raw product q_i.k_j, as maskedScore adds it up.
  __device__ float operator()(float product, int query, int key) const {
    float score = scale * product;
    if (keyMask)
      score += keyMask[key];
    if (causal && key > causalOffset + query)
      score += kMaskedScore;
    return score;
  }
};

/// The column of a lane's accumulator element i of tile n.
__device__ inline int elementColumn(int n, int lane, int i) {
  return 8 * n + fragment::accumulatorColumn(lane, i);
}

/// Masks a lane's raw products q_i.k_j of the key tile at firstKey into
/// scores s_ij: -inf where the row or the key does not exist.
__device__ inline void maskScores(Accumulator (&scores)[kTileColumns],
                                  const ScoreMask &scoreOf,
                                  const LaneRows &rows, int firstKey,
                                  int keyCount, int lane) {
#pragma unroll
  for (int n = 0; n < kTileColumns; ++n)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int h = i >> 1;
      const int key = firstKey + elementColumn(n, lane, i);
      scores[n][i] = rows.exists[h] && key < keyCount
                         ? scoreOf(scores[n][i], rows.row[h], key)
                         : -INFINITY;
    }
}

__device__ inline float quadMax(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ inline float quadSum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

//===--- Dropout factors of a lane's elements -----------------------------===//

__device__ inline uint64_t probabilityIndex(const AttentionShape &s, int64_t bh,
                                            int64_t query, int64_t key) {
  return static_cast<uint64_t>((bh * s.queries + query) * s.keys + key);
}

/// Whether every run of four keys from a multiple of 4 is one Philox block
/// in this call: the keys come in whole quads (so every row starts a
/// block), and the index offset is a multiple of 4.
__device__ inline bool quadsAligned(const AttentionShape &s,
                                    const AttentionConfig &config) {
  return s.keys % 4 == 0 && config.dropout.indexOffset % 4 == 0;
}

/// value[i] with i known only at run time, without a local-memory array.
__device__ inline float pick(const float value[4], int i) {
  return i == 0 ? value[0] : i == 1 ? value[1] : i == 2 ? value[2] : value[3];
}

/// The factors of a lane's elements of a score tile whose rows are queries
/// (`queries`) and whose 8 columns are keys from `firstKey` on. The whole
/// warp calls.
__device__ inline void keyColumnFactors(const AttentionShape &s,
                                        const AttentionConfig &config,
                                        int64_t bh, const LaneRows &queries,
                                        int64_t firstKey, bool aligned,
                                        int lane, float f[4]) {
  const runtime::Dropout &dropout = config.dropout;
  if (dropout.rate <= 0.0f) {
    f[0] = f[1] = f[2] = f[3] = 1.0f;
    return;
  }
  using Plan = fragment::ColumnQuads;
  if (aligned) {
    const int half = Plan::keptHalf(lane);
    float block[4];
    dropout.factors4(probabilityIndex(s, bh, queries.row[half],
                                      firstKey + Plan::firstColumn(lane)),
                     block);
    const float sent0 = half ? block[0] : block[2],
                sent1 = half ? block[1] : block[3];
    const float kept0 = half ? block[2] : block[0],
                kept1 = half ? block[3] : block[1];
    const float got0 = __shfl_xor_sync(0xffffffffu, sent0, 1),
                got1 = __shfl_xor_sync(0xffffffffu, sent1, 1);
#pragma unroll
    for (int i = 0; i < 4; ++i)
      f[i] = Plan::fromOwnBlock(lane, i) ? (i & 1 ? kept1 : kept0)
                                         : (i & 1 ? got1 : got0);
    return;
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
    f[i] = dropout.factor(
        probabilityIndex(s, bh, queries.row[i >> 1],
                         firstKey + fragment::accumulatorColumn(lane, i)));
}

/// The factors of a lane's elements of a transposed score tile: rows the
/// warp's 16 keys from `warpKey` on (`keys`), 8 columns of queries from
/// `firstQuery` on. The whole warp calls.
__device__ inline void keyRowFactors(const AttentionShape &s,
                                     const AttentionConfig &config, int64_t bh,
                                     int64_t warpKey, const LaneRows &keys,
                                     int64_t firstQuery, bool aligned, int lane,
                                     float f[4]) {
  const runtime::Dropout &dropout = config.dropout;
  if (dropout.rate <= 0.0f) {
    f[0] = f[1] = f[2] = f[3] = 1.0f;
    return;
  }
  using Plan = fragment::RowQuads;
  if (aligned) {
    float block[4];
    dropout.factors4(probabilityIndex(s, bh, firstQuery + Plan::column(lane),
                                      warpKey + Plan::firstRow(lane)),
                     block);
#pragma unroll
    for (int round = 0; round < 4; ++round) {
      float value = pick(block, Plan::sentValue(lane, round));
      if (round > 0)
        value = __shfl_xor_sync(0xffffffffu, value, Plan::laneMask(round));
      const int element = Plan::receivedElement(lane, round);
#pragma unroll
      for (int i = 0; i < 4; ++i)
        if (element == i) // each element arrives in exactly one round
          f[i] = value;
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
    f[i] = dropout.factor(probabilityIndex(
        s, bh, firstQuery + fragment::accumulatorColumn(lane, i),
        keys.row[i >> 1]));
}

//===--- Results ----------------------------------------------------------===//

__device__ inline void storePair(float *at, float x, float y) {
  *reinterpret_cast<float2 *>(at) = make_float2(x, y);
}
__device__ inline void storePair(Bf16 *at, float x, float y) {
  *reinterpret_cast<uint32_t *>(at) =
      tiles::pairOf(runtime::roundToBf16(x).bits, runtime::roundToBf16(y).bits);
}

/// Writes a warp's [16, D] accumulated rows, times scale[h] for the lane's
/// row h, as matrix rows warpFirst, warpFirst + 1, ... of head bh (those
/// below `rows`, the first `width` columns), in the result's type: two
/// adjacent elements a store (rows and widths are whole pairs).
template <int D, typename T>
__device__ void writeRows(const Accumulator (&acc)[D / 8], const float scale[2],
                          T *x, HeadLayout layout, int64_t bh,
                          int64_t warpFirst, int64_t rows, int width,
                          int lane) {
  T *head = x + layout.offset(bh);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int64_t row = warpFirst + fragment::groupOf(lane) + 8 * h;
    if (row >= rows)
      continue;
    T *at = head + row * layout.rowStride;
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      const int column = elementColumn(n, lane, 0);
      if (column < width)
        storePair(at + column, acc[n][2 * h] * scale[h],
                  acc[n][2 * h + 1] * scale[h]);
    }
  }
}

//===--- Forward ----------------------------------------------------------===//

template <int D> constexpr size_t forwardBytes() {
  return 3 * Layout<D>::tileBytes;
}

/// Block (bh, query tile): out and lse of 64 queries of head bh. A pass
/// over the key tiles finds each row's maximum m, and a second one sums
/// e = exp(s - m) and r(e f) v: the CPU's roundings, not an online
/// softmax's (which would round e before the last rescaling). Where the
/// keys fit one tile the second pass reuses the first's scores.
template <int D, typename Out>
__global__ void __launch_bounds__(kBlockThreads)
    fusedForwardKernel(FusedArgs a, Out *out, float *lse) {
  using L = Layout<D>;
  TGC_DYNAMIC_SHARED_MEMORY(shared);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  Bits *queries = reinterpret_cast<Bits *>(shared),
       *keys = queries + kTile * L::stride, *values = keys + kTile * L::stride;
  const Bits *warpQueries = queries + warp * kWarpRows * L::stride;

  const AttentionShape &s = a.s;
  const AttentionConfig &config = a.config;
  const int64_t bh = blockIdx.x, firstQuery = int64_t(blockIdx.y) * kTile,
                warpFirst = firstQuery + warp * kWarpRows;
  const int keyCount = static_cast<int>(s.keys);
  const LaneRows rows(static_cast<int>(warpFirst), static_cast<int>(s.queries),
                      lane);
  const ScoreMask scoreOf(s, config, bh);
  const bool aligned = quadsAligned(s, config);
  auto valid = [&](int h, int key) { return rows.exists[h] && key < keyCount; };
  loadTile<D>(queries, a.q, a.qRows, bh, firstQuery, s.queries, a.width);

  // The lane's masked scores of a key tile (-inf where there is none).
  Accumulator scores[kTileColumns];
  auto scoresOf = [&](int firstKey, bool withValues) {
    __syncthreads(); // every warp is done with the last tile
    loadTile<D>(keys, a.k, a.kRows, bh, firstKey, s.keys, a.width);
    if (withValues)
      loadTile<D>(values, a.v, a.vRows, bh, firstKey, s.keys, a.width);
    __syncthreads();
    tiles::productWithRows<D, kTile>(scores, warpQueries, keys, L::stride,
                                     lane);
    maskScores(scores, scoreOf, rows, firstKey, keyCount, lane);
  };

  const int keyEnd = static_cast<int>(visibleKeyEnd(s, config, firstQuery));
  const bool oneTile = keyEnd <= kTile;
  float rowMax[2] = {-INFINITY, -INFINITY};
  for (int firstKey = 0; firstKey < keyEnd; firstKey += kTile) {
    scoresOf(firstKey, oneTile);
#pragma unroll
    for (int n = 0; n < kTileColumns; ++n)
#pragma unroll
      for (int i = 0; i < 4; ++i)
        rowMax[i >> 1] = fmaxf(rowMax[i >> 1], scores[n][i]);
  }
  // Every tile's first key exists: an existing row's maximum is finite.
  rowMax[0] = quadMax(rowMax[0]);
  rowMax[1] = quadMax(rowMax[1]);

  Accumulator acc[D / 8];
  tiles::clear(acc);
  float rowSum[2] = {0.0f, 0.0f};
  for (int firstKey = 0; firstKey < keyEnd; firstKey += kTile) {
    if (!oneTile)
      scoresOf(firstKey, true);
#pragma unroll
    for (int n = 0; n < kTileColumns; ++n) {
      float f[4];
      keyColumnFactors(s, config, bh, rows, firstKey + 8 * n, aligned, lane, f);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int h = i >> 1;
        const float e = valid(h, firstKey + elementColumn(n, lane, i))
                            ? expf(scores[n][i] - rowMax[h])
                            : 0.0f;
        rowSum[h] += e;
        scores[n][i] = e * f[i];
      }
    }
    OperandA kept[kTileOperands];
#pragma unroll
    for (int j = 0; j < kTileOperands; ++j)
      tiles::toOperand(kept[j], scores[2 * j], scores[2 * j + 1]);
    tiles::accumulateProduct<D, kTile>(acc, kept, values, L::stride, lane);
  }
  rowSum[0] = quadSum(rowSum[0]);
  rowSum[1] = quadSum(rowSum[1]);
  // out = the sums / l, as the CPU (times 1 / l).
  const float scale[2] = {rows.exists[0] ? 1.0f / rowSum[0] : 0.0f,
                          rows.exists[1] ? 1.0f / rowSum[1] : 0.0f};
  writeRows<D>(acc, scale, out, a.outRows, bh, warpFirst, s.queries, a.width,
               lane);
  if (fragment::pairOf(lane) == 0)
#pragma unroll
    for (int h = 0; h < 2; ++h)
      if (rows.exists[h])
        lse[lseIndex(s, bh, rows.row[h])] = rowMax[h] + logf(rowSum[h]);
}

//===--- Backward: D and dq -----------------------------------------------===//

/// The backward kernels' shared memory: four tiles (q, r(dO), k, v) and a
/// query tile's row weights (p = exp(s - shift) scale) and D.
template <int D> struct BackwardShared {
  using L = Layout<D>;
  static constexpr size_t bytes = 4 * L::tileBytes + 3 * kTile * sizeof(float);
  Bits *queries, *outGrads, *keys, *values;
  float *tileShifts, *tileScales, *tileDots;

  __device__ explicit BackwardShared(unsigned char *shared) {
    queries = reinterpret_cast<Bits *>(shared);
    outGrads = queries + kTile * L::stride;
    keys = outGrads + kTile * L::stride;
    values = keys + kTile * L::stride;
    tileShifts = reinterpret_cast<float *>(shared + 4 * L::tileBytes);
    tileScales = tileShifts + kTile;
    tileDots = tileScales + kTile;
  }
};

/// What the dq kernel leaves the dk and dv kernel, a float a query row
/// ([B H, Sq] each): D_i, and the weights p = exp(s - shift) scale of the
/// rows whose every key is masked (written for those rows only; the others
/// weigh exp(s - lse)).
struct RowTerms {
  float *dots, *shifts, *scales;

  /// The three arrays of `rows` query rows in one of 3 rows floats.
  __host__ __device__ static RowTerms in(float *scratch, int64_t rows) {
    return {scratch, scratch + rows, scratch + 2 * rows};
  }
};

/// Block (bh, query tile): D_i and dq of 64 queries of head bh (and the
/// weights of its rows whose every key is masked).
template <int D, typename G>
__global__ void __launch_bounds__(kBlockThreads)
    fusedQueryGradKernel(FusedArgs a, const float *grad, const float *lse,
                         RowTerms terms, G *dq) {
  using L = Layout<D>;
  TGC_DYNAMIC_SHARED_MEMORY(shared);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const BackwardShared<D> m(shared);
  const Bits *warpQueries = m.queries + warp * kWarpRows * L::stride,
             *warpGrads = m.outGrads + warp * kWarpRows * L::stride;

  const AttentionShape &s = a.s;
  const AttentionConfig &config = a.config;
  const int64_t bh = blockIdx.x, firstQuery = int64_t(blockIdx.y) * kTile,
                warpFirst = firstQuery + warp * kWarpRows;
  const int keyCount = static_cast<int>(s.keys);
  const LaneRows rows(static_cast<int>(warpFirst), static_cast<int>(s.queries),
                      lane);
  const ScoreMask scoreOf(s, config, bh);
  const bool aligned = quadsAligned(s, config);
  auto valid = [&](int h, int key) { return rows.exists[h] && key < keyCount; };
  // p = exp(s - shift) scale: shift = lse and scale = 1, but for a row
  // whose every key is masked.
  float rowShift[2], rowScale[2] = {1.0f, 1.0f};
  bool everyMasked[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    rowShift[h] = rows.exists[h] ? lse[lseIndex(s, bh, rows.row[h])] : 0.0f;
    everyMasked[h] = rows.exists[h] && everyKeyMasked(rowShift[h]);
  }
  loadTile<D>(m.queries, a.q, a.qRows, bh, firstQuery, s.queries, a.width);
  loadRoundedTile<D>(m.outGrads, grad, a.outRows, bh, firstQuery, s.queries,
                     a.width);
  const int keyEnd = static_cast<int>(visibleKeyEnd(s, config, firstQuery));

  // Rows whose every key is masked (rare: the block's branch): the
  // forward's m and l again, the maxima in one pass over the key tiles and
  // the sums of exp(s - m) in another.
  Accumulator p[kTileColumns], dOv[kTileColumns];
  if (__syncthreads_or(everyMasked[0] || everyMasked[1])) {
    float rowMax[2] = {-INFINITY, -INFINITY}, rowSum[2] = {0.0f, 0.0f};
    for (int pass = 0; pass < 2; ++pass) {
      for (int firstKey = 0; firstKey < keyEnd; firstKey += kTile) {
        __syncthreads();
        loadTile<D>(m.keys, a.k, a.kRows, bh, firstKey, s.keys, a.width);
        __syncthreads();
        tiles::productWithRows<D, kTile>(p, warpQueries, m.keys, L::stride,
                                         lane);
        maskScores(p, scoreOf, rows, firstKey, keyCount, lane);
#pragma unroll
        for (int n = 0; n < kTileColumns; ++n)
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            const int h = i >> 1;
            if (pass == 0)
              rowMax[h] = fmaxf(rowMax[h], p[n][i]);
            else if (valid(h, firstKey + elementColumn(n, lane, i)))
              rowSum[h] += expf(p[n][i] - rowMax[h]);
          }
      }
      for (int h = 0; h < 2; ++h)
        if (pass == 0)
          rowMax[h] = quadMax(rowMax[h]);
        else
          rowSum[h] = quadSum(rowSum[h]);
    }
#pragma unroll
    for (int h = 0; h < 2; ++h)
      if (everyMasked[h]) {
        rowShift[h] = rowMax[h];
        rowScale[h] = 1.0f / rowSum[h];
        if (fragment::pairOf(lane) == 0) {
          terms.shifts[bh * s.queries + rows.row[h]] = rowShift[h];
          terms.scales[bh * s.queries + rows.row[h]] = rowScale[h];
        }
      }
  }

  // A key tile's p (0 where there is no key: exp(-inf)) and raw
  // r(dO) . v_j.
  auto productsOf = [&](int firstKey) {
    __syncthreads();
    loadTile<D>(m.keys, a.k, a.kRows, bh, firstKey, s.keys, a.width);
    loadTile<D>(m.values, a.v, a.vRows, bh, firstKey, s.keys, a.width);
    __syncthreads();
    tiles::productWithRows<D, kTile>(p, warpQueries, m.keys, L::stride, lane);
    tiles::productWithRows<D, kTile>(dOv, warpGrads, m.values, L::stride, lane);
    maskScores(p, scoreOf, rows, firstKey, keyCount, lane);
#pragma unroll
    for (int n = 0; n < kTileColumns; ++n)
#pragma unroll
      for (int i = 0; i < 4; ++i)
        p[n][i] = expf(p[n][i] - rowShift[i >> 1]) * rowScale[i >> 1];
  };

  // One key tile: its products stay in the registers for the second pass,
  // dOv already times its dropout factors (no second Philox draw).
  const bool oneTile = keyEnd <= kTile;
  float rowDot[2] = {0.0f, 0.0f}; // D_i = sum_j p f dp
  for (int firstKey = 0; firstKey < keyEnd; firstKey += kTile) {
    productsOf(firstKey);
#pragma unroll
    for (int n = 0; n < kTileColumns; ++n) {
      float f[4];
      keyColumnFactors(s, config, bh, rows, firstKey + 8 * n, aligned, lane, f);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        if (valid(i >> 1, firstKey + elementColumn(n, lane, i)))
          rowDot[i >> 1] += p[n][i] * f[i] * dOv[n][i];
        if (oneTile)
          dOv[n][i] = f[i] * dOv[n][i];
      }
    }
  }
  rowDot[0] = quadSum(rowDot[0]);
  rowDot[1] = quadSum(rowDot[1]);
  if (fragment::pairOf(lane) == 0)
#pragma unroll
    for (int h = 0; h < 2; ++h)
      if (rows.exists[h])
        terms.dots[bh * s.queries + rows.row[h]] = rowDot[h];

  Accumulator acc[D / 8];
  tiles::clear(acc);
  for (int firstKey = 0; firstKey < keyEnd; firstKey += kTile) {
    if (!oneTile)
      productsOf(firstKey);
#pragma unroll
    for (int n = 0; n < kTileColumns; ++n) {
      float f[4] = {1.0f, 1.0f, 1.0f, 1.0f}; // one tile: in dOv already
      if (!oneTile)
        keyColumnFactors(s, config, bh, rows, firstKey + 8 * n, aligned, lane,
                         f);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int h = i >> 1;
        const float droppedDOv = oneTile ? dOv[n][i] : f[i] * dOv[n][i];
        p[n][i] = valid(h, firstKey + elementColumn(n, lane, i))
                      ? config.scale * p[n][i] * (droppedDOv - rowDot[h])
                      : 0.0f;
      }
    }
    OperandA scoreGrads[kTileOperands];
#pragma unroll
    for (int j = 0; j < kTileOperands; ++j)
      tiles::toOperand(scoreGrads[j], p[2 * j], p[2 * j + 1]);
    tiles::accumulateProduct<D, kTile>(acc, scoreGrads, m.keys, L::stride,
                                       lane);
  }
  const float unscaled[2] = {1.0f, 1.0f};
  writeRows<D>(acc, unscaled, dq, a.qRows, bh, warpFirst, s.queries, a.width,
               lane);
}

//===--- Backward: dk and dv ----------------------------------------------===//

/// Block (bh, key tile): dk and dv of 64 keys of head bh, over the query
/// tiles that see them. A warp's score tiles are transposed: its 16 keys'
/// rows of k q^T and v r(dO)^T.
template <int D, typename G>
__global__ void __launch_bounds__(kBlockThreads)
    fusedKeyValueGradKernel(FusedArgs a, const float *grad, const float *lse,
                            RowTerms terms, G *dk, G *dv) {
  using L = Layout<D>;
  TGC_DYNAMIC_SHARED_MEMORY(shared);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const BackwardShared<D> m(shared);
  const Bits *warpKeys = m.keys + warp * kWarpRows * L::stride,
             *warpValues = m.values + warp * kWarpRows * L::stride;

  const AttentionShape &s = a.s;
  const AttentionConfig &config = a.config;
  const int64_t bh = blockIdx.x, firstKey = int64_t(blockIdx.y) * kTile,
                warpKey = firstKey + warp * kWarpRows;
  const int queryCount = static_cast<int>(s.queries);
  const LaneRows keyRows(static_cast<int>(warpKey), static_cast<int>(s.keys),
                         lane);
  const ScoreMask scoreOf(s, config, bh);
  const bool aligned = quadsAligned(s, config);
  loadTile<D>(m.keys, a.k, a.kRows, bh, firstKey, s.keys, a.width);
  loadTile<D>(m.values, a.v, a.vRows, bh, firstKey, s.keys, a.width);

  Accumulator keyAcc[D / 8], valueAcc[D / 8];
  tiles::clear(keyAcc);
  tiles::clear(valueAcc);
  for (int firstQuery =
           static_cast<int>(firstVisibleQueryTile(config, firstKey));
       firstQuery < queryCount; firstQuery += kTile) {
    __syncthreads(); // every warp is done with the last query tile
    loadTile<D>(m.queries, a.q, a.qRows, bh, firstQuery, s.queries, a.width);
    loadRoundedTile<D>(m.outGrads, grad, a.outRows, bh, firstQuery, s.queries,
                       a.width);
    for (int i = threadIdx.x; i < kTile; i += kBlockThreads) {
      const int64_t query = firstQuery + i;
      const bool exists = query < s.queries;
      const float rowLse = exists ? lse[lseIndex(s, bh, query)] : 0.0f;
      const bool everyMasked = exists && everyKeyMasked(rowLse);
      const int64_t row = bh * s.queries + query;
      m.tileShifts[i] = everyMasked ? terms.shifts[row] : rowLse;
      m.tileScales[i] = everyMasked ? terms.scales[row] : 1.0f;
      m.tileDots[i] = exists ? terms.dots[row] : 0.0f;
    }
    __syncthreads();
    // p f and ds of the warp's keys (rows) by the tile's queries
    // (columns), 16 queries at a time (fewer registers than the whole
    // tile's; the sums are added in the same order).
#pragma unroll
    for (int j = 0; j < kTileOperands; ++j) {
      const int chunkRow = 16 * j * L::stride;
      Accumulator kept[2], scoreGrads[2];
      tiles::productWithRows<D, 16>(kept, warpKeys, m.queries + chunkRow,
                                    L::stride, lane);
      tiles::productWithRows<D, 16>(scoreGrads, warpValues,
                                    m.outGrads + chunkRow, L::stride, lane);
#pragma unroll
      for (int n = 0; n < 2; ++n) {
        float f[4];
        keyRowFactors(s, config, bh, warpKey, keyRows,
                      firstQuery + 8 * (2 * j + n), aligned, lane, f);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int h = i >> 1, column = elementColumn(2 * j + n, lane, i);
          const int query = firstQuery + column;
          float pf = 0.0f, ds = 0.0f;
          if (keyRows.exists[h] && query < queryCount) {
            const float p = expf(scoreOf(kept[n][i], query, keyRows.row[h]) -
                                 m.tileShifts[column]) *
                            m.tileScales[column];
            pf = p * f[i];
            ds = config.scale * p *
                 (f[i] * scoreGrads[n][i] - m.tileDots[column]);
          }
          kept[n][i] = pf;
          scoreGrads[n][i] = ds;
        }
      }
      OperandA keptOperand, gradOperand;
      tiles::toOperand(keptOperand, kept[0], kept[1]);
      tiles::toOperand(gradOperand, scoreGrads[0], scoreGrads[1]);
      tiles::accumulateChunk<D>(valueAcc, keptOperand, m.outGrads + chunkRow,
                                L::stride, lane);
      tiles::accumulateChunk<D>(keyAcc, gradOperand, m.queries + chunkRow,
                                L::stride, lane);
    }
  }
  const float unscaled[2] = {1.0f, 1.0f};
  writeRows<D>(keyAcc, unscaled, dk, a.kRows, bh, warpKey, s.keys, a.width,
               lane);
  writeRows<D>(valueAcc, unscaled, dv, a.vRows, bh, warpKey, s.keys, a.width,
               lane);
}

} // namespace tgc::cuda::fused

#endif // TGC_RUNTIME_CUDA_FUSEDATTENTIONKERNELS_CUH
