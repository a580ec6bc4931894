//===- AdamKernels.cuh - the optimizer step's kernels ----------*- CUDA -*-===//
//
// Internal to TgcCudaKernels (Adam.cu launches them; the kernel emulator's
// test runs them on the host). The tensors are cut into chunks of at most
// kChunkElements, a block's unit of work, so that many small tensors
// (biases, norms) and a few large ones (weights) share one launch:
//   gradientKernel: weights and accumulates the gradient (the phase,
//     KernelTypes.h) and writes each chunk's sum of squares;
//   normKernel (one block): the global norm from the chunks' sums, in a
//     fixed order, and the clipping factor (NaN: no update);
//   adamKernel: the update, Adam's or AdamW's.
// A thread takes four adjacent elements at a time: 16-byte loads and stores
// where the addresses allow (ElementQuads.cuh), each element's arithmetic
// that of one at a time. With one float a thread the three kernels took
// 0.7 ms of base's step on an H200 (63 million parameters, about 32 bytes
// moved for each: 2.9 TB/s, 60% of its bandwidth); quads not yet measured.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CUDA_ADAMKERNELS_CUH
#define TGC_RUNTIME_CUDA_ADAMKERNELS_CUH

#include "runtime/kernels/cuda/BlockReduce.cuh"
#include "runtime/kernels/cuda/Device.h"
#include "runtime/kernels/cuda/ElementQuads.cuh"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

