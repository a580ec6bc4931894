//===- ReduceKernels.cuh - reductions over flagged dimensions --*- CUDA -*-===//
//
// The input is seen as runs of kept and reduced dimensions (adjacent
// dimensions of one kind merged, size-1 ones dropped). The kept runs index
// the output; the reduced runs index the elements folded into it. Double
// accumulators, as the CPU kernel: sums over many rows (bias gradients)
// stay exact to float precision. The input is f32, or bf16 for
// tg.reduce_sum (a bias gradient read from its GEMMs' bf16 operand).
//
// Internal to TgcCudaKernels: Reduce.cu launches these kernels (and is the
// one CUDA source that includes this header); ReduceEmulatedTest.cpp runs
// them on the host as Reduce.cu launches them.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CUDA_REDUCEKERNELS_CUH
#define TGC_RUNTIME_CUDA_REDUCEKERNELS_CUH

#include "runtime/kernels/cuda/BlockReduce.cuh"
#include "runtime/kernels/cuda/Device.h"

#include <algorithm>
#include <cmath>

namespace tgc::cuda {

using runtime::kMaxRank;

/// Runs of dimensions, outermost first, with their input strides.
struct Runs {
  int count = 0;
  int64_t size[kMaxRank] = {}, stride[kMaxRank] = {};
};

struct ReducePlan {
  Runs kept, reduced;
  int64_t outCount = 1, reduceCount = 1;
  bool innermostReduced = false;
};

/// Outputs per block of reduceAcrossRows, and slices of the reduction.
constexpr int kColumns = 32, kSlices = 32;

/// Input offset of element `index` of the runs (row-major over them).
/// One run, the common case (a bias's rows, a row's columns), needs no
/// 64-bit division, which costs more than the load it addresses.
__device__ inline int64_t offsetOf(int64_t index, const Runs &runs) {
  if (runs.count == 1)
    return index * runs.stride[0];
  int64_t offset = 0;
  for (int x = runs.count - 1; x >= 0; --x) {
    offset += (index % runs.size[x]) * runs.stride[x];
    index /= runs.size[x];
  }
  return offset;
}

template <Reduction K> __device__ double identity() {
  return K == Reduction::Max ? -INFINITY : 0.0;
}
template <Reduction K> __device__ double combine(double acc, double x) {
  // A NaN element makes its maximum NaN (as tg.maximum's).
  return K == Reduction::Max ? (acc < x || x != x ? x : acc) : acc + x;
}

/// An input element as a number: f32 as it is, bf16 widened (exactly).
__device__ inline float valueOf(float x) { return x; }
__device__ inline float valueOf(Bf16 x) { return runtime::widen(x); }

/// Innermost run reduced: one block per output, its threads striding over
/// the reduced elements (neighbouring threads read neighbouring floats).
template <Reduction K, typename T>
__global__ void reduceAlongRows(const T *input, float *out, ReducePlan plan,
                                double divisor) {
  TGC_FOR_ROW(o, plan.outCount) {
    const T *base = input + offsetOf(o, plan.kept);
    double acc = identity<K>();
    for (int64_t r = threadIdx.x; r < plan.reduceCount; r += blockDim.x)
      acc = combine<K>(acc, valueOf(base[offsetOf(r, plan.reduced)]));
    acc = K == Reduction::Max ? blockMax(acc) : blockSum(acc);
    if (threadIdx.x == 0)
      out[o] = static_cast<float>(acc / divisor);
  }
}

/// Innermost run kept: a block is kColumns neighbouring outputs (x, reading
/// neighbouring floats) times kSlices interleaved slices of the reduced
/// elements (y), combined in slice order.
/// Outer runs reduced: a block per kColumns outputs and slice of the
/// reduced rows (blockIdx.y; a base batch's 25k rows over 16 blocks of a
/// bias's 512 outputs left most of the GPU idle), its threads kColumns
/// columns by kSlices rows. With one slice the block writes the outputs,
/// else its partial results, which finishAcrossRows folds in slice order
/// (the same order on every run).
template <Reduction K, typename T>
__global__ void __launch_bounds__(kColumns * kSlices)
    reduceAcrossRows(const T *input, float *out, double *partials,
                     ReducePlan plan, int64_t rowsPerSlice, double divisor) {
  __shared__ double partial[kSlices][kColumns + 1];
  int64_t o = blockIdx.x * int64_t(kColumns) + threadIdx.x;
  int64_t firstRow = blockIdx.y * rowsPerSlice,
          endRow = min(plan.reduceCount, firstRow + rowsPerSlice);
  double acc = identity<K>();
  if (o < plan.outCount) {
    const T *base = input + offsetOf(o, plan.kept);
    for (int64_t r = firstRow + threadIdx.y; r < endRow; r += kSlices)
      acc = combine<K>(acc, valueOf(base[offsetOf(r, plan.reduced)]));
  }
  partial[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y != 0 || o >= plan.outCount)
    return;
  for (int y = 1; y < kSlices; ++y)
    acc = combine<K>(acc, partial[y][threadIdx.x]);
  if (gridDim.y == 1)
    out[o] = static_cast<float>(acc / divisor);
  else
    partials[blockIdx.y * plan.outCount + o] = acc;
}

template <Reduction K>
__global__ void finishAcrossRows(const double *partials, float *out,
                                 int64_t outCount, int slices, double divisor) {
  TGC_GRID_STRIDE(o, outCount) {
    double acc = identity<K>();
    for (int y = 0; y < slices; ++y)
      acc = combine<K>(acc, partials[y * outCount + o]);
    out[o] = static_cast<float>(acc / divisor);
  }
}

inline ReducePlan planOf(const int64_t *shape, int rank, const bool *reduced) {
  int64_t size[kMaxRank];
  bool isReduced[kMaxRank];
  int runs = 0;
  for (int d = 0; d < rank; ++d) {
    if (shape[d] == 1)
      continue;
    if (runs > 0 && isReduced[runs - 1] == reduced[d]) {
      size[runs - 1] *= shape[d];
      continue;
    }
    size[runs] = shape[d];
    isReduced[runs++] = reduced[d];
  }
  ReducePlan plan;
  int64_t stride = 1, strides[kMaxRank];
  for (int x = runs - 1; x >= 0; --x) {
    strides[x] = stride;
    stride *= size[x];
  }
  for (int x = 0; x < runs; ++x) {
    Runs &into = isReduced[x] ? plan.reduced : plan.kept;
    into.size[into.count] = size[x];
    into.stride[into.count++] = strides[x];
    (isReduced[x] ? plan.reduceCount : plan.outCount) *= size[x];
  }
  plan.innermostReduced = runs > 0 && isReduced[runs - 1];
  return plan;
}

/// reduceAcrossRows' grid: blocks of kColumns outputs (x) by slices of the
/// reduced rows (y), and each slice's rows. Enough slices for about 512
/// blocks, each at least 1024 rows.
struct AcrossRowsGrid {
  int64_t blocks = 1, slices = 1, rowsPerSlice = 0;
};
inline AcrossRowsGrid acrossRowsGrid(const ReducePlan &plan) {
  AcrossRowsGrid grid;
  grid.blocks = (plan.outCount + kColumns - 1) / kColumns;
  grid.slices = std::clamp<int64_t>(
      std::min(512 / grid.blocks, plan.reduceCount / 1024), 1, 256);
  grid.rowsPerSlice = (plan.reduceCount + grid.slices - 1) / grid.slices;
  grid.slices =
      grid.rowsPerSlice > 0
          ? (plan.reduceCount + grid.rowsPerSlice - 1) / grid.rowsPerSlice
          : 1;
  return grid;
}

} // namespace tgc::cuda

#endif // TGC_RUNTIME_CUDA_REDUCEKERNELS_CUH
