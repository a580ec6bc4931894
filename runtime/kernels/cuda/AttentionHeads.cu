//===- AttentionHeads.cu - the attention kernels' per-head GEMMs ------===//
//
// headsMatmul (AttentionScores.cuh): a group of heads' products. Packed
// heads (head-major tensors, group scratch) are one strided batched GEMM
// (matmul). Sequence-major heads are not evenly spaced (head (b, h) at
// b S H D + h D), so one kernel a call writes every operand's per-head
// matrix pointers (HeadPointers) and cuBLAS reads them (pointerMatmul).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cuda/AttentionScores.cuh"

namespace tgc::cuda {

void *const *HeadPointers::reserve(void *base, size_t elementBytes,
                                   HeadLayout layout, int64_t count) {
  if (table.failed())
    return nullptr; // the error is kept; failed() stops the caller
  if (operands.size == kMaxOperands || operands.entries + count > capacity) {
    TGC_CUDA_FAIL("internal error: an attention kernel miscounted its "
                  "head-pointer table");
    return nullptr;
  }
  operands.operand[operands.size++] = {
      static_cast<char *>(base), static_cast<int64_t>(elementBytes), count,
      operands.entries, layout};
  void *const *first = table.as<void *>() + operands.entries;
  operands.entries += count;
  return first;
}

__global__ void headPointersKernel(HeadPointers::Operands operands,
                                   void **table) {
  TGC_GRID_STRIDE(e, operands.entries) {
    int o = 0;
    while (e >= operands.operand[o].firstEntry + operands.operand[o].count)
      ++o;
    const HeadPointers::Operand &x = operands.operand[o];
    table[e] = x.base + x.layout.offset(e - x.firstEntry) * x.elementBytes;
  }
}

void HeadPointers::fill() {
  if (operands.entries == 0 || table.failed())
    return;
  headPointersKernel<<<blocksFor(operands.entries), kThreads, 0, stream()>>>(
      operands, table.as<void *>());
  TGC_CUDA_CHECK_LAUNCH();
}

template <typename T, typename Out>
void headsMatmul(Heads<const T> a, Heads<const T> b, Heads<Out> out,
                 int64_t n, int64_t m, int64_t cols, int64_t k,
                 bool transposeA, bool transposeB) {
  if (n == 0)
    return;
  if (a.pointers && b.pointers && out.pointers) {
    pointerMatmul(a.pointers + a.first, a.layout.rowStride,
                  b.pointers + b.first, b.layout.rowStride,
                  out.pointers + out.first, out.layout.rowStride, n, m, cols,
                  k, transposeA, transposeB);
    return;
  }
  const bool packed = a.layout.packed(transposeA ? k : m, transposeA ? m : k) &&
                      b.layout.packed(transposeB ? cols : k,
                                      transposeB ? k : cols) &&
                      out.layout.packed(m, cols);
  if (!packed) { // unevenly spaced heads need HeadPointers
    TGC_CUDA_FAIL("internal error: attention heads that are not evenly "
                  "spaced reached a GEMM without their pointers");
    return;
  }
  matmul(a.at(0), b.at(0), out.at(0), n, m, cols, k, transposeA, transposeB,
         false);
}

template void headsMatmul(Heads<const float>, Heads<const float>,
                          Heads<float>, int64_t, int64_t, int64_t, int64_t,
                          bool, bool);
template void headsMatmul(Heads<const Bf16>, Heads<const Bf16>, Heads<float>,
                          int64_t, int64_t, int64_t, int64_t, bool, bool);
template void headsMatmul(Heads<const Bf16>, Heads<const Bf16>, Heads<Bf16>,
                          int64_t, int64_t, int64_t, int64_t, bool, bool);

} // namespace tgc::cuda
