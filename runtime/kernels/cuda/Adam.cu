//===- Adam.cu - bias-corrected multi-tensor Adam --------------------===//
//
//   m = b1 m + (1 - b1) g,  v = b2 v + (1 - b2) g^2,
//   p -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
// and with AdamW's decoupled weight decay wd, on the tensors that decay,
//   p = p (1 - lr wd) - lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps).
// The corrections fold into two per-step constants computed in double
// (with b2 near 1, 1 - b2^t is a difference of nearly equal numbers), on
// the device: lr and step live in device memory. optimizerStep adds the
// gradient's weight, accumulation, global norm and clipping in front of it
// (runtime/kernels/KernelTypes.h), without a round trip to the host; the
// gradient's weight is device memory too (it changes every step, and a
// replayed CUDA graph keeps the arguments it was captured with).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cuda/Device.h"

#include <cstring>
#include <vector>

namespace tgc::cuda {

namespace {
/// Elements [begin, end) of one tensor: a block's unit of work, so that
/// many small tensors (biases, norms) and a few large ones (weights) share
/// one launch. `flat` is `begin`'s index in the concatenation of every
/// tensor (the gradient accumulator's layout).
struct Chunk {
  float *param, *moment1, *moment2;
  const float *grad;
  int64_t begin, end, flat;
  bool decays;
};
constexpr int64_t kChunkElements = 1 << 14;

/// Sums the block's `value`s in a fixed order; thread 0 gets the total.
__device__ double blockSum(double value) {
  __shared__ double partial[kThreads];
  partial[threadIdx.x] = value;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half)
      partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  double total = partial[0];
  __syncthreads();
  return total;
}
} // namespace

/// Pass 1 of the optimizer step: weights and accumulates the gradient
/// (phase, KernelTypes.h) and writes each chunk's sum of squares.
__global__ void gradientKernel(const Chunk *chunks, int64_t count,
                               const float *gradWeight, int32_t phase,
                               float *accumulator, double *squares) {
  const float weight = *gradWeight;
  for (int64_t x = blockIdx.x; x < count; x += gridDim.x) {
    Chunk c = chunks[x];
    float *acc = accumulator ? accumulator + c.flat - c.begin : nullptr;
    double sum = 0;
    for (int64_t i = c.begin + threadIdx.x; i < c.end; i += blockDim.x) {
      float g = weight * c.grad[i];
      if (phase == runtime::kAccumulateFirst)
        acc[i] = g;
      else if (phase != runtime::kUpdate)
        g = acc[i] += g;
      sum += static_cast<double>(g) * g;
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
    decayKeep = static_cast<float>(1.0 - static_cast<double>(*lr) * weightDecay);
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
    for (int64_t i = c.begin + threadIdx.x; i < c.end; i += blockDim.x) {
      float g = scale * grad[i];
      float m = keep1 * c.moment1[i] + add1 * g;
      float v = keep2 * c.moment2[i] + add2 * g * g;
      c.moment1[i] = m;
      c.moment2[i] = v;
      c.param[i] = c.param[i] * keep - stepSize * m / (sqrtf(v) * rootScale + epsilon);
    }
  }
}

namespace {
/// The chunks of `tensors`, their padding bytes zero: the table is found
/// again by its bytes (persistentTable).
std::vector<Chunk> chunksOf(const AdamTensor *tensors, int count) {
  std::vector<Chunk> chunks;
  int64_t flat = 0;
  for (int x = 0; x < count; ++x) {
    const AdamTensor &a = tensors[x];
    for (int64_t b = 0; b < a.size; b += kChunkElements) {
      Chunk c;
      std::memset(&c, 0, sizeof c);
      c.param = a.param;
      c.moment1 = a.moment1;
      c.moment2 = a.moment2;
      c.grad = a.grad;
      c.begin = b;
      c.end = std::min(a.size, b + kChunkElements);
      c.flat = flat + b;
      c.decays = a.decays;
      chunks.push_back(c);
    }
    flat += a.size;
  }
  return chunks;
}

/// The chunks' device copy: the same every step (persistentTable).
const Chunk *tableOf(const std::vector<Chunk> &chunks) {
  return static_cast<const Chunk *>(
      persistentTable(chunks.data(), chunks.size() * sizeof(Chunk)));
}
} // namespace

void adamUpdate(const AdamTensor *tensors, int count, const float *lr,
                const int32_t *step, float beta1, float beta2, float epsilon) {
  std::vector<Chunk> chunks = chunksOf(tensors, count);
  if (chunks.empty())
    return;
  const Chunk *table = tableOf(chunks);
  if (!table) // the error is kept for firstError()
    return;
  int64_t blocks = static_cast<int64_t>(chunks.size());
  adamKernel<<<rowBlocks(blocks), kThreads, 0, stream()>>>(
      table, blocks, lr, step, beta1, beta2, epsilon, 0.0f, nullptr,
      nullptr, nullptr);
  TGC_CUDA_CHECK_LAUNCH();
}

void optimizerStep(const AdamTensor *tensors, int count,
                   const OptimizerControl &control, const float *lr,
                   const int32_t *step, const float *weight, float *norm,
                   float beta1, float beta2, float epsilon) {
  std::vector<Chunk> chunks = chunksOf(tensors, count);
  if (chunks.empty())
    return;
  int64_t blocks = static_cast<int64_t>(chunks.size());
  const Chunk *table = tableOf(chunks);
  if (!table) // the error is kept for firstError()
    return;
  Scratch squares(chunks.size() * sizeof(double)), factor(sizeof(float));
  gradientKernel<<<rowBlocks(blocks), kThreads, 0, stream()>>>(
      table, blocks, weight, control.phase, control.accumulator,
      squares.as<double>());
  TGC_CUDA_CHECK_LAUNCH();
  normKernel<<<1, kThreads, 0, stream()>>>(
      squares.as<double>(), blocks, control.clip, norm, factor.as<float>());
  TGC_CUDA_CHECK_LAUNCH();
  if (control.phase != runtime::kUpdate &&
      control.phase != runtime::kAccumulateUpdate)
    return;
  bool accumulated = control.phase == runtime::kAccumulateUpdate;
  adamKernel<<<rowBlocks(blocks), kThreads, 0, stream()>>>(
      table, blocks, lr, step, beta1, beta2, epsilon, control.weightDecay,
      accumulated ? nullptr : weight, factor.as<float>(),
      accumulated ? control.accumulator : nullptr);
  TGC_CUDA_CHECK_LAUNCH();
}

} // namespace tgc::cuda
