//===- AttentionBf16.cu - attention with bf16 products (tensor cores) -===//
//
// tg.attention and tg.attention_grad with bf16_products: the same groups of
// heads and batched GEMMs as Attention.cu and AttentionGrad.cu, but every
// product runs on bf16 operands with f32 accumulation (cublasGemmEx on
// CUDA_R_16BF), and the f32 operands are rounded where the CPU kernels and
// the reference round them (runtime/kernels/reference/Attention.cpp):
//   forward:  out_i = sum_j r(e_ij f_ij) v_j / l_i, e = exp(s - max_i),
//             l_i = sum_j e_ij (undropped), lse_i = max_i + log l_i;
//   backward: dp = f (r(dO_i) . v_j), D_i = sum_j p dp (from the rounded dO,
//             as the CPU), ds = r(scale p (dp - D_i)),
//             dv = r(p f)^T r(dO), dq = ds k, dk = ds^T q.
// q, k and v are bf16 already and read in place. The probabilities and
// score gradients are rounded by the row kernels into bf16 scratch next to
// the f32 scores (not in place: another thread may still read a score the
// rounded value would overwrite). The output and the gradients are written
// in f32, or rounded once to bf16 where tg-fold-bf16-roundings made them
// bf16 (as the CPU kernels write them).
// Where the keys come in whole quads (a multiple of 4, up to 512), the row
// kernels hold each lane's runs of 4 adjacent keys in registers and take
// their 4 dropout factors from one Philox block (Dropout::factors4), where
// the general kernels draw a block per factor (twice in the backward).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cuda/AttentionScores.cuh"
#include "runtime/kernels/cuda/Bf16Quads.cuh"
#include "runtime/kernels/cuda/FusedAttention.h"

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
static int quadLanesPerRow(const AttentionShape &s,
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

/// The rounded probabilities of a group's rows: by quads where they apply.
static void roundProbabilities(float *scores, Bf16 *probabilities,
                               float *rowScale, float *lse,
                               const AttentionShape &s,
                               const AttentionConfig &config,
                               int64_t firstHead, int64_t rows) {
  switch (quadLanesPerRow(s, config)) {
  case 16:
    roundedProbabilityQuadsKernel<16><<<blocksFor(rows * 16), kThreads, 0, stream()>>>(
        scores, probabilities, rowScale, lse, s, config, firstHead, rows);
    break;
  case 32:
    roundedProbabilityQuadsKernel<32><<<blocksFor(rows * 32), kThreads, 0, stream()>>>(
        scores, probabilities, rowScale, lse, s, config, firstHead, rows);
    break;
  default:
    roundedProbabilitiesKernel<<<blocksFor(rows * 32), kThreads, 0, stream()>>>(
        scores, probabilities, rowScale, lse, s, config, firstHead, rows);
  }
  TGC_CUDA_CHECK_LAUNCH();
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

template <typename Out>
void attentionBf16Products(const Bf16 *q, const Bf16 *k, const Bf16 *v,
                           Out *out, float *lse, const AttentionShape &s,
                           const AttentionConfig &config) {
  if (fusedAttention(q, k, v, out, lse, s, config))
    return;
  const int64_t heads = s.batch * s.heads;
  if (heads == 0 || s.queries == 0)
    return;
  const int64_t os = s.queries * s.valueDim, scores = s.queries * s.keys;
  // Per head: the f32 scores, their rounded probabilities (half as many
  // floats), a scale per row and, unless the output is f32 head-major (then
  // scaled in place), its f32 sums.
  constexpr bool roundedOutput = std::is_same_v<Out, Bf16>;
  const bool sumsInScratch = roundedOutput || s.sequenceMajor;
  const int64_t sumFloats = sumsInScratch ? os : 0;
  const int64_t group =
      headsPerGroup(heads, scores + scores / 2 + s.queries + sumFloats);
  Scratch scoreScratch(group * scores * sizeof(float)),
      probabilityScratch(group * scores * sizeof(Bf16)),
      scaleScratch(group * s.queries * sizeof(float)),
      sumScratch(group * sumFloats * sizeof(float));
  if (scoreScratch.failed() || probabilityScratch.failed() ||
      scaleScratch.failed() || sumScratch.failed())
    return; // no scratch: the error is kept (firstError), nothing runs
  float *f32Scores = scoreScratch.as<float>(),
        *rowScale = scaleScratch.as<float>();
  Bf16 *probabilities = probabilityScratch.as<Bf16>();
  // Sequence-major: every operand through pointers.
  HeadPointers table(s.sequenceMajor ? 3 * heads + 3 * group : 0);
  const Heads<const Bf16>
      qh = table.add(q, tensorHeads(s, s.queries, s.keyDim), heads),
      kh = table.add(k, tensorHeads(s, s.keys, s.keyDim), heads),
      vh = table.add(v, tensorHeads(s, s.keys, s.valueDim), heads);
  const Heads<float> scoreHeads =
      table.add(f32Scores, packedHeads(s.queries, s.keys), group);
  const Heads<const Bf16> probabilityHeads = table.add(
      static_cast<const Bf16 *>(probabilities), packedHeads(s.queries, s.keys),
      group);
  const HeadLayout outLayout = tensorHeads(s, s.queries, s.valueDim);
  // The sums: scratch, or the f32 head-major output itself.
  Heads<float> sumHeads = table.add(sumScratch.as<float>(),
                                    packedHeads(s.queries, s.valueDim), group);
  if constexpr (!roundedOutput)
    if (!sumsInScratch)
      sumHeads = {out, outLayout};
  table.fill();
  if (table.failed())
    return;
  for (int64_t first = 0; first < heads; first += group) {
    const int64_t n = std::min(group, heads - first), rows = n * s.queries;
    const Heads<float> sums = sumsInScratch ? sumHeads : sumHeads.from(first);
    headsMatmul(qh.from(first), kh.from(first), scoreHeads, n, s.queries,
                s.keys, s.keyDim, false, true);
    roundProbabilities(f32Scores, probabilities, rowScale, lse, s, config,
                       first, rows);
    headsMatmul(probabilityHeads, vh.from(first), sums, n, s.queries,
                s.valueDim, s.keys, false, false);
    scaleRowsKernel<<<blocksFor(rows * 32), kThreads, 0, stream()>>>(
        sums.at(0), Heads<Out>{out, outLayout, first}, rowScale, s.queries,
        rows, s.valueDim);
    TGC_CUDA_CHECK_LAUNCH();
  }
}

template void attentionBf16Products(const Bf16 *, const Bf16 *, const Bf16 *,
                                    float *, float *, const AttentionShape &,
                                    const AttentionConfig &);
template void attentionBf16Products(const Bf16 *, const Bf16 *, const Bf16 *,
                                    Bf16 *, float *, const AttentionShape &,
                                    const AttentionConfig &);

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
    const float rowLse = lse[lseIndex(s, bh, query)];
    const float *product = products + r * s.keys,
                *dOv = outGrads + r * s.keys; // r(dO_i) . v_j
    auto probability = [&](int64_t j) {
      return expf(maskedScore(product[j], s, config, bh, query, j) - rowLse);
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
    const float rowLse = lse[lseIndex(s, bh, query)];
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
          p[t][q] = expf(maskedScore(product[q], s, config, bh, query, j + q) -
                         rowLse);
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

/// The rounded operands of a group's gradient GEMMs: by quads where they
/// apply.
static void roundScoreGrads(const float *products, const float *outGrads,
                            const float *lse, Bf16 *kept, Bf16 *scoreGrads,
                            const AttentionShape &s,
                            const AttentionConfig &config, int64_t firstHead,
                            int64_t rows) {
  switch (quadLanesPerRow(s, config)) {
  case 16:
    roundedScoreGradQuadsKernel<16><<<blocksFor(rows * 16), kThreads, 0, stream()>>>(
        products, outGrads, lse, kept, scoreGrads, s, config, firstHead, rows);
    break;
  case 32:
    roundedScoreGradQuadsKernel<32><<<blocksFor(rows * 32), kThreads, 0, stream()>>>(
        products, outGrads, lse, kept, scoreGrads, s, config, firstHead, rows);
    break;
  default:
    roundedScoreGradsKernel<<<blocksFor(rows * 32), kThreads, 0, stream()>>>(
        products, outGrads, lse, kept, scoreGrads, s, config, firstHead, rows);
  }
  TGC_CUDA_CHECK_LAUNCH();
}

template <typename G>
void attentionGradBf16Products(const float *grad, const Bf16 *q, const Bf16 *k,
                               const Bf16 *v, G *dq, G *dk, G *dv,
                               const float *lse, const AttentionShape &s,
                               const AttentionConfig &config) {
  if (fusedAttentionGrad(grad, q, k, v, dq, dk, dv, lse, s, config))
    return;
  const int64_t heads = s.batch * s.heads;
  if (heads == 0)
    return;
  const int64_t os = s.queries * s.valueDim, scores = s.queries * s.keys;
  clearBiasGrad(s, config);
  // dO rounded once, whole; per head: two f32 score matrices and two
  // rounded ones, each GEMM operand in its own allocation (aligned for the
  // tensor cores).
  const int64_t group = headsPerGroup(heads, 3 * scores);
  Scratch gradScratch(heads * os * sizeof(Bf16)),
      productScratch(group * scores * sizeof(float)),
      outGradScratch(group * scores * sizeof(float)),
      keptScratch(group * scores * sizeof(Bf16)),
      scoreGradScratch(group * scores * sizeof(Bf16));
  if (gradScratch.failed() || productScratch.failed() ||
      outGradScratch.failed() || keptScratch.failed() ||
      scoreGradScratch.failed())
    return; // no scratch: the error is kept (firstError), nothing runs
  float *products = productScratch.as<float>(),
        *outGrads = outGradScratch.as<float>();
  Bf16 *kept = keptScratch.as<Bf16>(),
       *scoreGrads = scoreGradScratch.as<Bf16>(),
       *roundedGrad = gradScratch.as<Bf16>();
  toBf16(grad, roundedGrad, heads * os);
  // Sequence-major: every operand through pointers.
  HeadPointers table(s.sequenceMajor ? 7 * heads + 4 * group : 0);
  const HeadLayout scoreLayout = packedHeads(s.queries, s.keys);
  const Heads<const Bf16>
      qh = table.add(q, tensorHeads(s, s.queries, s.keyDim), heads),
      kh = table.add(k, tensorHeads(s, s.keys, s.keyDim), heads),
      vh = table.add(v, tensorHeads(s, s.keys, s.valueDim), heads),
      dOHeads = table.add(static_cast<const Bf16 *>(roundedGrad),
                          tensorHeads(s, s.queries, s.valueDim), heads),
      keptHeads = table.add(static_cast<const Bf16 *>(kept), scoreLayout, group),
      scoreGradHeads = table.add(static_cast<const Bf16 *>(scoreGrads),
                                 scoreLayout, group);
  const Heads<float> productHeads = table.add(products, scoreLayout, group),
                     outGradHeads = table.add(outGrads, scoreLayout, group);
  const Heads<G> dqHeads = table.add(dq, tensorHeads(s, s.queries, s.keyDim), heads),
                 dkHeads = table.add(dk, tensorHeads(s, s.keys, s.keyDim), heads),
                 dvHeads = table.add(dv, tensorHeads(s, s.keys, s.valueDim), heads);
  table.fill();
  if (table.failed())
    return;
  for (int64_t first = 0; first < heads; first += group) {
    const int64_t n = std::min(group, heads - first), rows = n * s.queries;
    const Heads<const Bf16> qg = qh.from(first), kg = kh.from(first),
                            dO = dOHeads.from(first);
    headsMatmul(qg, kg, productHeads, n, s.queries, s.keys, s.keyDim, false,
                true);
    headsMatmul(dO, vh.from(first), outGradHeads, n, s.queries, s.keys,
                s.valueDim, false, true);
    roundScoreGrads(products, outGrads, lse, kept, scoreGrads, s, config,
                    first, rows);
    headsMatmul(keptHeads, dO, dvHeads.from(first), n, s.keys, s.valueDim,
                s.queries, true, false);
    headsMatmul(scoreGradHeads, kg, dqHeads.from(first), n, s.queries,
                s.keyDim, s.keys, false, false);
    headsMatmul(scoreGradHeads, qg, dkHeads.from(first), n, s.keys, s.keyDim,
                s.queries, true, false);
  }
}

template void attentionGradBf16Products(const float *, const Bf16 *,
                                        const Bf16 *, const Bf16 *, float *,
                                        float *, float *, const float *,
                                        const AttentionShape &,
                                        const AttentionConfig &);
template void attentionGradBf16Products(const float *, const Bf16 *,
                                        const Bf16 *, const Bf16 *, Bf16 *,
                                        Bf16 *, Bf16 *, const float *,
                                        const AttentionShape &,
                                        const AttentionConfig &);

} // namespace tgc::cuda
