//===- Device.h - what the CUDA kernel files share -------------*- C++ -*-===//
//
// Internal to TgcCudaKernels (generated code includes Kernels.h only): the
// cuBLAS and cuBLASLt handles and their error check, per-call device scratch memory, and
// launch sizes.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CUDA_DEVICE_H
#define TGC_RUNTIME_CUDA_DEVICE_H

#include "runtime/kernels/cuda/Kernels.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <cublasLt.h>
#include <cublas_v2.h>

namespace tgc::cuda {

/// As check(cudaError_t): false after keeping the first failure as
/// "file:line: cuBLAS error NAME: message" for firstError().
bool check(cublasStatus_t status, const char *file, int line);
#define TGC_CUBLAS_CHECK(expr) ::tgc::cuda::check((expr), __FILE__, __LINE__)

/// Checks the launch just made (bad configuration, too much shared memory).
#define TGC_CUDA_CHECK_LAUNCH() TGC_CUDA_CHECK(cudaGetLastError())

/// The process's cuBLAS handle, created on first use, bound to stream();
/// null when it cannot be created (the error is kept for firstError()).
cublasHandle_t cublas();
/// The process's cuBLASLt handle, created on first use (cuBLASLt takes the
/// stream per call); null as cublas().
cublasLtHandle_t cublasLt();

/// out [m, n] = op(a) op(b) for row-major a and b (op(a) [m, k], op(b)
/// [k, n]), plus out's values where `accumulate`: one GEMM as matmul runs
/// it (bf16 operands on the tensor cores), f32 result. For kernels made of
/// GEMMs and row kernels (the chunked output loss).
void gemmInto(const float *a, const float *b, float *out, int64_t m,
              int64_t n, int64_t k, bool transposeA, bool transposeB,
              bool accumulate);
void gemmInto(const Bf16 *a, const Bf16 *b, float *out, int64_t m, int64_t n,
              int64_t k, bool transposeA, bool transposeB, bool accumulate);

/// out[i] [rows, cols] = op(a[i]) op(b[i]) for i < batch, each matrix
/// row-major at the device pointer in a device array, its rows `ld`
/// elements apart: for batches that are not evenly spaced in memory
/// (sequence-major attention heads). T float or Bf16, Out float or (with
/// Bf16 operands) Bf16; f32 accumulation, as matmul.
template <typename T, typename Out>
void pointerMatmul(const T *const *a, int64_t lda, const T *const *b,
                   int64_t ldb, Out *const *out, int64_t ldc, int64_t batch,
                   int64_t rows, int64_t cols, int64_t depth, bool transposeA,
                   bool transposeB);

/// How many linear calls so far ran cuBLASLt's fused epilogue
/// (the others: cuBLAS and the epilogue kernel); tests read it.
int64_t fusedLinearCalls();
/// How many weightBiasGrad calls so far had cuBLASLt's GEMM add up the bias
/// gradient (the others: matmul and reduce); tests read it.
int64_t fusedWeightBiasGradCalls();

/// A cuBLASLt GEMM for one shape, made once: its descriptors (D written
/// over C, in place) and the algorithm the heuristic picked; `usable` is
/// false where there is none (the caller computes it otherwise).
struct LtPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspaceBytes = 0;
  bool usable = false;
};

/// Asks cuBLASLt's heuristic for `plan`'s algorithm (its descriptor and
/// layouts made), with up to 32 MiB of workspace and every matrix aligned
/// to `alignment` bytes; `usable` says whether it found one. For a result
/// narrower than f32 (`resultType`) only algorithms that keep a split sum's
/// partial sums in f32: one rounding of each result, as on the CPU.
void pickAlgorithm(LtPlan &plan, uint32_t alignment,
                   cudaDataType_t resultType);

/// D = A B (alpha 1, beta 0) with `plan` on stream(). False where cuBLASLt
/// finds after all that the algorithm does not support these operands: the
/// plan is then marked unusable, and the caller computes it otherwise.
bool runPlan(LtPlan &plan, const void *a, const void *b, void *d);

