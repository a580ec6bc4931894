//===- DeviceStep.cu - where a generated CUDA step keeps its data --------===//
#include "runtime/cuda/DeviceStep.h"
#include "runtime/cuda/Kernels.h"

#include <cuda_runtime.h>

namespace tgc::cuda {
namespace {

/// False with `why` on a CUDA error: at start-up every error means the
/// machine has no GPU this program can use.
bool ok(cudaError_t status, const char *what, std::string &why) {
  if (status == cudaSuccess)
    return true;
  why = std::string(what) + ": " + cudaGetErrorString(status);
  return false;
}

template <typename T> bool allocate(T *&p, int64_t count, std::string &why) {
  return ok(cudaMalloc(reinterpret_cast<void **>(&p),
                       static_cast<size_t>(count > 0 ? count : 1) * sizeof(T)),
            "cudaMalloc", why);
}

} // namespace

DeviceFrame &deviceFrame() {
  static DeviceFrame frame;
  return frame;
}

bool openDevice(const DeviceSizes &sizes, std::string &why) {
  int devices = 0;
  if (!ok(cudaGetDeviceCount(&devices), "cudaGetDeviceCount", why))
    return false;
  if (devices == 0) {
    why = "cudaGetDeviceCount found no device";
    return false;
  }
  cudaStream_t stream;
  if (!ok(cudaSetDevice(0), "cudaSetDevice", why) ||
      !ok(cudaStreamCreate(&stream), "cudaStreamCreate", why))
    return false;
  setStream(stream);
  DeviceFrame &g = deviceFrame();
  return allocate(g.state, sizes.stateFloats, why) &&
         allocate(g.arena, sizes.arenaBytes, why) &&
         ok(cudaMemset(g.arena, 0, static_cast<size_t>(sizes.arenaBytes)),
            "cudaMemset", why) &&
         allocate(g.sourceIds, sizes.sourceIds, why) &&
         allocate(g.targetInIds, sizes.targetIds, why) &&
         allocate(g.targetOutIds, sizes.targetIds, why) &&
         allocate(g.lr, 1, why) && allocate(g.step, 1, why) &&
         ok(cudaMallocHost(reinterpret_cast<void **>(&g.hostLogits),
                           static_cast<size_t>(sizes.logitsFloats) * 4),
            "cudaMallocHost", why);
}

float *uploadConstant(const void *host, size_t bytes) {
  void *device = nullptr;
  TGC_CUDA_CHECK(cudaMalloc(&device, bytes));
  TGC_CUDA_CHECK(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice));
  return static_cast<float *>(device);
}

void uploadState(const float *host, int64_t floats) {
  TGC_CUDA_CHECK(cudaMemcpy(deviceFrame().state, host,
                            static_cast<size_t>(floats) * 4,
                            cudaMemcpyHostToDevice));
}

void downloadState(float *host, int64_t floats) {
  TGC_CUDA_CHECK(cudaStreamSynchronize(stream()));
  TGC_CUDA_CHECK(cudaMemcpy(host, deviceFrame().state,
                            static_cast<size_t>(floats) * 4,
                            cudaMemcpyDeviceToHost));
}

void uploadInputs(const runtime::StepFrame &frame, int64_t sourceIds,
                  int64_t targetIds) {
  DeviceFrame &g = deviceFrame();
  auto copy = [](void *device, const void *host, int64_t bytes) {
    if (host)
      TGC_CUDA_CHECK(cudaMemcpyAsync(device, host, static_cast<size_t>(bytes),
                                     cudaMemcpyHostToDevice, stream()));
  };
  copy(g.sourceIds, frame.sourceIds, sourceIds * 4);
  copy(g.targetInIds, frame.targetInIds, targetIds * 4);
  copy(g.targetOutIds, frame.targetOutIds, targetIds * 4);
  copy(g.lr, &frame.lr, 4);
  copy(g.step, &frame.step, 4);
  // The host buffers may change once this returns.
  TGC_CUDA_CHECK(cudaStreamSynchronize(stream()));
}

const float *downloadLogits(const float *logits, int64_t floats) {
  DeviceFrame &g = deviceFrame();
  TGC_CUDA_CHECK(cudaMemcpyAsync(g.hostLogits, logits,
                                 static_cast<size_t>(floats) * 4,
                                 cudaMemcpyDeviceToHost, stream()));
  TGC_CUDA_CHECK(cudaStreamSynchronize(stream()));
  return g.hostLogits;
}

void downloadLoss(const float *loss, const int32_t *tokens,
                  runtime::StepFrame &frame) {
  TGC_CUDA_CHECK(cudaMemcpyAsync(&frame.loss, loss, 4, cudaMemcpyDeviceToHost,
                                 stream()));
  if (tokens)
    TGC_CUDA_CHECK(cudaMemcpyAsync(&frame.tokens, tokens, 4,
                                   cudaMemcpyDeviceToHost, stream()));
  TGC_CUDA_CHECK(cudaStreamSynchronize(stream()));
}

} // namespace tgc::cuda
