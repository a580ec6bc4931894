//===- AttentionTile.cuh - what the attention kernels share ---*- CUDA -*-===//
//
// Internal to TgcCudaKernels. Scores as the CPU kernel and the reference:
//   s_ij = scale q_i.k_j + mask[b, j] + (causal && j > i ? kMaskedScore : 0)
// computed for one tile of kQueryBlock queries x kKeyBlock keys at a time in
// shared memory: a warp takes a query row, its lanes one key each.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CUDA_ATTENTIONTILE_CUH
#define TGC_RUNTIME_CUDA_ATTENTIONTILE_CUH

#include "runtime/kernels/cuda/BlockReduce.cuh"
#include "runtime/kernels/cuda/Device.h"

namespace tgc::cuda {

/// Queries per block: the CPU kernel's block, so that causal attention
/// skips the same keys. Keys per tile: one per lane of a warp.
inline constexpr int kQueryBlock = 16, kKeyBlock = 32;
inline constexpr int kAttentionWarps = 4;
inline constexpr int kAttentionThreads = 32 * kAttentionWarps;

/// One (b, h): its rows of q, k, v (f32, or bf16 from tg-mixed-precision)
/// and its mask row (or null).
template <typename T> struct Head {
  const T *q, *k, *v;
  const float *mask;
  int64_t bh;
};

template <typename T>
__device__ inline Head<T> headOf(const T *q, const T *k, const T *v,
                                 const AttentionShape &s,
                                 const AttentionConfig &config, int64_t bh) {
  return {q + bh * s.queries * s.keyDim, k + bh * s.keys * s.keyDim,
          v + bh * s.keys * s.valueDim,
          config.mask ? config.mask + (bh / s.heads) * s.keys : nullptr, bh};
}

/// Keys from this one on are causally masked for every query of the block
/// starting at i0 with nq rows: the CPU kernel never visits them.
__device__ inline int64_t keyEnd(const AttentionShape &s,
                                 const AttentionConfig &config, int64_t i0,
                                 int64_t nq) {
  return config.causal ? min(s.keys, config.causalOffset + i0 + nq) : s.keys;
}

__device__ inline float toFloat(float x) { return x; }
__device__ inline float toFloat(Bf16 x) { return runtime::widen(x); }

/// Copies `count` rows of `width` values (contiguous in global memory) to
/// shared memory rows of floats `stride` apart; bf16 values are widened
/// exactly, so the f32 arithmetic after is that of the rounded values (the
/// CPU kernel's and the interpreter's). The whole block calls.
template <typename T>
__device__ inline void loadRows(float *tile, int stride, const T *rows,
                                int width, int count) {
  for (int e = threadIdx.x; e < count * width; e += blockDim.x)
    tile[(e / width) * stride + e % width] = toFloat(rows[e]);
}

__device__ inline float dot(const float *a, const float *b, int n) {
  float sum = 0.0f;
  for (int c = 0; c < n; ++c)
    sum += a[c] * b[c];
  return sum;
}

/// s_ij from the query's and the key's rows in shared memory.
template <typename T>
__device__ inline float score(const float *queryRow, const float *keyRow,
                              int keyDim, const AttentionConfig &config,
                              const Head<T> &head, int64_t query, int64_t key) {
  float s = config.scale * dot(queryRow, keyRow, keyDim);
  if (head.mask)
    s += head.mask[key];
  if (config.causal && key > config.causalOffset + query)
    s += kMaskedScore;
  return s;
}

/// The dropout factor of probability (query, key): index flat into
/// [B, H, Sq, Sk].
template <typename T>
__device__ inline float probabilityFactor(const AttentionShape &s,
                                          const AttentionConfig &config,
                                          const Head<T> &head, int64_t query,
                                          int64_t key) {
  uint64_t index =
      static_cast<uint64_t>((head.bh * s.queries + query) * s.keys + key);
  return config.dropout.factor(index);
}

/// Lets `kernel` use `bytes` of dynamic shared memory (beyond 48 KiB only
/// on request).
template <typename Kernel>
void allowSharedMemory(Kernel kernel, size_t bytes) {
  constexpr size_t kDefaultLimit = 48 * 1024;
  if (bytes > kDefaultLimit)
    TGC_CUDA_CHECK(cudaFuncSetAttribute(
        kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
        static_cast<int>(bytes)));
}

} // namespace tgc::cuda

#endif // TGC_RUNTIME_CUDA_ATTENTIONTILE_CUH