/// The largest power of two up to 256 dividing the address (256 for null):
/// what cuBLASLt's heuristic is told of an operand's alignment.
inline uint32_t alignmentOf(const void *p) {
  uintptr_t bits = 256 | reinterpret_cast<uintptr_t>(p);
  return static_cast<uint32_t>(bits & (~bits + 1)); // lowest set bit
}

/// Device memory for one call's intermediate values (partial sums, a copied
/// table), from CUDA's stream-ordered pool: allocated on stream() and given
/// back on it when the call has queued its kernels, so the pool hands the
/// same bytes to the next call without a synchronization. Null when the
/// allocation failed (the error, with the bytes asked for, is kept for
/// firstError()): a caller checks failed() before queuing work on it.
class Scratch {
public:
  explicit Scratch(size_t bytes);
  ~Scratch();
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;

  template <typename T> T *as() const { return static_cast<T *>(memory); }
  /// Bytes were asked for and none were given: the call must not run.
  bool failed() const { return bytes > 0 && !memory; }

private:
  void *memory = nullptr;
  size_t bytes;
};

/// Keeps "file:line: what" as the first failure unless one is kept
/// already (firstError()); returns false. For failures that are no CUDA
/// or cuBLAS status: NCCL's, or a kernel's own invariant.
bool failWith(const char *file, int line, const std::string &what);
#define TGC_CUDA_FAIL(what) ::tgc::cuda::failWith(__FILE__, __LINE__, (what))

/// Declares a kernel's dynamic shared memory as `name`, 128-byte aligned
/// bytes (test/unit/kernels/cuda/KernelEmulator.h gives the host's).
#ifndef TGC_DYNAMIC_SHARED_MEMORY
#define TGC_DYNAMIC_SHARED_MEMORY(name)                                        \
  extern __shared__ __align__(128) unsigned char name[]
#endif

/// The dynamic shared memory a block may opt into on this GPU (H100, H200:
/// 227 KiB; A100: 163 KiB; sm_86 and sm_89: 99 KiB), or 0 where it cannot be
/// asked.
size_t sharedMemoryLimit();

/// Past 48 KiB of dynamic shared memory a kernel must opt in, once; done
/// on the first (eager) call, before any graph capture. A refusal is no
/// error of the step: the caller takes its other path (the loss's two-pass
/// kernel), or its launch fails and says so.
template <typename Kernel>
void allowSharedMemory(Kernel kernel, size_t bytes, bool &allowed) {
  if (allowed)
    return;
  allowed = cudaFuncSetAttribute(kernel,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(bytes)) == cudaSuccess;
  if (!allowed)
    (void)cudaGetLastError();
}

/// Threads per block of the elementwise and row kernels (a multiple of 32:
/// the block reductions work warp by warp).
inline constexpr int kThreads = 256;

/// Blocks for a grid-stride loop over `count` elements: enough to fill the
/// GPU, never more than the elements need.
inline unsigned blocksFor(int64_t count) {
  constexpr int64_t kMaxBlocks = 4096;
  return static_cast<unsigned>(
      std::clamp<int64_t>((count + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

/// Blocks for a row kernel: one block per row, looping when rows exceed the
/// grid.
inline unsigned rowBlocks(int64_t rows) {
  return static_cast<unsigned>(std::clamp<int64_t>(rows, 1, 1 << 16));
}

/// A row kernel's loops: rows over the blocks, a row's columns over the
/// block's threads (the same thread always gets the same column).
#define TGC_FOR_ROW(r, rows)                                                   \
  for (int64_t r = blockIdx.x; r < (rows); r += gridDim.x)
#define TGC_FOR_COLUMN(c, width)                                               \
  for (int64_t c = threadIdx.x; c < (width); c += blockDim.x)

/// A kernel's loop over elements [0, count) with the whole grid.
#define TGC_GRID_STRIDE(i, count)                                              \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;             \
       i < (count); i += int64_t(gridDim.x) * blockDim.x)

} // namespace tgc::cuda

#endif // TGC_RUNTIME_CUDA_DEVICE_H
