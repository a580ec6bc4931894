//===- DeviceStep.cu - where a generated CUDA step keeps its data --------===//
#include "runtime/program/cuda/DeviceStep.h"
#include "runtime/kernels/cuda/Device.h"
#include "runtime/program/parallel/LocalRank.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

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

std::string mebibytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", bytes / (1 << 20));
  return text;
}

/// `what` ("the arena") on the device; out of memory, `why` names it, its
/// size, what the model needs in all (`total` bytes) and what the GPU has.
template <typename T>
bool allocate(T *&p, int64_t count, const char *what, double total,
              std::string &why) {
  const size_t bytes = static_cast<size_t>(count > 0 ? count : 1) * sizeof(T);
  cudaError_t status = cudaMalloc(reinterpret_cast<void **>(&p), bytes);
  if (status != cudaErrorMemoryAllocation)
    return ok(status, "cudaMalloc", why);
  (void)cudaGetLastError();
  size_t free = 0, size = 0;
  why = std::string("out of GPU memory for ") + what + " (" +
        mebibytes(static_cast<double>(bytes)) + "): the model needs " +
        mebibytes(total) + " in all";
  if (cudaMemGetInfo(&free, &size) == cudaSuccess)
    why += ", the GPU has " + mebibytes(static_cast<double>(free)) +
           " free of " + mebibytes(static_cast<double>(size));
  return false;
}

} // namespace

/// The fields of `g.scalars` as the generated code names them.
bool pointIntoScalars(DeviceFrame &g) {
  g.lr = &g.scalars->lr;
  g.step = &g.scalars->step;
  g.dropoutKey = g.scalars->dropoutKey;
  g.gradWeight = &g.scalars->gradWeight;
  return true;
}

DeviceFrame &deviceFrame() {
  static DeviceFrame frame;
  return frame;
}

bool openDevice(const DeviceSizes &sizes, std::string &why) {
  runtime::deviceFailed = &firstError;
  int devices = 0;
  if (!ok(cudaGetDeviceCount(&devices), "cudaGetDeviceCount", why))
    return false;
  if (devices == 0) {
    why = "cudaGetDeviceCount found no device";
    return false;
  }
  // One GPU per process: the processes a launcher started on this machine
  // take the GPUs they see in turn (their local rank; 0 without one). More
  // of them than GPUs, where each sees every GPU, would share one (NCCL
  // refuses that, or it runs out of memory); a launcher or script that
  // gives each its own (CUDA_VISIBLE_DEVICES, cgroups) leaves each one.
  const runtime::LocalRank local = runtime::localRank();
  const int device = local.rank % devices;
  if (local.count > devices && !std::getenv("CUDA_VISIBLE_DEVICES")) {
    why = std::to_string(local.count) +
          " processes of this run on this machine, " +
          std::to_string(devices) + " GPU" + (devices == 1 ? "" : "s") +
          ": each process needs a GPU of its own";
    return false;
  }
  cudaStream_t stream;
  if (!ok(cudaSetDevice(device), "cudaSetDevice", why) ||
      !ok(cudaStreamCreate(&stream), "cudaStreamCreate", why))
    return false;
  setStream(stream);
  DeviceFrame &g = deviceFrame();
  g.gradientFloats = sizes.gradientFloats;
  auto allocatePinned = [&](auto *&p, int64_t count) {
    return ok(cudaMallocHost(reinterpret_cast<void **>(&p),
                             static_cast<size_t>(count > 0 ? count : 1) * 4),
              "cudaMallocHost", why);
  };
  const double total =
      4.0 * static_cast<double>(sizes.stateFloats + sizes.cacheFloats) +
      static_cast<double>(sizes.arenaBytes);
  return allocate(g.state, sizes.stateFloats, "the parameters and Adam's "
                  "moments", total, why) &&
         allocate(g.arena, sizes.arenaBytes, "the step's arena", total, why) &&
         ok(cudaMemset(g.arena, 0, static_cast<size_t>(sizes.arenaBytes)),
            "cudaMemset", why) &&
         allocate(g.cache, sizes.cacheFloats, "the decoder's caches", total,
                  why) &&
         ok(cudaMemset(g.cache, 0, static_cast<size_t>(sizes.cacheFloats) * 4),
            "cudaMemset", why) &&
         allocate(g.sourceIds, sizes.sourceIds, "the source ids", total, why) &&
         allocate(g.targetInIds, sizes.targetIds, "the target ids", total, why) &&
         allocate(g.targetOutIds, sizes.targetIds, "the target ids", total, why) &&
         allocate(g.scalars, 1, "the step's scalars", total, why) &&
         allocatePinned(g.stagedIds, sizes.sourceIds + 2 * sizes.targetIds) &&
         ok(cudaMallocHost(reinterpret_cast<void **>(&g.stagedScalars),
                           sizeof(StepScalars)),
            "cudaMallocHost", why) &&
         ok(cudaEventCreateWithFlags(&g.inputsCopied, cudaEventDisableTiming),
            "cudaEventCreate", why) &&
         pointIntoScalars(g);
}

