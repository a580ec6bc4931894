//===- GatherKernels.cuh - transposes and broadcasts as gathers -*- CUDA -*-===//
//
// A transpose (strides permuted) or a broadcast (stride 0 replicates) is a
// strided gather: one thread per output element, which reads input offset
// sum c_d * from[d]; a transpose into bf16 rounds on the way. Where the
// innermost dimension is read in place in aligned runs of four, the gather
// moves four values at a time (a quarter of the index arithmetic).
//
// The host side (quads or not, the index type, the grid) is here too,
// written against a launcher `launch(kernel, blocks, arguments...)`:
// Tensor.cu's enqueues the kernel on the kernels' stream,
// TensorEmulatedTest.cpp's runs it on the host (KernelEmulator.h), so that
// both run the same choices.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CUDA_GATHERKERNELS_CUH
#define TGC_RUNTIME_CUDA_GATHERKERNELS_CUH

#include "runtime/kernels/cuda/Bf16Quads.cuh"
#include "runtime/kernels/cuda/Device.h"

#include <cstdint>
#include <type_traits>

namespace tgc::cuda {

/// out [shape] (row-major) where element (c_0..c_r-1) is read from input
/// offset sum c_d * from[d] (a stride of 0 replicates). Passed by value:
/// the shapes travel in the kernel's parameters.
struct Gather {
  int rank = 0;
  int64_t shape[runtime::kMaxRank] = {}, from[runtime::kMaxRank] = {};
};

/// What a gather writes for a value it read: the value, or (a rounding
/// transpose) the value rounded to bf16, four at a time as one uint2.
__device__ inline float narrowed(float x, float *) { return x; }
__device__ inline float4 narrowed(float4 x, float4 *) { return x; }
__device__ inline int32_t narrowed(int32_t x, int32_t *) { return x; }
__device__ inline int4 narrowed(int4 x, int4 *) { return x; }
__device__ inline Bf16 narrowed(float x, Bf16 *) {
  return runtime::roundToBf16(x);
}
__device__ inline uint2 narrowed(float4 x, uint2 *) { return roundedQuad(x); }

/// Index is uint32_t when every offset fits: the division per dimension
/// is then several times cheaper than int64_t's, and it was what limited
/// the kernel (a base step's head transposes took 14 ms).
template <typename Index, typename Element, typename Out>
__global__ void gatherKernel(const Element *input, Out *out, Gather g,
                             int64_t total) {
  Index shape[runtime::kMaxRank], from[runtime::kMaxRank];
  for (int d = 0; d < g.rank; ++d) {
    shape[d] = static_cast<Index>(g.shape[d]);
    from[d] = static_cast<Index>(g.from[d]);
  }
  TGC_GRID_STRIDE(i, total) {
    Index rest = static_cast<Index>(i), source = 0;
    for (int d = g.rank - 1; d >= 0; --d) {
      source += (rest % shape[d]) * from[d];
      rest /= shape[d];
    }
    out[i] = narrowed(input[source], out);
  }
}

template <typename Element, typename Out, typename Launch>
void launchGather(const Element *input, Out *out, const Gather &g,
                  Launch launch) {
  int64_t total = 1; // rank 0: one element
  for (int d = 0; d < g.rank; ++d)
    total *= g.shape[d];
  if (total == 0)
    return;
  // The largest input offset read: the sum of (size - 1) * stride.
  int64_t largest = 0;
  for (int d = 0; d < g.rank; ++d)
    largest += (g.shape[d] - 1) * g.from[d];
  if (total <= UINT32_MAX && largest <= UINT32_MAX)
    launch(gatherKernel<uint32_t, Element, Out>, blocksFor(total), input, out,
           g, total);
  else
    launch(gatherKernel<int64_t, Element, Out>, blocksFor(total), input, out,
           g, total);
}

/// Moves 4 values at a time when the innermost dimension is read in place
/// in runs of 4 aligned values (a head split or merge keeps its 64 values
/// per head together). In and Out are float, or int32_t, or float and Bf16
/// (4 rounded values written as one uint2).
template <typename In, typename Out, typename Launch>
void gatherStrided(const In *input, Out *out, const Gather &g, Launch launch) {
  static_assert(std::is_same_v<In, Out> || std::is_same_v<Out, Bf16>);
  using InQuad = std::conditional_t<std::is_same_v<In, int32_t>, int4, float4>;
  using Quad = std::conditional_t<std::is_same_v<Out, Bf16>, uint2, InQuad>;
  auto aligned = [](const void *p, size_t bytes) {
    return reinterpret_cast<uintptr_t>(p) % bytes == 0;
  };
  int last = g.rank - 1;
  bool byFour = g.rank > 0 && g.from[last] == 1 && g.shape[last] % 4 == 0 &&
                aligned(input, sizeof(InQuad)) && aligned(out, sizeof(Quad));
  for (int d = 0; byFour && d < last; ++d)
    byFour = g.from[d] % 4 == 0;
  if (!byFour)
    return launchGather(input, out, g, launch);
  Gather quads = g;
  quads.shape[last] /= 4;
  for (int d = 0; d < last; ++d)
    quads.from[d] /= 4;
  launchGather(reinterpret_cast<const InQuad *>(input),
               reinterpret_cast<Quad *>(out), quads, launch);
}

/// out = input [inputShape] with its dimensions permuted: out's dimension d
/// is the input's permutation[d].
template <typename In, typename Out, typename Launch>
void transposeTo(const In *input, Out *out, const int64_t *inputShape,
                 const int64_t *permutation, int rank, Launch launch) {
  int64_t strides[runtime::kMaxRank] = {};
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= inputShape[d];
  }
  Gather g;
  g.rank = rank;
  for (int d = 0; d < rank; ++d) {
    g.shape[d] = inputShape[permutation[d]];
    g.from[d] = strides[permutation[d]];
  }
  gatherStrided(input, out, g, launch);
}

/// out [resultShape] = input [inputShape] placed along the result's `dims`
/// and replicated along the others.
template <typename T, typename Launch>
void broadcastOf(const T *input, T *out, const int64_t *resultShape,
                 int resultRank, const int64_t *dims,
                 const int64_t *inputShape, int inputRank, Launch launch) {
  // Result dimensions not named, and named ones the input has as 1, read
  // with stride 0.
  Gather g;
  g.rank = resultRank;
  for (int d = 0; d < resultRank; ++d)
    g.shape[d] = resultShape[d];
  int64_t stride = 1;
  for (int j = inputRank - 1; j >= 0; --j) {
    if (inputShape[j] != 1)
      g.from[dims[j]] = stride;
    stride *= inputShape[j];
  }
  gatherStrided(input, out, g, launch);
}

} // namespace tgc::cuda

#endif // TGC_RUNTIME_CUDA_GATHERKERNELS_CUH
