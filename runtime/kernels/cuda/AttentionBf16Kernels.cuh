//===- AttentionBf16Kernels.cuh - bf16 products' rows ----------*- CUDA -*-===//
//
// AttentionBf16.cu's row kernels (attention with bf16 products): over a
// group's f32 products in scratch, a warp (by quads, where the keys allow:
// half a warp for up to 64 keys) per query row writes the rounded
// probabilities times their dropout factors, 1 / l and the lse; the output
// rows are scaled after the product; in the backward the rounded p f and
// ds, the gradient GEMMs' operands.
// Attention.cu's, AttentionGrad.cu's and AttentionBf16.cu's row kernels
// are each in the header of their own source (a kernel's definition goes
// in one translation unit); AttentionEmulatedTest.cpp runs all three
// headers' kernels on the host (KernelEmulator.h) against the CPU kernels.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CUDA_ATTENTIONBF16KERNELS_CUH
#define TGC_RUNTIME_CUDA_ATTENTIONBF16KERNELS_CUH

#include "runtime/kernels/cuda/AttentionScores.cuh"
#include "runtime/kernels/cuda/Bf16Quads.cuh"

namespace tgc::cuda {

/// Rows [0, rows) of a group starting at head firstHead, a warp per row:
/// probabilities[row] = r(e f) with e = exp(s - max) and rowScale = 1 / l.
__global__ void roundedProbabilitiesKernel(float *scores, Bf16 *probabilities,
                                           float *rowScale, float *lse,
                                           AttentionShape s,
                                           AttentionConfig config,
                                           int64_t firstHead, int64_t rows) {
  const int lane = threadIdx.x % 32;
  TGC_FOR_WARP_ROW(r, rows) {
    const int64_t bh = firstHead + r / s.queries, query = r % s.queries;
    float *row = scores + r * s.keys;
    Bf16 *rounded = probabilities + r * s.keys;
    const float max = maskRowAndMax(row, s, config, bh, query, lane);
    float sum = 0.0f;
    for (int64_t j = lane; j < s.keys; j += 32) {
      float e = expf(row[j] - max);
      sum += e;
      rounded[j] =
          runtime::roundToBf16(e * probabilityFactor(s, config, bh, query, j));
    }
    sum = warpReduce(sum, SumOp{});
    if (lane == 0) {
      rowScale[r] = 1.0f / sum;
      lse[lseIndex(s, bh, query)] = max + logf(sum);
    }
  }
}

/// Runs of 4 adjacent keys a lane holds in the quad row kernels.
constexpr int kQuadsPerLane = 4;

/// Lanes a row for the quad row kernels, or 0 where they do not apply: the
/// keys in whole quads whose flat indices start Philox blocks (factors4),
/// at most kQuadsPerLane quads a lane; half a warp for rows of up to 64 keys.
inline int quadLanesPerRow(const AttentionShape &s,
                           const AttentionConfig &config) {
  if (s.keys % 4 != 0 || config.dropout.indexOffset % 4 != 0)
    return 0;
  if (s.keys <= 16 * 4)
    return 16;
  return s.keys <= 32 * 4 * kQuadsPerLane ? 32 : 0;
}

/// A row loop of kLanes lanes a row (the rows of a warp's lane groups may
/// end at different times: reduce with laneGroupReduce).
#define TGC_FOR_LANE_GROUP_ROW(r, rows, kLanes)                                \
  for (int64_t r = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) / kLanes;  \
       r < (rows); r += int64_t(gridDim.x) * (blockDim.x / kLanes))

/// roundedProbabilitiesKernel by quads (quadLanesPerRow).
template <int kLanes>
__global__ void roundedProbabilityQuadsKernel(
    const float *scores, Bf16 *probabilities, float *rowScale, float *lse,
    AttentionShape s, AttentionConfig config, int64_t firstHead, int64_t rows) {
  const int lane = threadIdx.x % kLanes;
  TGC_FOR_LANE_GROUP_ROW(r, rows, kLanes) {
    const int64_t bh = firstHead + r / s.queries, query = r % s.queries;
    float score[kQuadsPerLane][4];
    float max = -INFINITY;
#pragma unroll
    for (int t = 0; t < kQuadsPerLane; ++t) {
      const int64_t j = 4 * (lane + kLanes * t); // quad t's first key
      if (j < s.keys) {
        const float4 x = *reinterpret_cast<const float4 *>(scores + r * s.keys + j);
        const float raw[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          score[t][q] = maskedScore(raw[q], s, config, bh, query, j + q);
          max = fmaxf(max, score[t][q]);
        }
      }
    }
    max = laneGroupReduce<kLanes>(max, MaxOp{});
    float sum = 0.0f;
#pragma unroll
    for (int t = 0; t < kQuadsPerLane; ++t) {
      const int64_t j = 4 * (lane + kLanes * t); // quad t's first key
      if (j < s.keys) {
        float f[4], kept[4];
        config.dropout.factors4((bh * s.queries + query) * s.keys + j, f);
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const float e = expf(score[t][q] - max);
          sum += e;
          kept[q] = e * f[q];
        }
        *reinterpret_cast<uint2 *>(probabilities + r * s.keys + j) =
            roundedQuad(make_float4(kept[0], kept[1], kept[2], kept[3]));
      }
    }
    sum = laneGroupReduce<kLanes>(sum, SumOp{});
    if (lane == 0) {
      rowScale[r] = 1.0f / sum;
      lse[lseIndex(s, bh, query)] = max + logf(sum);
    }
  }
}

