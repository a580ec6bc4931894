//===- Reduce.cu - sum, max and mean over flagged dimensions --------------===//
//
// The launches of ReduceKernels.cuh's kernels (which says how they work),
// and allFinite, the non-finite check of a diverged step.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cuda/ReduceKernels.cuh"

namespace tgc::cuda {

template <Reduction K, typename T>
static void launch(const T *input, float *out, const ReducePlan &plan,
                   double divisor) {
  if (plan.innermostReduced) {
    reduceAlongRows<K><<<rowBlocks(plan.outCount), kThreads, 0, stream()>>>(
        input, out, plan, divisor);
  } else {
    const AcrossRowsGrid shape = acrossRowsGrid(plan);
    Scratch partials(
        shape.slices > 1 ? shape.slices * plan.outCount * sizeof(double) : 0);
    if (partials.failed())
      return; // no scratch: the error is kept (firstError), nothing runs
    dim3 grid(static_cast<unsigned>(shape.blocks),
              static_cast<unsigned>(shape.slices));
    reduceAcrossRows<K><<<grid, dim3(kColumns, kSlices), 0, stream()>>>(
        input, out, partials.as<double>(), plan, shape.rowsPerSlice, divisor);
    if (shape.slices > 1) {
      TGC_CUDA_CHECK_LAUNCH();
      finishAcrossRows<K><<<blocksFor(plan.outCount), kThreads, 0, stream()>>>(
          partials.as<double>(), out, plan.outCount,
          static_cast<int>(shape.slices), divisor);
    }
  }
  TGC_CUDA_CHECK_LAUNCH();
}

template <typename T>
static void reduceOf(const T *input, float *out, const int64_t *shape, int rank,
                     const bool *reduced, Reduction kind) {
  ReducePlan plan = planOf(shape, rank, reduced);
  if (plan.outCount == 0)
    return;
  // As the CPU kernel: a mean over no elements is 0/0.
  double divisor =
      kind == Reduction::Mean ? static_cast<double>(plan.reduceCount) : 1.0;
  if (kind == Reduction::Max)
    launch<Reduction::Max>(input, out, plan, divisor);
  else
    launch<Reduction::Sum>(input, out, plan, divisor);
}

void reduce(const float *input, float *out, const int64_t *shape, int rank,
            const bool *reduced, Reduction kind) {
  reduceOf(input, out, shape, rank, reduced, kind);
}

void reduce(const Bf16 *input, float *out, const int64_t *shape, int rank,
            const bool *reduced, Reduction kind) {
  reduceOf(input, out, shape, rank, reduced, kind);
}

//===--- allFinite: the GPU's checkTrainStep ------------------------------===//

namespace {
/// Sets *found where an element is a NaN or an infinity.
__global__ void findNonFinite(const float *values, int64_t count, int *found) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x)
    if (!isfinite(values[i]))
      *found = 1;
}
} // namespace

bool allFinite(const float *values, int64_t count) {
  // One flag for the process, and its pinned host copy: the call is
  // synchronous, made op by op after a diverged step only.
  static int *found = nullptr, *host = nullptr;
  if (!found && (!TGC_CUDA_CHECK(cudaMalloc(&found, sizeof(int))) ||
                 !TGC_CUDA_CHECK(cudaMallocHost(&host, sizeof(int))))) {
    found = nullptr;
    return true; // the failure is kept: the caller reports it, not an op
  }
  if (count <= 0)
    return true;
  *host = 0;
  TGC_CUDA_CHECK(cudaMemsetAsync(found, 0, sizeof(int), stream()));
  findNonFinite<<<blocksFor(count), kThreads, 0, stream()>>>(values, count,
                                                             found);
  TGC_CUDA_CHECK_LAUNCH();
  TGC_CUDA_CHECK(cudaMemcpyAsync(host, found, sizeof(int),
                                 cudaMemcpyDeviceToHost, stream()));
  return !TGC_CUDA_CHECK(cudaStreamSynchronize(stream())) || *host == 0;
}

} // namespace tgc::cuda
