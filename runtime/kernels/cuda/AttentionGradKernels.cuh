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

/// In place over rows [0, rows) of a group starting at head firstHead, a
/// warp per row: products (q k^T) -> p f, and outGrads (dO v^T) -> ds.
__global__ void scoreGradsKernel(float *products, float *outGrads,
                                 const float *lse, const float *rowDot,
                                 AttentionShape s, AttentionConfig config,
                                 int64_t firstHead, int64_t rows) {
  const int lane = threadIdx.x % 32;
  TGC_FOR_WARP_ROW(r, rows) {
    const int64_t bh = firstHead + r / s.queries, query = r % s.queries;
    float *product = products + r * s.keys, *outGrad = outGrads + r * s.keys;
    const RowWeights weights = rowWeights(
        product, s, config, bh, query, lse[lseIndex(s, bh, query)], lane);
    const float rowTerm = rowDot[bh * s.queries + query];
    for (int64_t key = lane; key < s.keys; key += 32) {
      const float p =
          weights(maskedScore(product[key], s, config, bh, query, key));
      const float f = probabilityFactor(s, config, bh, query, key);
      product[key] = p * f;
      const float logitGrad = p * (f * outGrad[key] - rowTerm);
      addBiasGrad(s, config, bh, query, key, logitGrad);
      outGrad[key] = config.scale * logitGrad;
    }
  }
}

} // namespace tgc::cuda

#endif // TGC_RUNTIME_CUDA_ATTENTIONGRADKERNELS_CUH