float *uploadConstant(const void *host, size_t bytes) {
  void *device = nullptr;
  if (!TGC_CUDA_CHECK(cudaMalloc(&device, bytes)))
    return nullptr;
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
  // The previous call's copies read the staging: wait until they are done
  // (long done in a training loop, which reads every step's loss).
  TGC_CUDA_CHECK(cudaEventSynchronize(g.inputsCopied));
  int32_t *staged = g.stagedIds;
  auto copy = [&](void *device, void *staging, const void *host,
                  int64_t bytes) {
    if (!host)
      return;
    std::memcpy(staging, host, static_cast<size_t>(bytes));
    TGC_CUDA_CHECK(cudaMemcpyAsync(device, staging, static_cast<size_t>(bytes),
                                   cudaMemcpyHostToDevice, stream()));
  };
  copy(g.sourceIds, staged, frame.sourceIds, sourceIds * 4);
  copy(g.targetInIds, staged + sourceIds, frame.targetInIds, targetIds * 4);
  copy(g.targetOutIds, staged + sourceIds + targetIds, frame.targetOutIds,
       targetIds * 4);
  const StepScalars scalars{frame.lr, frame.step,
                            {frame.dropoutKey[0], frame.dropoutKey[1]},
                            frame.gradWeight};
  copy(g.scalars, g.stagedScalars, &scalars, sizeof scalars);
  if (frame.updatePhase != 0 && !g.gradAccumulator && g.gradientFloats > 0)
    TGC_CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(&g.gradAccumulator),
                              static_cast<size_t>(g.gradientFloats) * 4));
  TGC_CUDA_CHECK(cudaEventRecord(g.inputsCopied, stream()));
}

void uploadGradWeight(const runtime::StepFrame &frame) {
  // From pageable memory: the copy has read it when this returns.
  TGC_CUDA_CHECK(cudaMemcpyAsync(deviceFrame().gradWeight, &frame.gradWeight,
                                 sizeof frame.gradWeight,
                                 cudaMemcpyHostToDevice, stream()));
}

const float *downloadLogits(const float *logits, int64_t floats) {
  DeviceFrame &g = deviceFrame();
  if (floats > g.hostLogitsFloats) {
    if (g.hostLogits)
      TGC_CUDA_CHECK(cudaFreeHost(g.hostLogits));
    g.hostLogits = nullptr;
    g.hostLogitsFloats = 0;
    if (TGC_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void **>(&g.hostLogits),
                                      static_cast<size_t>(floats) * 4)))
      g.hostLogitsFloats = floats;
    else
      g.hostLogits = nullptr;
  }
  if (!g.hostLogits) { // the error is kept (firstError): zeros, as below
    static std::vector<float> none;
    none.assign(static_cast<size_t>(floats), 0.0f);
    return none.data();
  }
  TGC_CUDA_CHECK(cudaMemcpyAsync(g.hostLogits, logits,
                                 static_cast<size_t>(floats) * 4,
                                 cudaMemcpyDeviceToHost, stream()));
  TGC_CUDA_CHECK(cudaStreamSynchronize(stream()));
  std::string why;
  if (firstError(why))
    std::fill_n(g.hostLogits, floats, 0.0f);
  return g.hostLogits;
}

/// rows[r] = copy[parents[r]] for the `batch` rows of `width` floats.
__global__ void gatherRowsKernel(float *rows, const float *copy,
                                 const int64_t *parents, int64_t batch,
                                 int64_t width) {
  TGC_GRID_STRIDE(i, batch * width) {
    rows[i] = copy[parents[i / width] * width + i % width];
  }
}

void reorderCaches(const runtime::CompiledBucket &bucket,
                   const int64_t *parents) {
  const int64_t batch = bucket.batchSize;
  int64_t largest = 0;
  for (int c = 0; c < bucket.numCaches; ++c)
    largest = std::max(largest, bucket.caches[c].size);
  Scratch deviceParents(batch * sizeof(int64_t)), copy(largest * 4);
  if (deviceParents.failed() || copy.failed())
    return; // no scratch: the error is kept (firstError), nothing runs
  // From pageable memory: the copy is done when this returns.
  TGC_CUDA_CHECK(cudaMemcpyAsync(deviceParents.as<int64_t>(), parents,
                                 batch * sizeof(int64_t),
                                 cudaMemcpyHostToDevice, stream()));
  for (int c = 0; c < bucket.numCaches; ++c) {
    const runtime::CompiledCache &entry = bucket.caches[c];
    if (!entry.perHypothesis || entry.size == 0)
      continue;
    float *rows = deviceFrame().cache + entry.offset;
    TGC_CUDA_CHECK(cudaMemcpyAsync(copy.as<float>(), rows, entry.size * 4,
                                   cudaMemcpyDeviceToDevice, stream()));
    gatherRowsKernel<<<blocksFor(entry.size), kThreads, 0, stream()>>>(
        rows, copy.as<float>(), deviceParents.as<int64_t>(), batch,
        entry.size / batch);
    TGC_CUDA_CHECK_LAUNCH();
  }
}

void downloadLoss(const float *loss, const int32_t *tokens,
                  const float *crossEntropy, const float *norm,
                  runtime::StepFrame &frame) {
  TGC_CUDA_CHECK(cudaMemcpyAsync(&frame.loss, loss, 4, cudaMemcpyDeviceToHost,
                                 stream()));
  if (tokens)
    TGC_CUDA_CHECK(cudaMemcpyAsync(&frame.tokens, tokens, 4,
                                   cudaMemcpyDeviceToHost, stream()));
  if (crossEntropy)
    TGC_CUDA_CHECK(cudaMemcpyAsync(&frame.crossEntropy, crossEntropy, 4,
                                   cudaMemcpyDeviceToHost, stream()));
  frame.hasCrossEntropy = crossEntropy != nullptr;
  if (norm)
    TGC_CUDA_CHECK(cudaMemcpyAsync(&frame.gradNorm, norm, 4,
                                   cudaMemcpyDeviceToHost, stream()));
  TGC_CUDA_CHECK(cudaStreamSynchronize(stream()));
}

} // namespace tgc::cuda
