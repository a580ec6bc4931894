//===- Stream.cu - the stream, error checks, cuBLAS and scratch memory ----===//
//
// Process-wide state of the kernels, driven from one host thread.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cuda/Device.h"

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace tgc::cuda {

namespace {
cudaStream_t currentStream = nullptr;
cublasHandle_t handle = nullptr;
cublasLtHandle_t ltHandle = nullptr;
bool poolConfigured = false;

/// The first failed check's message ("" while none failed), for
/// firstError(); the mutex makes a check from another thread safe.
std::mutex failureMutex;
std::string failure;

/// Keeps "file:line: LIBRARY error NAME: message" unless an earlier
/// failure is kept already; returns false for the check.
bool fail(const char *file, int line, const char *library, const char *name,
          const char *message) {
  std::lock_guard<std::mutex> lock(failureMutex);
  if (failure.empty())
    failure = std::string(file) + ":" + std::to_string(line) + ": " + library +
              " error " + name + ": " + message;
  return false;
}
} // namespace

void setStream(cudaStream_t stream) {
  currentStream = stream;
  if (handle)
    TGC_CUBLAS_CHECK(cublasSetStream(handle, stream));
}

cudaStream_t stream() { return currentStream; }

bool check(cudaError_t status, const char *file, int line) {
  return status == cudaSuccess ||
         fail(file, line, "CUDA", cudaGetErrorName(status),
              cudaGetErrorString(status));
}

bool check(cublasStatus_t status, const char *file, int line) {
  return status == CUBLAS_STATUS_SUCCESS ||
         fail(file, line, "cuBLAS", cublasGetStatusName(status),
              cublasGetStatusString(status));
}

bool failWith(const char *file, int line, const std::string &what) {
  std::lock_guard<std::mutex> lock(failureMutex);
  if (failure.empty())
    failure = std::string(file) + ":" + std::to_string(line) + ": " + what;
  return false;
}

bool firstError(std::string &why) {
  std::lock_guard<std::mutex> lock(failureMutex);
  if (failure.empty())
    return false;
  why = failure;
  return true;
}

void forgetFailure() {
  std::lock_guard<std::mutex> lock(failureMutex);
  failure.clear();
  (void)cudaGetLastError(); // and CUDA's own record of it
}

const void *persistentTable(const void *host, size_t bytes) {
  // Keyed by the contents: a step's tables are the same every step.
  static std::unordered_map<std::string, void *> tables;
  std::string key(static_cast<const char *>(host), bytes);
  if (auto it = tables.find(key); it != tables.end())
    return it->second;
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  if (!TGC_CUDA_CHECK(cudaStreamIsCapturing(currentStream, &capturing)))
    return nullptr;
  if (capturing != cudaStreamCaptureStatusNone) {
    TGC_CUDA_CHECK(cudaErrorStreamCaptureUnsupported);
    return nullptr;
  }
  void *device = nullptr;
  if (!TGC_CUDA_CHECK(cudaMalloc(&device, bytes)))
    return nullptr;
  if (!TGC_CUDA_CHECK(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice))) {
    cudaFree(device);
    return nullptr;
  }
  tables.emplace(std::move(key), device);
  return device;
}

size_t sharedMemoryLimit() {
  static int limit = -1;
  if (limit < 0) {
    int device = 0, asked = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&asked, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                               device) != cudaSuccess) {
      // The GEMMs will meet it, and keep it. Not kept here: a later call
      // asks again (a 0 kept refused the fused kernels for good).
      (void)cudaGetLastError();
      return 0;
    }
    limit = asked;
  }
  return static_cast<size_t>(limit);
}

cublasHandle_t cublas() {
  if (!handle) {
    // The default math mode is full f32: TF32 would need
    // CUBLAS_TF32_TENSOR_OP_MATH and would no longer match the CPU.
    // Kept only once created: a failed create leaves nothing to use.
    cublasHandle_t created = nullptr;
    if (!TGC_CUBLAS_CHECK(cublasCreate(&created)))
      return nullptr;
    handle = created;
    TGC_CUBLAS_CHECK(cublasSetStream(handle, currentStream));
    // A split sum's partial sums in f32, never in a bf16 result's type
    // (cuBLAS may otherwise reduce them there): each bf16 result rounded
    // once, as on the CPU. Still full f32, no TF32.
    TGC_CUBLAS_CHECK(cublasSetMathMode(
        handle, static_cast<cublasMath_t>(
                    CUBLAS_DEFAULT_MATH |
                    CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
  }
  return handle;
}

cublasLtHandle_t cublasLt() {
  if (!ltHandle) {
    cublasLtHandle_t created = nullptr;
    if (TGC_CUBLAS_CHECK(cublasLtCreate(&created)))
      ltHandle = created;
  }
  return ltHandle;
}

Scratch::Scratch(size_t bytes) : bytes(bytes) {
  if (!poolConfigured) {
    // By default the pool returns freed memory to the driver at every
    // synchronization, and each step would allocate its scratch afresh.
    // (After an error: tried again on the next call.)
    int device = 0;
    cudaMemPool_t pool = nullptr;
    uint64_t keepAll = UINT64_MAX;
    poolConfigured =
        TGC_CUDA_CHECK(cudaGetDevice(&device)) &&
        TGC_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device)) &&
        TGC_CUDA_CHECK(cudaMemPoolSetAttribute(
            pool, cudaMemPoolAttrReleaseThreshold, &keepAll));
  }
  // On an error `memory` stays null and the error, with the bytes, is kept
  // for firstError().
  if (bytes > 0) {
    cudaError_t status = cudaMallocAsync(&memory, bytes, currentStream);
    if (status != cudaSuccess) {
      memory = nullptr;
      TGC_CUDA_FAIL(std::string("CUDA error ") + cudaGetErrorName(status) +
                    ": " + cudaGetErrorString(status) + " (" +
                    std::to_string(bytes) + " bytes of scratch memory)");
    }
  }
}

Scratch::~Scratch() {
  if (memory)
    TGC_CUDA_CHECK(cudaFreeAsync(memory, currentStream));
}

} // namespace tgc::cuda
