//===- AttentionKernels.cuh - attention's row kernels ----------*- CUDA -*-===//
//
// Attention.cu's row kernel: over a group's raw products q k^T in scratch,
// a warp per query row adds the masks and leaves the row's probabilities
// times their dropout factors in place, and its log-sum-exp.
// Attention.cu's, AttentionGrad.cu's and AttentionBf16.cu's row kernels
// are each in the header of their own source (a kernel's definition goes
// in one translation unit); AttentionEmulatedTest.cpp runs all three
// headers' kernels on the host (KernelEmulator.h) against the CPU kernels.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CUDA_ATTENTIONKERNELS_CUH
#define TGC_RUNTIME_CUDA_ATTENTIONKERNELS_CUH

#include "runtime/kernels/cuda/AttentionScores.cuh"

namespace tgc::cuda {

/// Rows [0, rows) of a group starting at head firstHead, Sk scores each.
__global__ void softmaxScoresKernel(float *scores, float *lse, AttentionShape s,
                                    AttentionConfig config, int64_t firstHead,
                                    int64_t rows) {
  const int lane = threadIdx.x % 32;
  TGC_FOR_WARP_ROW(r, rows) {
    const int64_t bh = firstHead + r / s.queries, query = r % s.queries;
    float *row = scores + r * s.keys;
    const float max = maskRowAndMax(row, s, config, bh, query, lane);
    float sum = 0.0f;
    for (int64_t j = lane; j < s.keys; j += 32)
      sum += expf(row[j] - max);
    sum = warpReduce(sum, SumOp{});
    // exp(s - max) / sum, not exp(s - lse): a row whose every key is masked
    // has an lse that f32 rounds to -1e9 (RowWeights).
    const float inverse = 1.0f / sum;
    for (int64_t j = lane; j < s.keys; j += 32)
      row[j] = expf(row[j] - max) * inverse *
               probabilityFactor(s, config, bh, query, j);
    if (lane == 0)
      lse[lseIndex(s, bh, query)] = max + logf(sum);
  }
}

} // namespace tgc::cuda

#endif // TGC_RUNTIME_CUDA_ATTENTIONKERNELS_CUH
