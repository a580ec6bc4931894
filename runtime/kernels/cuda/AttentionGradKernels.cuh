//===- AttentionGradKernels.cuh - its gradient's ---------------*- CUDA -*-===//
//
// AttentionGrad.cu's kernels: the row terms D_i = dO_i . O_i, then, over a
// group's products q k^T and dO v^T in scratch, p f and the score
// gradients ds in place (from the forward's lse).
// Attention.cu's, AttentionGrad.cu's and AttentionBf16.cu's row kernels
// are each in the header of their own source (a kernel's definition goes
// in one translation unit); AttentionEmulatedTest.cpp runs all three
// headers' kernels on the host (KernelEmulator.h) against the CPU kernels.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CUDA_ATTENTIONGRADKERNELS_CUH
#define TGC_RUNTIME_CUDA_ATTENTIONGRADKERNELS_CUH

#include "runtime/kernels/cuda/AttentionScores.cuh"

namespace tgc::cuda {

/// D_i = dO_i . O_i for every row r = bh Sq + i of [B, H, Sq] (dO and O
/// at `layout`); a warp per row.
__global__ void rowDotKernel(const float *grad, const float *output,
                             float *rowDot, HeadLayout layout, int64_t queries,
                             int64_t rows, int valueDim) {
  const int lane = threadIdx.x % 32;
  TGC_FOR_WARP_ROW(r, rows) {
    const int64_t at =
        layout.offset(r / queries) + r % queries * layout.rowStride;
    float sum = 0.0f;
    for (int c = lane; c < valueDim; c += 32)
      sum += grad[at + c] * output[at + c];
    sum = warpReduce(sum, SumOp{});
    if (lane == 0)
      rowDot[r] = sum;
  }
}

/// In place over a group starting at head firstHead: products (q k^T) ->
/// p f, and outGrads (dO v^T) -> ds.
__global__ void scoreGradsKernel(float *products, float *outGrads,
                                 const float *lse, const float *rowDot,
                                 AttentionShape s, AttentionConfig config,
                                 int64_t firstHead, int64_t count) {
  TGC_GRID_STRIDE(e, count) {
    const int64_t r = e / s.keys, key = e % s.keys;
    const int64_t bh = firstHead + r / s.queries, query = r % s.queries;
    const int64_t row = bh * s.queries + query;
    float p = expf(maskedScore(products[e], s, config, bh, query, key) -
                   lse[lseIndex(s, bh, query)]);
    float f = probabilityFactor(s, config, bh, query, key);
    products[e] = p * f;
    const float logitGrad = p * (f * outGrads[e] - rowDot[row]);
    addBiasGrad(s, config, bh, query, key, logitGrad);
    outGrads[e] = config.scale * logitGrad;
  }
}

} // namespace tgc::cuda

#endif // TGC_RUNTIME_CUDA_ATTENTIONGRADKERNELS_CUH