namespace tgc::cuda {

/// Elements [begin, end) of one tensor: a block's unit of work, so that
/// many small tensors (biases, norms) and a few large ones (weights) share
/// one launch. `flat` is `begin`'s index in the concatenation of every
/// tensor (the gradient accumulator's layout). No padding: the chunks'
/// device table is found again by their bytes (persistentTable), and a
/// copy need not keep padding bytes as they were.
struct Chunk {
  float *param, *moment1, *moment2;
  const float *grad;
  int64_t begin, end, flat;
  int64_t decays; ///< 1: the step's weight decay applies (AdamW)
};
static_assert(std::has_unique_object_representations_v<Chunk>,
              "Chunk's bytes must be its values alone");
constexpr int64_t kChunkElements = 1 << 14;

/// Pass 1 of the optimizer step: weights and accumulates the gradient
/// (phase, KernelTypes.h) and writes each chunk's sum of squares. From a
/// non-finite `loss` (null: none given) it accumulates nothing and writes
/// NaN sums: the norm is NaN and Adam makes no update, as the CPU's step,
/// which does not call the optimizer after such a loss.
__global__ void gradientKernel(const Chunk *chunks, int64_t count,
                               const float *gradWeight, int32_t phase,
                               float *accumulator, double *squares,
                               const float *loss = nullptr) {
  const float weight = *gradWeight;
  if (loss && !isfinite(*loss)) {
    for (int64_t x = blockIdx.x; x < count; x += gridDim.x)
      if (threadIdx.x == 0)
        squares[x] = NAN;
    return;
  }
  for (int64_t x = blockIdx.x; x < count; x += gridDim.x) {
    Chunk c = chunks[x];
    float *acc = accumulator ? accumulator + c.flat - c.begin : nullptr;
    double sum = 0;
    for (int64_t first = c.begin + 4 * threadIdx.x; first < c.end;
         first += 4 * blockDim.x) {
      float g[4];
      loadQuad(c.grad, first, c.end, g);
      for (int q = 0; q < 4; ++q)
        g[q] *= weight;
      if (phase == runtime::kAccumulateFirst) {
        storeQuad(acc, first, c.end, g);
      } else if (phase != runtime::kUpdate) {
        float a[4];
        loadQuad(acc, first, c.end, a);
        for (int q = 0; q < 4; ++q)
          g[q] = a[q] += g[q];
        storeQuad(acc, first, c.end, a);
      }
      for (int q = 0; q < 4; ++q) // past the end: 0
        sum += static_cast<double>(g[q]) * g[q];
    }
    double total = blockSum(sum);
    if (threadIdx.x == 0)
      squares[x] = total;
  }
}

/// One block: the global norm from the chunks' sums (in a fixed order) and
/// the clipping factor, NaN where Adam does not take the norm (no update:
/// runtime::adamTakes).
__global__ void normKernel(const double *squares, int64_t count, float clip,
                           float *norm, float *factor) {
  double sum = 0;
  for (int64_t x = threadIdx.x; x < count; x += blockDim.x)
    sum += squares[x];
  double total = blockSum(sum);
  if (threadIdx.x == 0) {
    double n = sqrt(total);
    *norm = static_cast<float>(n);
    *factor = runtime::adamTakes(n, clip)
                  ? static_cast<float>(runtime::clipFactor(n, clip))
                  : NAN;
  }
}

/// Adam on g = scale * grad, or scale * the accumulator when there is one;
/// scale = *weight (null: 1) * *factor (null: 1), nothing when it is NaN; the
/// chunks that decay keep 1 - lr weightDecay of the parameter.
__global__ void adamKernel(const Chunk *chunks, int64_t count, const float *lr,
                           const int32_t *step, float beta1, float beta2,
                           float epsilon, float weightDecay,
                           const float *weight, const float *factor,
                           const float *accumulator) {
  __shared__ float stepSize, rootScale, decayKeep;
  if (threadIdx.x == 0) {
    double t = static_cast<double>(*step);
    double correction1 = 1.0 - pow(static_cast<double>(beta1), t);
    double correction2 = 1.0 - pow(static_cast<double>(beta2), t);
    stepSize = static_cast<float>(*lr / correction1);
    // sqrt(v / c2) = sqrt(v) / sqrt(c2).
    rootScale = static_cast<float>(1.0 / sqrt(correction2));
    decayKeep =
        static_cast<float>(1.0 - static_cast<double>(*lr) * weightDecay);
  }
  __syncthreads();
  const float given = weight ? *weight : 1.0f;
  const float scale = factor ? given * *factor : given;
  if (!isfinite(scale))
    return;
  const float keep1 = beta1, add1 = static_cast<float>(1.0 - beta1);
  const float keep2 = beta2, add2 = static_cast<float>(1.0 - beta2);
  for (int64_t x = blockIdx.x; x < count; x += gridDim.x) {
    Chunk c = chunks[x];
    const float *grad = accumulator ? accumulator + c.flat - c.begin : c.grad;
    const float keep = c.decays ? decayKeep : 1.0f;
    for (int64_t first = c.begin + 4 * threadIdx.x; first < c.end;
         first += 4 * blockDim.x) {
      float g[4], m[4], v[4], p[4];
      loadQuad(grad, first, c.end, g);
      loadQuad(c.moment1, first, c.end, m);
      loadQuad(c.moment2, first, c.end, v);
      loadQuad(c.param, first, c.end, p);
      for (int q = 0; q < 4; ++q) {
        const float gq = scale * g[q];
        m[q] = keep1 * m[q] + add1 * gq;
        v[q] = keep2 * v[q] + add2 * gq * gq;
        p[q] = p[q] * keep -
               stepSize * m[q] / (sqrtf(v[q]) * rootScale + epsilon);
      }
      storeQuad(c.moment1, first, c.end, m);
      storeQuad(c.moment2, first, c.end, v);
      storeQuad(c.param, first, c.end, p);
    }
  }
}

/// The chunks of `tensors`.
inline std::vector<Chunk> chunksOf(const AdamTensor *tensors, int count) {
  std::vector<Chunk> chunks;
  int64_t flat = 0;
  for (int x = 0; x < count; ++x) {
    const AdamTensor &a = tensors[x];
    for (int64_t b = 0; b < a.size; b += kChunkElements) {
      chunks.push_back({a.param, a.moment1, a.moment2, a.grad, b,
                        std::min(a.size, b + kChunkElements), flat + b,
                        a.decays ? 1 : 0});
    }
    flat += a.size;
  }
  return chunks;
}

} // namespace tgc::cuda

#endif // TGC_RUNTIME_CUDA_ADAMKERNELS_CUH
