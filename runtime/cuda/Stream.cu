//===- Stream.cu - the stream, error checks, cuBLAS and scratch memory ----===//
//
// Process-wide state of the kernels, driven from one host thread.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Device.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace tgc::cuda {

namespace {
cudaStream_t currentStream = nullptr;
cublasHandle_t handle = nullptr;
cublasLtHandle_t ltHandle = nullptr;
bool poolConfigured = false;
} // namespace

void setStream(cudaStream_t stream) {
  currentStream = stream;
  if (handle)
    TGC_CUBLAS_CHECK(cublasSetStream(handle, stream));
}

cudaStream_t stream() { return currentStream; }

void check(cudaError_t status, const char *file, int line) {
  if (status == cudaSuccess)
    return;
  std::fprintf(stderr, "%s:%d: CUDA error %s: %s\n", file, line,
               cudaGetErrorName(status), cudaGetErrorString(status));
  std::exit(1);
}

void check(cublasStatus_t status, const char *file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return;
  std::fprintf(stderr, "%s:%d: cuBLAS error %s: %s\n", file, line,
               cublasGetStatusName(status), cublasGetStatusString(status));
  std::exit(1);
}

cublasHandle_t cublas() {
  if (!handle) {
    // The default math mode is full f32: TF32 would need
    // CUBLAS_TF32_TENSOR_OP_MATH and would no longer match the CPU.
    TGC_CUBLAS_CHECK(cublasCreate(&handle));
    TGC_CUBLAS_CHECK(cublasSetStream(handle, currentStream));
  }
  return handle;
}

cublasLtHandle_t cublasLt() {
  if (!ltHandle)
    TGC_CUBLAS_CHECK(cublasLtCreate(&ltHandle));
  return ltHandle;
}

Scratch::Scratch(size_t bytes) {
  if (!poolConfigured) {
    // By default the pool returns freed memory to the driver at every
    // synchronization, and each step would allocate its scratch afresh.
    int device = 0;
    cudaMemPool_t pool;
    TGC_CUDA_CHECK(cudaGetDevice(&device));
    TGC_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
    uint64_t keepAll = UINT64_MAX;
    TGC_CUDA_CHECK(cudaMemPoolSetAttribute(
        pool, cudaMemPoolAttrReleaseThreshold, &keepAll));
    poolConfigured = true;
  }
  if (bytes > 0)
    TGC_CUDA_CHECK(cudaMallocAsync(&memory, bytes, currentStream));
}

Scratch::~Scratch() {
  if (memory)
    TGC_CUDA_CHECK(cudaFreeAsync(memory, currentStream));
}

} // namespace tgc::cuda
