//===- AttentionScores.cuh - what the attention kernels share --*- CUDA -*-===//
//
// Internal to TgcCudaKernels. Attention as the CPU kernel computes it, with
// its products on cuBLAS: the heads go in groups, and each group's scores
// [heads, Sq, Sk] are one batched GEMM into scratch, which row kernels turn
// into probabilities, and more batched GEMMs take from there. Scores as the
// CPU kernel and the reference:
//   s_ij = scale q_i.k_j + bias[b, h, i, j] + mask[b, j]
//          + (causal && j > offset + i ? kMaskedScore : 0)
// bf16 queries, keys and values (tg-mixed-precision) are widened to f32
// first, exactly: the products are those of the rounded values, as on the
// CPU. With bf16_products the products run on bf16 operands instead
// (AttentionBf16.cu).
// Head-major tensors [B, H, S, D] hold each head's matrix in one piece, a
// fixed distance apart: strided batched GEMMs. Sequence-major ones [B, S, H,
// D] (tg-fold-head-transposes) hold head (b, h) at b S H D + h D with rows
// H D apart: batched GEMMs over per-head pointers (headsMatmul), and the row
// kernels find the lse and output rows through HeadLayout and lseIndex.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CUDA_ATTENTIONSCORES_CUH
#define TGC_RUNTIME_CUDA_ATTENTIONSCORES_CUH

#include "runtime/kernels/cuda/BlockReduce.cuh"
#include "runtime/kernels/cuda/Device.h"

#include <algorithm>
#include <type_traits>

namespace tgc::cuda {

/// Scratch floats a group of heads may take (64 MiB): a base batch's 3072
/// heads of 64 x 64 scores go in two groups, long sequences in more.
inline constexpr int64_t kGroupFloats = int64_t(16) << 20;

/// Heads per group when each takes `floatsPerHead` of scratch.
inline int64_t headsPerGroup(int64_t heads, int64_t floatsPerHead) {
  return std::clamp<int64_t>(kGroupFloats / std::max<int64_t>(floatsPerHead, 1),
                             1, heads);
}

/// f32 values of each head's q, k or v: the extra scratch floats per head
/// (none for f32 inputs, read in place).
template <typename T> constexpr int64_t widenedFloats(int64_t perHead) {
  return std::is_same_v<T, float> ? 0 : perHead;
}

/// `count` values from `first` on as f32: `x` itself, or bf16 widened into
/// `scratch` (stream-ordered: ready for the GEMMs queued after).
inline const float *groupValues(const float *x, int64_t first, int64_t,
                                float *) {
  return x + first;
}
const float *groupValues(const Bf16 *x, int64_t first, int64_t count,
                         float *scratch);

/// Sequence-major bf16 q, k and v without bf16_products, widened whole to
/// f32 (their heads are not contiguous per group, so groupValues cannot
/// widen a group's): the f32 kernels attend over these.
struct WidenedInputs {
  Scratch memory;
  const float *q, *k, *v;
  WidenedInputs(const Bf16 *q, const Bf16 *k, const Bf16 *v,
                const AttentionShape &s);
};

/// tg.attention and tg.attention_grad with bf16_products (AttentionBf16.cu);
/// Out and G, the output's and the gradients' type: float or Bf16.
template <typename Out>
void attentionBf16Products(const Bf16 *q, const Bf16 *k, const Bf16 *v,
                           Out *out, float *lse, const AttentionShape &s,
                           const AttentionConfig &config);
template <typename G>
void attentionGradBf16Products(const float *grad, const Bf16 *q,
                               const Bf16 *k, const Bf16 *v, G *dq, G *dk,
                               G *dv, const float *lse, const AttentionShape &s,
                               const AttentionConfig &config);

/// Where head bh's [rows, width] matrix starts in a tensor (elements from
/// its start) and how far apart its rows are.
struct HeadLayout {
  int64_t heads, batchStride, headStride, rowStride;
  __host__ __device__ int64_t offset(int64_t bh) const {
    return bh / heads * batchStride + bh % heads * headStride;
  }
  /// Every head's [rows, width] matrix in one piece, one after another.
  bool packed(int64_t rows, int64_t width) const {
    return heads == 1 && rowStride == width && batchStride == rows * width;
  }
};

/// A group's scratch, or a head-major tensor: the heads' matrices packed.
inline HeadLayout packedHeads(int64_t rows, int64_t width) {
  return {1, rows * width, 0, width};
}

/// q, k, v, the output or a gradient of shape `s` ([rows, width] a head).
inline HeadLayout tensorHeads(const AttentionShape &s, int64_t rows,
                              int64_t width) {
  if (!s.sequenceMajor)
    return packedHeads(rows, width);
  return {s.heads, rows * s.heads * width, width, s.heads * width};
}

/// The lse's index of (bh, query): [B, H, Sq], or [B, Sq, H] sequence-major.
__host__ __device__ inline int64_t lseIndex(const AttentionShape &s,
                                            int64_t bh, int64_t query) {
  if (!s.sequenceMajor)
    return bh * s.queries + query;
  return (bh / s.heads * s.queries + query) * s.heads + bh % s.heads;
}

/// The matrices of heads first, first + 1, ... of a tensor or scratch;
/// with `pointers` (HeadPointers), a device array of every head's matrix.
template <typename T> struct Heads {
  T *base;
  HeadLayout layout;
  int64_t first = 0;
  T *const *pointers = nullptr;
  __host__ __device__ T *at(int64_t i) const {
    return base + layout.offset(first + i);
  }
  /// The same matrices from head `head` on.
  Heads from(int64_t head) const { return {base, layout, head, pointers}; }
};

/// `heads` as a GEMM operand that is read.
template <typename T> Heads<const T> readOnly(const Heads<T> &heads) {
  return {heads.base, heads.layout, heads.first, heads.pointers};
}

/// One attention call's per-head matrix pointers, for the batched GEMMs over
/// sequence-major heads (not evenly spaced): `add` each operand, then
/// `fill` writes every pointer with one kernel. Inactive (no pointers, no
/// launch) for head-major calls, whose GEMMs are strided.
class HeadPointers {
public:
  static constexpr int kMaxOperands = 12;
  /// Room for `entries` pointers in all, or inactive when 0.
  explicit HeadPointers(int64_t entries)
      : table(entries * sizeof(void *)), capacity(entries) {}