/// Output row r of the group (head r / Sq, query r % Sq) = sums[r]
/// rowScale[r] as Out (in place when the output is f32 head-major): the
/// division by l after the product. A warp per row: one row's place in the
/// output a lane, not one per element.
template <typename Out>
__global__ void scaleRowsKernel(const float *sums, Heads<Out> out,
                                const float *rowScale, int64_t queries,
                                int64_t rows, int64_t width) {
  const int lane = threadIdx.x % 32;
  TGC_FOR_WARP_ROW(r, rows) {
    Out *row = out.at(r / queries) + r % queries * out.layout.rowStride;
    const float scale = rowScale[r];
    for (int64_t c = lane; c < width; c += 32)
      row[c] = convertedTo<Out>(sums[r * width + c] * scale);
  }
}

/// A warp per row of a group starting at head firstHead: from the products
/// q k^T and r(dO) v^T, the rounded operands of the three gradient GEMMs,
/// r(p f) and r(ds).
__global__ void roundedScoreGradsKernel(const float *products,
                                        const float *outGrads, const float *lse,
                                        Bf16 *keptProbabilities,
                                        Bf16 *scoreGrads, AttentionShape s,
                                        AttentionConfig config,
                                        int64_t firstHead, int64_t rows) {
  const int lane = threadIdx.x % 32;
  TGC_FOR_WARP_ROW(r, rows) {
    const int64_t bh = firstHead + r / s.queries, query = r % s.queries;
    const float *product = products + r * s.keys,
                *dOv = outGrads + r * s.keys; // r(dO_i) . v_j
    const RowWeights weights = rowWeights(
        product, s, config, bh, query, lse[lseIndex(s, bh, query)], lane);
    auto probability = [&](int64_t j) {
      return weights(maskedScore(product[j], s, config, bh, query, j));
    };
    float rowDot = 0.0f; // D_i = sum_j p dp
    for (int64_t j = lane; j < s.keys; j += 32)
      rowDot +=
          probability(j) * probabilityFactor(s, config, bh, query, j) * dOv[j];
    rowDot = warpReduce(rowDot, SumOp{});
    for (int64_t j = lane; j < s.keys; j += 32) {
      const float p = probability(j),
                  f = probabilityFactor(s, config, bh, query, j);
      const float logitGrad = p * (f * dOv[j] - rowDot);
      addBiasGrad(s, config, bh, query, j, logitGrad);
      keptProbabilities[r * s.keys + j] = runtime::roundToBf16(p * f);
      scoreGrads[r * s.keys + j] = runtime::roundToBf16(config.scale * logitGrad);
    }
  }
}

/// roundedScoreGradsKernel by quads (quadLanesPerRow): p, f and f dp kept
/// in registers between the row sum and the writes.
template <int kLanes>
__global__ void roundedScoreGradQuadsKernel(
    const float *products, const float *outGrads, const float *lse,
    Bf16 *keptProbabilities, Bf16 *scoreGrads, AttentionShape s,
    AttentionConfig config, int64_t firstHead, int64_t rows) {
  const int lane = threadIdx.x % kLanes;
  TGC_FOR_LANE_GROUP_ROW(r, rows, kLanes) {
    const int64_t bh = firstHead + r / s.queries, query = r % s.queries;
    const RowWeights weights =
        rowWeights<kLanes>(products + r * s.keys, s, config, bh, query,
                           lse[lseIndex(s, bh, query)], lane);
    float p[kQuadsPerLane][4], f[kQuadsPerLane][4], dp[kQuadsPerLane][4];
    float rowDot = 0.0f; // D_i = sum_j p dp
#pragma unroll
    for (int t = 0; t < kQuadsPerLane; ++t) {
      const int64_t j = 4 * (lane + kLanes * t); // quad t's first key
      if (j < s.keys) {
        const float4 x = *reinterpret_cast<const float4 *>(products + r * s.keys + j),
                     y = *reinterpret_cast<const float4 *>(outGrads + r * s.keys + j);
        const float product[4] = {x.x, x.y, x.z, x.w},
                    dOv[4] = {y.x, y.y, y.z, y.w}; // r(dO_i) . v_j
        config.dropout.factors4((bh * s.queries + query) * s.keys + j, f[t]);
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          p[t][q] = weights(maskedScore(product[q], s, config, bh, query, j + q));
          dp[t][q] = f[t][q] * dOv[q];
          rowDot += p[t][q] * f[t][q] * dOv[q];
        }
      }
    }
    rowDot = laneGroupReduce<kLanes>(rowDot, SumOp{});
#pragma unroll
    for (int t = 0; t < kQuadsPerLane; ++t) {
      const int64_t j = 4 * (lane + kLanes * t); // quad t's first key
      if (j < s.keys) {
        float kept[4], ds[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          kept[q] = p[t][q] * f[t][q];
          const float logitGrad = p[t][q] * (dp[t][q] - rowDot);
          addBiasGrad(s, config, bh, query, j + q, logitGrad);
          ds[q] = config.scale * logitGrad;
        }
        *reinterpret_cast<uint2 *>(keptProbabilities + r * s.keys + j) =
            roundedQuad(make_float4(kept[0], kept[1], kept[2], kept[3]));
        *reinterpret_cast<uint2 *>(scoreGrads + r * s.keys + j) =
            roundedQuad(make_float4(ds[0], ds[1], ds[2], ds[3]));
      }
    }
  }
}

} // namespace tgc::cuda

#endif // TGC_RUNTIME_CUDA_ATTENTIONBF16KERNELS_CUH
