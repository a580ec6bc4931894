//===- AttentionGrad.cu - attention's gradient on batched GEMMs ------===//
//
// With p = exp(s - lse) recomputed from the forward's lse, f the dropout
// factor, dp = f (dO_i . v_j), D_i = dO_i . O_i (= sum_j p dp, the
// softmax's row term) and ds = scale p (dp - D_i):
//   dq = ds k,   dk = ds^T q,   dv = (p f)^T dO.
// Per group of heads (AttentionScores.cuh): q k^T and dO v^T are batched
// GEMMs into scratch, one row kernel (a warp a row) turns them into p f and ds,
// and three more batched GEMMs give dv, dq and dk. The same kernel adds
// p (dp - D_i) into a score bias's gradient.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cuda/AttentionGradKernels.cuh"

namespace tgc::cuda {

template <typename T>
static void attentionGradOf(const float *grad, const T *q, const T *k,
                            const T *v, const float *output, const float *lse,
                            float *dq, float *dk, float *dv,
                            const AttentionShape &s,
                            const AttentionConfig &config) {
  // bf16_products takes bf16 inputs and attentionGradBf16Products.
  if (config.bf16Products) {
    TGC_CUDA_CHECK(cudaErrorNotSupported);
    return;
  }
  const int64_t heads = s.batch * s.heads, rows = heads * s.queries;
  if (heads == 0)
    return;
  const int64_t qs = s.queries * s.keyDim, ks = s.keys * s.keyDim,
                vs = s.keys * s.valueDim, scores = s.queries * s.keys;
  if constexpr (!std::is_same_v<T, float>) {
    if (s.sequenceMajor) {
      WidenedInputs widened(q, k, v, s);
      if (widened.memory.failed())
        return;
      attentionGradOf(grad, widened.q, widened.k, widened.v, output, lse, dq,
                      dk, dv, s, config);
      return;
    }
  }
  const HeadLayout outputs = tensorHeads(s, s.queries, s.valueDim);
  clearBiasGrad(s, config);
  Scratch rowDot(rows * sizeof(float));
  if (rowDot.failed())
    return; // no scratch: the error is kept (firstError), nothing runs
  if (rows > 0) {
    rowDotKernel<<<blocksFor(rows * 32), kThreads, 0, stream()>>>(
        grad, output, rowDot.as<float>(), outputs, s.queries, rows,
        static_cast<int>(s.valueDim));
    TGC_CUDA_CHECK_LAUNCH();
  }
  const int64_t perHead = 2 * scores + widenedFloats<T>(qs + ks + vs);
  const int64_t group = headsPerGroup(heads, perHead);
  Scratch scratch(group * perHead * sizeof(float));
  if (scratch.failed())
    return; // no scratch: the error is kept (firstError), nothing runs
  float *pf = scratch.as<float>(), *ds = pf + group * scores,
        *widened = ds + group * scores;
  // Sequence-major (f32 here: see above): every operand through pointers.
  HeadPointers table(s.sequenceMajor ? 7 * heads + 2 * group : 0);
  const HeadLayout scoreLayout = packedHeads(s.queries, s.keys);
  const Heads<float> pfHeads = table.add(pf, scoreLayout, group),
                     dsHeads = table.add(ds, scoreLayout, group),
                     dqHeads = table.add(dq, tensorHeads(s, s.queries, s.keyDim), heads),
                     dkHeads = table.add(dk, tensorHeads(s, s.keys, s.keyDim), heads),
                     dvHeads = table.add(dv, tensorHeads(s, s.keys, s.valueDim), heads);
  const Heads<const float> dOHeads = table.add(grad, outputs, heads);
  // f32 tensors are read in place, bf16 ones through the group's widened copy.
  Heads<const T> qh = table.add(q, tensorHeads(s, s.queries, s.keyDim), heads),
                 kh = table.add(k, tensorHeads(s, s.keys, s.keyDim), heads),
                 vh = table.add(v, tensorHeads(s, s.keys, s.valueDim), heads);
  table.fill();
  if (table.failed())
    return;
  for (int64_t first = 0; first < heads; first += group) {
    const int64_t n = std::min(group, heads - first);
    const Heads<const float> qg = groupHeads(qh, first, n, s.queries,
                                             s.keyDim, widened),
                             kg = groupHeads(kh, first, n, s.keys, s.keyDim,
                                             widened + n * qs),
                             vg = groupHeads(vh, first, n, s.keys, s.valueDim,
                                             widened + n * (qs + ks)),
                             dO = dOHeads.from(first);
    headsMatmul(qg, kg, pfHeads, n, s.queries, s.keys, s.keyDim, false, true);
    headsMatmul(dO, vg, dsHeads, n, s.queries, s.keys, s.valueDim, false,
                true);
    scoreGradsKernel<<<blocksFor(n * s.queries * 32), kThreads, 0,
                       stream()>>>(pf, ds, lse, rowDot.as<float>(), s, config,
                                   first, n * s.queries);
    TGC_CUDA_CHECK_LAUNCH();
    headsMatmul(readOnly(pfHeads), dO, dvHeads.from(first), n, s.keys,
                s.valueDim, s.queries, true, false);
    headsMatmul(readOnly(dsHeads), kg, dqHeads.from(first), n, s.queries,
                s.keyDim, s.keys, false, false);
    headsMatmul(readOnly(dsHeads), qg, dkHeads.from(first), n, s.keys,
                s.keyDim, s.queries, true, false);
  }
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
  if (config.bf16Products)
    attentionGradBf16Products(grad, q, k, v, dq, dk, dv, lse, shape, config);
  else
    attentionGradOf(grad, q, k, v, output, lse, dq, dk, dv, shape, config);
}

/// The gradients with bf16 products whose forward output or gradients are
/// bf16 (tg-fold-bf16-roundings folds only those): the backward never reads
/// the output (its row term is sum_j p dp from the rounded dO).
template <typename G>
static void bf16ProductsGrad(const float *grad, const Bf16 *q, const Bf16 *k,
                             const Bf16 *v, const float *lse, G *dq, G *dk,
                             G *dv, const AttentionShape &shape,
                             const AttentionConfig &config) {
  if (!config.bf16Products) {
    TGC_CUDA_CHECK(cudaErrorNotSupported);
    return;
  }
  attentionGradBf16Products(grad, q, k, v, dq, dk, dv, lse, shape, config);
}

void attentionGrad(const float *grad, const Bf16 *q, const Bf16 *k,
                   const Bf16 *v, const float *, const float *lse, Bf16 *dq,
                   Bf16 *dk, Bf16 *dv, const AttentionShape &shape,
                   const AttentionConfig &config) {
  bf16ProductsGrad(grad, q, k, v, lse, dq, dk, dv, shape, config);
}

void attentionGrad(const float *grad, const Bf16 *q, const Bf16 *k,
                   const Bf16 *v, const Bf16 *, const float *lse, float *dq,
                   float *dk, float *dv, const AttentionShape &shape,
                   const AttentionConfig &config) {
  bf16ProductsGrad(grad, q, k, v, lse, dq, dk, dv, shape, config);
}

void attentionGrad(const float *grad, const Bf16 *q, const Bf16 *k,
                   const Bf16 *v, const Bf16 *, const float *lse, Bf16 *dq,
                   Bf16 *dk, Bf16 *dv, const AttentionShape &shape,
                   const AttentionConfig &config) {
  bf16ProductsGrad(grad, q, k, v, lse, dq, dk, dv, shape, config);
}

} // namespace tgc::cuda
