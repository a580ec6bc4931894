//===- DropoutProbe.cu - dropout factors computed on the GPU ---------===//
//
// Dropout::factor compiled as device code, for the test that the GPU and
// the CPU draw the same mask.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cuda/DropoutProbe.h"

namespace tgc::test {

__global__ void factorsKernel(cuda::Dropout dropout, uint64_t first,
                              int64_t count, float *out) {
  int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (x < count)
    out[x] = dropout.factor(first + x);
}

std::vector<float> deviceDropoutFactors(const cuda::Dropout &dropout,
                                        uint64_t first, int64_t count) {
  std::vector<float> host(count);
  float *device = nullptr;
  TGC_CUDA_CHECK(cudaMalloc(&device, count * sizeof(float)));
  constexpr int kThreads = 256;
  factorsKernel<<<static_cast<unsigned>((count + kThreads - 1) / kThreads),
                  kThreads>>>(dropout, first, count, device);
  TGC_CUDA_CHECK(cudaGetLastError());
  TGC_CUDA_CHECK(cudaMemcpy(host.data(), device, count * sizeof(float),
                            cudaMemcpyDeviceToHost));
  TGC_CUDA_CHECK(cudaFree(device));
  return host;
}

} // namespace tgc::test