  /// `count` heads' matrices of the tensor or scratch at `base`.
  template <typename T>
  Heads<T> add(T *base, HeadLayout layout, int64_t count) {
    Heads<T> heads{base, layout};
    if (capacity > 0)
      heads.pointers = static_cast<T *const *>(static_cast<const void *>(
          reserve(const_cast<void *>(static_cast<const void *>(base)),
                  sizeof(T), layout, count)));
    return heads;
  }
  void fill();
  /// Its table's scratch could not be had: the call must not run.
  bool failed() const { return table.failed(); }

  struct Operand {
    char *base;
    int64_t elementBytes, count, firstEntry;
    HeadLayout layout;
  };
  struct Operands {
    Operand operand[kMaxOperands];
    int size = 0;
    int64_t entries = 0;
  };

private:
  void *const *reserve(void *base, size_t elementBytes, HeadLayout layout,
                       int64_t count);
  Scratch table;
  int64_t capacity;
  Operands operands;
};

/// Heads [first, first + n) of q, k or v (rows x width a head) as f32: an
/// f32 tensor's own, a bf16 one's widened into `scratch` (packed).
template <typename T>
Heads<const float> groupHeads(const Heads<const T> &x, int64_t first,
                              int64_t n, int64_t rows, int64_t width,
                              float *scratch) {
  if constexpr (std::is_same_v<T, float>)
    return x.from(first);
  else
    return {groupValues(x.base, first * rows * width, n * rows * width,
                        scratch),
            packedHeads(rows, width)};
}

/// out[i] = op(a[i]) op(b[i]) for the n heads i (row-major [m, k] x [k, cols]
/// after the transposes): matmul's strided batched GEMM where all three are
/// packed, else one over the HeadPointers arrays (AttentionHeads.cu).
template <typename T, typename Out>
void headsMatmul(Heads<const T> a, Heads<const T> b, Heads<Out> out,
                 int64_t n, int64_t m, int64_t cols, int64_t k,
                 bool transposeA, bool transposeB);

/// Where score (query, key) of head bh is in the score bias and its
/// gradient (KernelTypes.h: a stride 0 along a broadcast dimension).
__device__ inline int64_t biasIndex(const AttentionShape &s,
                                    const AttentionConfig &config, int64_t bh,
                                    int64_t query, int64_t key) {
  return bh / s.heads * config.biasBatchStride +
         bh % s.heads * config.biasHeadStride + query * s.keys + key;
}

/// Adds the gradient of score (query, key) before the scale into the bias
/// gradient, when there is one. Atomic: heads that share a broadcast bias
/// add into one element (in no fixed order, so such sums may differ in the
/// last bits from run to run).
__device__ inline void addBiasGrad(const AttentionShape &s,
                                   const AttentionConfig &config, int64_t bh,
                                   int64_t query, int64_t key,
                                   float logitGrad) {
  if (config.biasGrad)
    atomicAdd(config.biasGrad + biasIndex(s, config, bh, query, key),
              logitGrad);
}

/// Zeroes the bias gradient the backward's kernels add into, if any.
inline void clearBiasGrad(const AttentionShape &s,
                          const AttentionConfig &config) {
  if (!config.biasGrad)
    return;
  const int64_t size = s.queries * s.keys *
                       (config.biasHeadStride ? s.heads : 1) *
                       (config.biasBatchStride ? s.batch : 1);
  TGC_CUDA_CHECK(cudaMemsetAsync(config.biasGrad, 0, size * sizeof(float),
                                 stream()));
}

/// s_ij from the raw product q_i.k_j of head bh.
__device__ inline float maskedScore(float product, const AttentionShape &s,
                                    const AttentionConfig &config, int64_t bh,
                                    int64_t query, int64_t key) {
  float score = config.scale * product;
  if (config.bias)
    score += config.bias[biasIndex(s, config, bh, query, key)];
  if (config.mask)
    score += config.mask[(bh / s.heads) * s.keys + key];
  if (config.causal && key > config.causalOffset + query)
    score += kMaskedScore;
  return score;
}

/// A row kernel with a warp per row: `r` runs over [0, rows), every lane of
/// a warp on the same row (so the warp reductions see all 32 lanes).
#define TGC_FOR_WARP_ROW(r, rows)                                              \
  for (int64_t r = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) / 32;      \
       r < (rows); r += int64_t(gridDim.x) * (blockDim.x / 32))

