//===- Attention.cu - attention on batched GEMMs ---------------------===//
//
// Per group of heads (AttentionScores.cuh): scores = q k^T (one batched
// GEMM), then a warp per row adds the masks, takes lse = max + log sum e^s
// and leaves p f = e^(s - max) / sum times the dropout factor in place (the
// normalizer is the undropped sum, as in the CPU kernel: dropout multiplies
// the probabilities after the softmax), then out = (p f) v (one more).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cuda/AttentionKernels.cuh"
#include "runtime/kernels/cuda/FusedAttention.h"

namespace tgc::cuda {

__global__ void widenKernel(const Bf16 *input, float *out, int64_t count) {
  TGC_GRID_STRIDE(i, count) { out[i] = runtime::widen(input[i]); }
}

const float *groupValues(const Bf16 *x, int64_t first, int64_t count,
                         float *scratch) {
  if (count > 0) {
    widenKernel<<<blocksFor(count), kThreads, 0, stream()>>>(x + first,
                                                             scratch, count);
    TGC_CUDA_CHECK_LAUNCH();
  }
  return scratch;
}

WidenedInputs::WidenedInputs(const Bf16 *q, const Bf16 *k, const Bf16 *v,
                             const AttentionShape &s)
    : memory(s.batch * s.heads *
             (s.queries * s.keyDim + s.keys * (s.keyDim + s.valueDim)) *
             sizeof(float)) {
  const int64_t heads = s.batch * s.heads, qs = heads * s.queries * s.keyDim,
                ks = heads * s.keys * s.keyDim,
                vs = heads * s.keys * s.valueDim;
  float *widened = memory.as<float>();
  if (memory.failed()) {
    this->q = this->k = this->v = nullptr;
    return; // the caller sees memory.failed()
  }
  this->q = groupValues(q, 0, qs, widened);
  this->k = groupValues(k, 0, ks, widened + qs);
  this->v = groupValues(v, 0, vs, widened + qs + ks);
}

template <typename T>
static void attentionOf(const T *q, const T *k, const T *v, float *out,
                        float *lse, const AttentionShape &s,
                        const AttentionConfig &config) {
  // bf16_products takes bf16 inputs and attentionBf16Products.
  if (config.bf16Products) {
    TGC_CUDA_CHECK(cudaErrorNotSupported);
    return;
  }
  noteUnfusedAttention(s, config);
  const int64_t heads = s.batch * s.heads;
  if (heads == 0 || s.queries == 0)
    return;
  const int64_t qs = s.queries * s.keyDim, ks = s.keys * s.keyDim,
                vs = s.keys * s.valueDim, scores = s.queries * s.keys;
  if constexpr (!std::is_same_v<T, float>) {
    if (s.sequenceMajor) {
      WidenedInputs widened(q, k, v, s);
      if (widened.memory.failed())
        return;
      attentionOf(widened.q, widened.k, widened.v, out, lse, s, config);
      return;
    }
  }
  const int64_t group =
      headsPerGroup(heads, scores + widenedFloats<T>(qs + ks + vs));
  Scratch scratch(group * (scores + widenedFloats<T>(qs + ks + vs)) *
                  sizeof(float));
  if (scratch.failed())
    return; // no scratch: the error is kept (firstError), nothing runs
  float *p = scratch.as<float>(), *widened = p + group * scores;
  // Sequence-major (f32 here: see above): every operand through pointers.
  HeadPointers table(s.sequenceMajor ? 4 * heads + group : 0);
  const Heads<float> scoreHeads =
      table.add(p, packedHeads(s.queries, s.keys), group);
  const Heads<float> outHeads =
      table.add(out, tensorHeads(s, s.queries, s.valueDim), heads);
  // f32 tensors are read in place, bf16 ones through the group's widened copy.
  Heads<const T> qh = table.add(q, tensorHeads(s, s.queries, s.keyDim), heads),
                 kh = table.add(k, tensorHeads(s, s.keys, s.keyDim), heads),
                 vh = table.add(v, tensorHeads(s, s.keys, s.valueDim), heads);
  table.fill();
  if (table.failed())
    return;
  for (int64_t first = 0; first < heads; first += group) {
    const int64_t n = std::min(group, heads - first);
    headsMatmul(groupHeads(qh, first, n, s.queries, s.keyDim, widened),
                groupHeads(kh, first, n, s.keys, s.keyDim, widened + n * qs),
                scoreHeads, n, s.queries, s.keys, s.keyDim, false, true);
    softmaxScoresKernel<<<blocksFor(n * s.queries * 32), kThreads, 0,
                          stream()>>>(p, lse, s, config, first, n * s.queries);
    TGC_CUDA_CHECK_LAUNCH();
    headsMatmul(readOnly(scoreHeads),
                groupHeads(vh, first, n, s.keys, s.valueDim,
                           widened + n * (qs + ks)),
                outHeads.from(first), n, s.queries, s.valueDim, s.keys, false,
                false);
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
  if (config.bf16Products)
    attentionBf16Products(q, k, v, out, lse, shape, config);
  else
    attentionOf(q, k, v, out, lse, shape, config);
}

void attention(const Bf16 *q, const Bf16 *k, const Bf16 *v, Bf16 *out,
               float *lse, const AttentionShape &shape,
               const AttentionConfig &config) {
  // A bf16 output comes only with bf16 products (tg-fold-bf16-roundings).
  if (!config.bf16Products) {
    TGC_CUDA_CHECK(cudaErrorNotSupported);
    return;
  }
  attentionBf16Products(q, k, v, out, lse, shape, config);
}

} // namespace tgc::cuda
