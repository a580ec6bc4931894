//===- ElementQuads.cuh - four adjacent elements a thread ------*- CUDA -*-===//
//
// How a generated elementwise kernel (codegen/cuda/ElementwiseKernels.cpp)
// moves the four adjacent elements [first, first + 4) a thread takes: one
// 16-byte load or store of f32 (8 bytes of bf16) where all four are there
// and the address allows it, element by element otherwise (the last,
// partial quad; a view that starts off a 16-byte boundary); and their
// dropout factors from one Philox block where the four share one (the
// same numbers as four Dropout::factor calls, a quarter of the work).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CUDA_ELEMENTQUADS_CUH
#define TGC_RUNTIME_CUDA_ELEMENTQUADS_CUH

#include "runtime/kernels/KernelTypes.h"
#include "runtime/kernels/cuda/Bf16Quads.cuh"

#include <cstdint>
#include <cstring>

namespace tgc::cuda {

/// The Word at p, whose address suits it: one wide load on the device; a
/// copy on the host, where the quads run in tests (reading T's storage as
/// Word would break C++'s aliasing rules there).
template <typename Word, typename T>
TGC_HOST_DEVICE inline Word loadWord(const T *p) {
#ifdef __CUDA_ARCH__
  return *reinterpret_cast<const Word *>(p);
#else
  Word word;
  std::memcpy(&word, p, sizeof word);
  return word;
#endif
}

/// The same for a store.
template <typename Word, typename T>
TGC_HOST_DEVICE inline void storeWord(T *p, const Word &word) {
#ifdef __CUDA_ARCH__
  *reinterpret_cast<Word *>(p) = word;
#else
  std::memcpy(p, &word, sizeof word);
#endif
}

/// Whether all of [first, first + 4) is below n and p + first is aligned to
/// `bytes`.
template <typename T>
TGC_HOST_DEVICE inline bool wholeQuad(const T *p, int64_t first, int64_t n,
                                      unsigned bytes) {
  return first + 4 <= n && reinterpret_cast<uintptr_t>(p + first) % bytes == 0;
}

/// Elements [first, first + 4) of p; those at n or past it read as 0.
TGC_HOST_DEVICE inline void loadQuad(const float *p, int64_t first, int64_t n,
                                     float v[4]) {
  if (wholeQuad(p, first, n, sizeof(float4))) {
    const float4 x = loadWord<float4>(p + first);
    v[0] = x.x, v[1] = x.y, v[2] = x.z, v[3] = x.w;
    return;
  }
  for (int q = 0; q < 4; ++q)
    v[q] = first + q < n ? p[first + q] : 0.0f;
}

/// The same for bf16 elements, widened to f32.
TGC_HOST_DEVICE inline void loadQuad(const runtime::Bf16 *p, int64_t first,
                                     int64_t n, float v[4]) {
  if (wholeQuad(p, first, n, sizeof(uint2))) {
    const uint2 x = loadWord<uint2>(p + first);
    const uint32_t words[2] = {x.x, x.y};
    for (int q = 0; q < 4; ++q) // memory order: the low half first
      v[q] = runtime::widen(
          runtime::Bf16{static_cast<uint16_t>(words[q / 2] >> (16 * (q % 2)))});
    return;
  }
  for (int q = 0; q < 4; ++q)
    v[q] = first + q < n ? runtime::widen(p[first + q]) : 0.0f;
}

/// v into elements [first, first + 4) of p, those below n only.
TGC_HOST_DEVICE inline void storeQuad(float *p, int64_t first, int64_t n,
                                      const float v[4]) {
  if (wholeQuad(p, first, n, sizeof(float4))) {
    storeWord(p + first, make_float4(v[0], v[1], v[2], v[3]));
    return;
  }
  for (int q = 0; q < 4 && first + q < n; ++q)
    p[first + q] = v[q];
}

/// The same into bf16 elements, each rounded once (runtime::roundToBf16).
TGC_HOST_DEVICE inline void storeQuad(runtime::Bf16 *p, int64_t first,
                                      int64_t n, const float v[4]) {
  if (wholeQuad(p, first, n, sizeof(uint2))) {
    storeWord(p + first, roundedQuad(make_float4(v[0], v[1], v[2], v[3])));
    return;
  }
  for (int q = 0; q < 4 && first + q < n; ++q)
    p[first + q] = runtime::roundToBf16(v[q]);
}

/// Dropout's factors for elements [first, first + 4): one Philox block
/// where the four are one block's (Dropout::factors4), else one factor() an
/// element (1 past n, where nothing is stored).
TGC_HOST_DEVICE inline void dropoutQuad(const runtime::Dropout &dropout,
                                        int64_t first, int64_t n, float f[4]) {
  if (first + 4 <= n && (uint64_t(first) + dropout.indexOffset) % 4 == 0) {
    dropout.factors4(uint64_t(first), f);
    return;
  }
  for (int q = 0; q < 4; ++q)
    f[q] = first + q < n ? dropout.factor(uint64_t(first + q)) : 1.0f;
}

} // namespace tgc::cuda

#endif // TGC_RUNTIME_CUDA_ELEMENTQUADS_CUH
