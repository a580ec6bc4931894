//===- FusedAttention.cu - the fused attention kernels' launches ---------===//
//
// tg.attention and tg.attention_grad with bf16_products on the kernels of
// FusedAttentionKernels.cuh (one launch forward, two backward) where
// setFusedAttention(true) asked for them and the call fits
// (fusedAttentionMisfit, aligned operands, shared memory); the first call
// that does not fit says why.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cuda/FusedAttentionKernels.cuh"

#include <algorithm>
#include <cstdio>

namespace tgc::cuda {
namespace {

using namespace fused;

//===--- Launches ---------------------------------------------------------===//

int64_t fusedCalls = 0;
bool fusedEnabled = false; // setFusedAttention

bool aligned16(const void *p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

/// The shared memory the kernels of tile width `width` take a block, at
/// most: the backward's, more than 48 KiB at width 128.
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
  if (!misfit && sharedBytesOf(fusedTileWidth(s.keyDim)) > sharedMemoryLimit())
    misfit = "its kernels need more shared memory than this GPU gives a block";
  if (misfit) {
    tellMisfit(s, misfit);
    return false;
  }
  ++fusedCalls;
  return true;
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
  const int64_t rows = a.s.batch * a.s.heads * a.s.queries;
  Scratch scratch(3 * rows * sizeof(float));
  if (scratch.failed())
    return; // no scratch: the error is recorded (firstError), not a crash
  const RowTerms terms = RowTerms::in(scratch.as<float>(), rows);
  if (a.s.queries > 0) { // no query tiles: dk = dv = 0 below
    fusedQueryGradKernel<D, G>
        <<<gridOf(a.s, a.s.queries), kBlockThreads, bytes, stream()>>>(
            a, grad, lse, terms, dq);
    TGC_CUDA_CHECK_LAUNCH();
  }
  fusedKeyValueGradKernel<D, G>
      <<<gridOf(a.s, a.s.keys), kBlockThreads, bytes, stream()>>>(
          a, grad, lse, terms, dk, dv);
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
  if (!runsFused(s, config,
                 aligned16(q) && aligned16(k) && aligned16(v) &&
                     aligned16(out)))
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
                     aligned16(grad) && aligned16(dq) && aligned16(dk) &&
                     aligned16(dv)))
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
