//===- FusedAttention.h - which attention calls run fused -------*- C++ -*-===//
//
// Internal to TgcCudaKernels (and its CPU unit test, which includes it for
// the rule below): attention with bf16 products as one kernel for the
// forward and two for the backward (FusedAttentionKernels.cuh, launched by
// FusedAttention.cu), in place of AttentionBf16.cu's batched GEMMs and row
// kernels, where the shape allows and setFusedAttention(true) asked for it.
// Plain C++.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CUDA_FUSEDATTENTION_H
#define TGC_RUNTIME_CUDA_FUSEDATTENTION_H

#include "runtime/kernels/KernelTypes.h"

#include <cstdint>

namespace tgc::cuda {

using runtime::AttentionConfig;
using runtime::AttentionShape;
using runtime::Bf16;

/// Rows of queries (or keys) a block of the fused kernels owns: four warps
/// of 16 rows, one tensor-core tile high each. The keys (or queries) stream
/// past in tiles of as many rows.
inline constexpr int64_t kFusedTileRows = 64;
/// The largest grid dimension the tiles go on (CUDA's limit for y).
inline constexpr int64_t kFusedMaxTiles = 65535;

/// The width of the tiles a head of `width` columns goes in: the kernels
/// are built for 16, 32, 64 and 128 (multiples of the tensor-core tile),
/// and narrower heads are padded with zeros.
TGC_HOST_DEVICE inline int fusedTileWidth(int64_t width) {
  return width <= 16 ? 16 : width <= 32 ? 32 : width <= 64 ? 64 : 128;
}

/// Why the fused kernels cannot compute this call, or null when they can:
/// they take bf16 products, one head width for keys and values, a multiple
/// of 8 up to 128 (rows in whole 16-byte pieces), no score bias (its
/// gradient would need atomics or a pass of its own) and some keys. The
/// pointers' alignment is checked at the call.
inline const char *fusedAttentionMisfit(const AttentionShape &s,
                                        const AttentionConfig &config) {
  const int64_t width = s.keyDim;
  if (!config.bf16Products)
    return "its products are f32";
  if (width <= 0 || width > 128 || width % 8 != 0)
    return "its head width is not a multiple of 8 up to 128";
  if (s.valueDim != width)
    return "its values are not as wide as its keys";
  if (config.bias || config.biasGrad)
    return "it adds a score bias";
  if (s.keys <= 0)
    return "it has no keys";
  if (config.causal && config.causalOffset < 0)
    return "its causal mask hides the first keys from its first queries";
  if ((s.queries + kFusedTileRows - 1) / kFusedTileRows > kFusedMaxTiles ||
      (s.keys + kFusedTileRows - 1) / kFusedTileRows > kFusedMaxTiles)
    return "it has more rows than the grid takes";
  return nullptr;
}

inline bool fusedAttentionFits(const AttentionShape &s,
                               const AttentionConfig &config) {
  return fusedAttentionMisfit(s, config) == nullptr;
}

/// The first query tile that sees any key of the key tile starting at
/// `firstKey` (a causal mask hides key j from queries before j - offset):
/// the backward's key blocks skip the tiles before it.
TGC_HOST_DEVICE inline int64_t
firstVisibleQueryTile(const AttentionConfig &config, int64_t firstKey) {
  if (!config.causal)
    return 0;
  const int64_t firstQuery = firstKey - config.causalOffset;
  return firstQuery <= 0 ? 0 : firstQuery / kFusedTileRows * kFusedTileRows;
}

/// The keys a block of queries from `firstQuery` on attends over: all, or
/// with a causal mask up to its last query's position, as the CPU kernel
/// bounds them (the later ones are hidden from every row, and would add
/// exp(-1e9) = 0; a decoder's step sees no key past its own position).
TGC_HOST_DEVICE inline int64_t visibleKeyEnd(const AttentionShape &s,
                                             const AttentionConfig &config,
                                             int64_t firstQuery) {
  if (!config.causal)
    return s.keys;
  const int64_t rowEnd = firstQuery + kFusedTileRows < s.queries
                             ? firstQuery + kFusedTileRows
                             : s.queries;
  const int64_t end = config.causalOffset + rowEnd;
  return end < s.keys ? end : s.keys;
}

/// The fused forward and backward, when they apply (fusedAttentionFits,
/// aligned pointers, setFusedAttention(true)); false without enqueuing
/// anything otherwise. Out and G: float or Bf16.
template <typename Out>
bool fusedAttention(const Bf16 *q, const Bf16 *k, const Bf16 *v, Out *out,
                    float *lse, const AttentionShape &s,
                    const AttentionConfig &config);
template <typename G>
bool fusedAttentionGrad(const float *grad, const Bf16 *q, const Bf16 *k,
                        const Bf16 *v, G *dq, G *dk, G *dv, const float *lse,
                        const AttentionShape &s, const AttentionConfig &config);

/// Where the fused kernels were asked for, says once why an attention
/// without bf16 products runs on the GEMMs (which never ask the fused
/// kernels: they take bf16 operands).
void noteUnfusedAttention(const AttentionShape &s,
                          const AttentionConfig &config);

/// How many attention calls so far the fused kernels ran (forward and
/// backward counted apart); tests read it.
int64_t fusedAttentionCalls();

} // namespace tgc::cuda

#endif // TGC_RUNTIME_CUDA_FUSEDATTENTION_H
