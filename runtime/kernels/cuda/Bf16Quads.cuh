//===- Bf16Quads.cuh - how kernels write bf16 results ----------*- CUDA -*-===//
//
// How a kernel writes an f32 value as its result's type, and the roundings
// that move four values a thread (one 16-byte load, one 8-byte store),
// tg.to_bf16's and a rounding transpose's: TgcCudaKernels' and, through
// ElementQuads.cuh, the generated elementwise kernels'.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CUDA_BF16QUADS_CUH
#define TGC_RUNTIME_CUDA_BF16QUADS_CUH

#include "runtime/kernels/KernelTypes.h"

#include <type_traits>

namespace tgc::cuda {

/// `value` as a result of type T: itself, or rounded once to bf16
/// (runtime::roundToBf16, as the CPU kernels write bf16 results).
template <typename T> __device__ inline T convertedTo(float value) {
  if constexpr (std::is_same_v<T, float>)
    return value;
  else
    return runtime::roundToBf16(value);
}

/// x's four values rounded (runtime::roundToBf16), packed in memory order.
TGC_HOST_DEVICE inline uint2 roundedQuad(float4 x) {
  auto bits = [](float v) {
    return static_cast<uint32_t>(runtime::roundToBf16(v).bits);
  };
  return make_uint2(bits(x.x) | bits(x.y) << 16, bits(x.z) | bits(x.w) << 16);
}

} // namespace tgc::cuda

#endif // TGC_RUNTIME_CUDA_BF16QUADS_CUH