/// Replaces row (query) of head bh's raw products q.k_j by its scores s_j,
/// lanes striding over the keys; returns the row's largest score (to every
/// lane).
__device__ inline float maskRowAndMax(float *row, const AttentionShape &s,
                                      const AttentionConfig &config,
                                      int64_t bh, int64_t query, int lane) {
  float max = -INFINITY;
  for (int64_t j = lane; j < s.keys; j += 32) {
    float score = maskedScore(row[j], s, config, bh, query, j);
    row[j] = score;
    max = fmaxf(max, score);
  }
  return warpReduce(max, MaxOp{});
}

/// How a backward row kernel gets the forward's probabilities back from a
/// row's scores: exp(s - shift) * scale. For most rows, exp(s - lse). A row
/// whose every key is masked has an lse of -1e9 + log(sum) that f32 rounds
/// to -1e9, so exp(s - lse) would weigh each of its keys 1: there shift and
/// scale are the row's maximum and 1 / sum, from its scores.
struct RowWeights {
  float shift, scale;
  __device__ float operator()(float score) const {
    return expf(score - shift) * scale;
  }
};

/// RowWeights of row (query) of head bh from its raw products q.k_j: the
/// kLanes lanes of the row (a warp, or a group of a warp) stride over the
/// keys. Every lane of the row calls; the branch is the row's, taken alike
/// by all of them.
template <int kLanes = 32>
__device__ RowWeights rowWeights(const float *products, const AttentionShape &s,
                                 const AttentionConfig &config, int64_t bh,
                                 int64_t query, float rowLse, int lane) {
  if (!everyKeyMasked(rowLse))
    return {rowLse, 1.0f};
  float max = -INFINITY;
  for (int64_t j = lane; j < s.keys; j += kLanes)
    max = fmaxf(max, maskedScore(products[j], s, config, bh, query, j));
  max = laneGroupReduce<kLanes>(max, MaxOp{});
  float sum = 0.0f;
  for (int64_t j = lane; j < s.keys; j += kLanes)
    sum += expf(maskedScore(products[j], s, config, bh, query, j) - max);
  sum = laneGroupReduce<kLanes>(sum, SumOp{});
  return {max, 1.0f / sum};
}

/// The dropout factor of probability (bh, query, key): index flat into
/// [B, H, Sq, Sk].
__device__ inline float probabilityFactor(const AttentionShape &s,
                                          const AttentionConfig &config,
                                          int64_t bh, int64_t query,
                                          int64_t key) {
  uint64_t index = static_cast<uint64_t>((bh * s.queries + query) * s.keys + key);
  return config.dropout.factor(index);
}

} // namespace tgc::cuda

#endif // TGC_RUNTIME_CUDA_ATTENTIONSCORES_CUH
