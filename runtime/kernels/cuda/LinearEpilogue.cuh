//===- LinearEpilogue.cuh - linear's bias and activation kernel *- CUDA -*-===//
//
// Internal to TgcCudaKernels: Gemm.cu launches this kernel after a GEMM
// where cuBLASLt has no epilogue for the call (the only CUDA source that
// includes this header); LinearEpilogueEmulatedTest.cpp runs it on the
// host, a CUDA thread a host thread.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CUDA_LINEAREPILOGUE_CUH
#define TGC_RUNTIME_CUDA_LINEAREPILOGUE_CUH

#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/cuda/Device.h"
#include "runtime/kernels/cuda/ElementQuads.cuh"

namespace tgc::cuda {

TGC_HOST_DEVICE inline float biasValue(const float *bias, int64_t c) {
  return bias[c];
}
TGC_HOST_DEVICE inline float biasValue(const runtime::Bf16 *bias, int64_t c) {
  return runtime::widen(bias[c]);
}

/// out[r, c] = act(in[r, c] + bias[c]), written as Out (in place when `in`
/// is `out`), and the sum before act to `pre` unless it is null: linear's
/// epilogue where cuBLASLt offers none for the activation or the operands.
/// The bias is f32 or bf16 (widened). Four adjacent elements a thread
/// (ElementQuads.cuh: 16-byte loads and stores where they line up), one
/// column index a quad.
template <typename Out, typename Pre, typename Bias>
__global__ void biasActivation(const float *in, Out *out, Pre *pre,
                               const Bias *bias, int64_t rows, int64_t n,
                               Activation activation) {
  const int64_t count = rows * n;
  TGC_GRID_STRIDE(quad, (count + 3) / 4) {
    const int64_t first = 4 * quad;
    float y[4];
    loadQuad(in, first, count, y);
    if (bias) {
      const int64_t column = first % n;
      if (column + 4 <= n) { // the four in one row
        float b[4];
        loadQuad(bias, column, n, b);
        for (int q = 0; q < 4; ++q)
          y[q] += b[q];
      } else {
        for (int q = 0; q < 4; ++q)
          y[q] += biasValue(bias, (first + q) % n);
      }
    }
    if (pre)
      storeQuad(pre, first, count, y);
    float a[4];
    for (int q = 0; q < 4; ++q)
      a[q] = elementwise::activate(activation, y[q]);
    storeQuad(out, first, count, a);
  }
}

} // namespace tgc::cuda

#endif // TGC_RUNTIME_CUDA_LINEAREPILOGUE_CUH
