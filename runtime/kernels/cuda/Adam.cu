//===- Adam.cu - bias-corrected multi-tensor Adam --------------------===//
//
//   m = b1 m + (1 - b1) g,  v = b2 v + (1 - b2) g^2,
//   p -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
// The corrections fold into two per-step constants computed in double
// (with b2 near 1, 1 - b2^t is a difference of nearly equal numbers), on
// the device: lr and step live in device memory.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cuda/Device.h"

#include <vector>

namespace tgc::cuda {

namespace {
/// Elements [begin, end) of one tensor: a block's unit of work, so that
/// many small tensors (biases, norms) and a few large ones (weights) share
/// one launch.
struct Chunk {
  float *param, *moment1, *moment2;
  const float *grad;
  int64_t begin, end;
};
constexpr int64_t kChunkElements = 1 << 14;
} // namespace

__global__ void adamKernel(const Chunk *chunks, int64_t count,
                           const float *lr, const int32_t *step, float beta1,
                           float beta2, float epsilon) {
  __shared__ float stepSize, rootScale;
  if (threadIdx.x == 0) {
    double t = static_cast<double>(*step);
    double correction1 = 1.0 - pow(static_cast<double>(beta1), t);
    double correction2 = 1.0 - pow(static_cast<double>(beta2), t);
    stepSize = static_cast<float>(*lr / correction1);
    // sqrt(v / c2) = sqrt(v) / sqrt(c2).
    rootScale = static_cast<float>(1.0 / sqrt(correction2));
  }
  __syncthreads();
  const float keep1 = beta1, add1 = static_cast<float>(1.0 - beta1);
  const float keep2 = beta2, add2 = static_cast<float>(1.0 - beta2);
  for (int64_t x = blockIdx.x; x < count; x += gridDim.x) {
    Chunk c = chunks[x];
    for (int64_t i = c.begin + threadIdx.x; i < c.end; i += blockDim.x) {
      float g = c.grad[i];
      float m = keep1 * c.moment1[i] + add1 * g;
      float v = keep2 * c.moment2[i] + add2 * g * g;
      c.moment1[i] = m;
      c.moment2[i] = v;
      c.param[i] -= stepSize * m / (sqrtf(v) * rootScale + epsilon);
    }
  }
}

void adamUpdate(const AdamTensor *tensors, int count, const float *lr,
                const int32_t *step, float beta1, float beta2,
                float epsilon) {
  std::vector<Chunk> chunks;
  for (int x = 0; x < count; ++x) {
    const AdamTensor &a = tensors[x];
    for (int64_t b = 0; b < a.size; b += kChunkElements)
      chunks.push_back({a.param, a.moment1, a.moment2, a.grad, b,
                        std::min(a.size, b + kChunkElements)});
  }
  if (chunks.empty())
    return;
  // The table goes to the device with the launch: a copy from pageable
  // memory, which returns once the host vector has been read.
  size_t bytes = chunks.size() * sizeof(Chunk);
  Scratch table(bytes);
  TGC_CUDA_CHECK(cudaMemcpyAsync(table.as<Chunk>(), chunks.data(), bytes,
                                 cudaMemcpyHostToDevice, stream()));
  int64_t blocks = static_cast<int64_t>(chunks.size());
  adamKernel<<<rowBlocks(blocks), kThreads, 0, stream()>>>(
      table.as<Chunk>(), blocks, lr, step, beta1, beta2, epsilon);
  TGC_CUDA_CHECK_LAUNCH();
}

} // namespace tgc::cuda
