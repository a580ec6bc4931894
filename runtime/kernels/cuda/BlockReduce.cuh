//===- BlockReduce.cuh - sums and maxima over a warp or block -*- CUDA -*-===//
//
// Internal to TgcCudaKernels. Butterfly shuffles leave the result in every
// lane, and the block versions combine the warps' results in warp order, so
// a reduction's value depends only on the block size: the same inputs give
// the same bits on every run.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CUDA_BLOCKREDUCE_CUH
#define TGC_RUNTIME_CUDA_BLOCKREDUCE_CUH

namespace tgc::cuda {

struct SumOp {
  template <typename T> __device__ T operator()(T a, T b) const {
    return a + b;
  }
};
/// A NaN in either makes the maximum NaN (a > b alone drops a NaN a).
struct MaxOp {
  template <typename T> __device__ T operator()(T a, T b) const {
    return a > b || a != a ? a : b;
  }
};

/// Combines `value` over the 32 lanes of a (full) warp.
template <typename T, typename Op>
__device__ T warpReduce(T value, Op op) {
  for (int offset = 16; offset > 0; offset /= 2)
    value = op(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

/// Combines `value` over each group of kLanes adjacent lanes (a power of 2
/// up to 32; the groups of a warp may leave a loop at different times).
template <int kLanes, typename T, typename Op>
__device__ T laneGroupReduce(T value, Op op) {
  static_assert(kLanes > 0 && kLanes <= 32 && (kLanes & (kLanes - 1)) == 0);
  const unsigned group =
      kLanes == 32 ? 0xffffffffu
                   : ((1u << kLanes) - 1) << (threadIdx.x % 32 / kLanes * kLanes);
  for (int offset = kLanes / 2; offset > 0; offset /= 2)
    value = op(value, __shfl_xor_sync(group, value, offset));
  return value;
}

/// Combines `value` over the whole block (blockDim.x a multiple of 32, one
/// dimension); every thread gets the result. Every thread must call it.
template <typename T, typename Op>
__device__ T blockReduce(T value, Op op) {
  __shared__ T partial[32];
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int warps = blockDim.x / 32;
  value = warpReduce(value, op);
  __syncthreads(); // an earlier call may still be reading `partial`
  if (lane == 0)
    partial[warp] = value;
  __syncthreads();
  T total = partial[0];
  for (int w = 1; w < warps; ++w)
    total = op(total, partial[w]);
  return total;
}

template <typename T> __device__ T blockSum(T value) {
  return blockReduce(value, SumOp{});
}
template <typename T> __device__ T blockMax(T value) {
  return blockReduce(value, MaxOp{});
}

} // namespace tgc::cuda

#endif // TGC_RUNTIME_CUDA_BLOCKREDUCE_CUH
