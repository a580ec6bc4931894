//===- AttentionHeads.cu - the attention kernels' per-head GEMMs ------===//
//
// headsMatmul (AttentionScores.cuh): a group of heads' products. Packed
// heads (head-major tensors, group scratch) are one strided batched GEMM
// (matmul). Sequence-major heads are not evenly spaced (head (b, h) at
// b S H D + h D), so one small kernel writes each head's three matrix
// pointers into scratch and cuBLAS reads them (pointerMatmul).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cuda/AttentionScores.cuh"

namespace tgc::cuda {

template <typename T, typename Out>
__global__ void headPointersKernel(Heads<const T> a, Heads<const T> b,
                                   Heads<Out> out, int64_t n,
                                   const T **aPointers, const T **bPointers,
                                   Out **outPointers) {
  TGC_GRID_STRIDE(i, n) {
    aPointers[i] = a.at(i);
    bPointers[i] = b.at(i);
    outPointers[i] = out.at(i);
  }
}

template <typename T, typename Out>
void headsMatmul(Heads<const T> a, Heads<const T> b, Heads<Out> out,
                 int64_t n, int64_t m, int64_t cols, int64_t k,
                 bool transposeA, bool transposeB) {
  if (n == 0)
    return;
  const bool packed = a.layout.packed(transposeA ? k : m, transposeA ? m : k) &&
                      b.layout.packed(transposeB ? cols : k,
                                      transposeB ? k : cols) &&
                      out.layout.packed(m, cols);
  if (packed) {
    matmul(a.at(0), b.at(0), out.at(0), n, m, cols, k, transposeA, transposeB,
           false);
    return;
  }
  Scratch pointers(3 * n * sizeof(void *));
  const T **aPointers = pointers.as<const T *>(), **bPointers = aPointers + n;
  Out **outPointers = static_cast<Out **>(static_cast<void *>(bPointers + n));
  headPointersKernel<<<blocksFor(n), kThreads, 0, stream()>>>(
      a, b, out, n, aPointers, bPointers, outPointers);
  TGC_CUDA_CHECK_LAUNCH();
  pointerMatmul(aPointers, a.layout.rowStride, bPointers, b.layout.rowStride,
                outPointers, out.layout.rowStride, n, m, cols, k, transposeA,
                transposeB);
}

template void headsMatmul(Heads<const float>, Heads<const float>,
                          Heads<float>, int64_t, int64_t, int64_t, int64_t,
                          bool, bool);
template void headsMatmul(Heads<const Bf16>, Heads<const Bf16>, Heads<float>,
                          int64_t, int64_t, int64_t, int64_t, bool, bool);
template void headsMatmul(Heads<const Bf16>, Heads<const Bf16>, Heads<Bf16>,
                          int64_t, int64_t, int64_t, int64_t, bool, bool);

} // namespace tgc::cuda
