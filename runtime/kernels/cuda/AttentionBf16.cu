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
#include "runtime/kernels/cuda/AttentionBf16Kernels.cuh"
#include "runtime/kernels/cuda/FusedAttention.h"

namespace tgc::cuda {

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
