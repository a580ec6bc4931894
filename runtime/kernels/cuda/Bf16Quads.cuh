//===- Bf16Quads.cuh - four floats rounded to bf16 in one store -*- CUDA -*-===//
//
// Internal to TgcCudaKernels: the roundings that move four values a thread
// (one 16-byte load, one 8-byte store), tg.to_bf16's and a rounding
// transpose's.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CUDA_BF16QUADS_CUH
#define TGC_RUNTIME_CUDA_BF16QUADS_CUH

#include "runtime/kernels/KernelTypes.h"

namespace tgc::cuda {

/// x's four values rounded (runtime::roundToBf16), packed in memory order.
__device__ inline uint2 roundedQuad(float4 x) {
  auto bits = [](float v) {
    return static_cast<uint32_t>(runtime::roundToBf16(v).bits);
  };
  return make_uint2(bits(x.x) | bits(x.y) << 16, bits(x.z) | bits(x.w) << 16);
}

} // namespace tgc::cuda

#endif // TGC_RUNTIME_CUDA_BF16QUADS_CUH
