//===- TensorCoreTiles.cuh - a warp's tensor-core products -*- CUDA -*-===//
//
// Internal to TgcCudaKernels. mma.m16n8k16 (bf16 operands, f32
// accumulation; sm_80 and later) with its operands read from row-major
// bf16 tiles in shared memory and its results kept in registers, in the
// layouts of FragmentLayout.h: a product's accumulator tile is the next
// product's A operand once rounded to bf16 (toOperand), with no trip
// through shared memory. Tiles' rows are padded by 8 elements past a
// multiple of 8, so that the 32 lanes' 4-byte loads meet 32 banks.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CUDA_TENSORCORETILES_CUH
#define TGC_RUNTIME_CUDA_TENSORCORETILES_CUH

#include "runtime/kernels/KernelTypes.h"
#include "runtime/kernels/cuda/FragmentLayout.h"

#include <cstdint>

namespace tgc::cuda::tiles {

using Bits = uint16_t; // a bf16 in shared memory

/// A 16 x 16 A operand (4 registers of 2 bf16), a 16 x 8 B operand (2), a
/// 16 x 8 f32 accumulator (4).
using OperandA = uint32_t[4];
using OperandB = uint32_t[2];
using Accumulator = float[4];

#ifndef __CUDA_ARCH__
/// The host's mma, where a test runs kernels on the host
/// (test/unit/kernels/cuda/KernelEmulator.h); defined there only.
void emulatedMma(Accumulator &d, const OperandA &a, const OperandB &b);
#endif

/// d += a b on the tensor cores.
__device__ inline void mma(Accumulator &d, const OperandA &a,
                           const OperandB &b) {
#ifdef __CUDA_ARCH__
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  emulatedMma(d, a, b);
#endif
}

__device__ inline uint32_t wordAt(const Bits *tile, int stride, int row,
                                  int column) {
  return *reinterpret_cast<const uint32_t *>(tile + row * stride + column);
}

/// Two bf16 as one register, the first in the low half (the lower column).
__device__ inline uint32_t pairOf(Bits low, Bits high) {
  return static_cast<uint32_t>(low) | static_cast<uint32_t>(high) << 16;
}

/// Rows [0, 16) x columns [k, k + 16) of a row-major tile as an A operand.
__device__ inline void loadA(OperandA &a, const Bits *tile, int stride, int k,
                             int lane) {
#pragma unroll
  for (int r = 0; r < 4; ++r)
    a[r] = wordAt(tile, stride, fragment::operandARow(lane, r),
                  k + fragment::operandAColumn(lane, r, 0));
}

/// B (k, n) = tile[n0 + n][k0 + k]: a tile's rows n0.. read as the columns
/// of B (q k^T's keys); a register's two k are adjacent in the row.
__device__ inline void loadBFromRows(OperandB &b, const Bits *tile, int stride,
                                     int k0, int n0, int lane) {
#pragma unroll
  for (int r = 0; r < 2; ++r)
    b[r] = wordAt(tile, stride, n0 + fragment::operandBColumn(lane),
                  k0 + fragment::operandBRow(lane, r, 0));
}

/// B (k, n) = tile[k0 + k][n0 + n]: the tile as it is (p v's values); a
/// register's two k are two rows.
__device__ inline void loadB(OperandB &b, const Bits *tile, int stride, int k0,
                             int n0, int lane) {
  const Bits *column = tile + n0 + fragment::operandBColumn(lane);
#pragma unroll
  for (int r = 0; r < 2; ++r)
    b[r] = pairOf(column[(k0 + fragment::operandBRow(lane, r, 0)) * stride],
                  column[(k0 + fragment::operandBRow(lane, r, 1)) * stride]);
}

/// Columns [16 j, 16 j + 16) of a 16-row accumulator (tiles 2 j and
/// 2 j + 1 of 8 columns), rounded to bf16 (round to nearest even, as the
/// CPU), as an A operand.
__device__ inline void toOperand(OperandA &a, const Accumulator &left,
                                 const Accumulator &right) {
  auto bits = [&](int r, int h) {
    const Accumulator &tile = r < 2 ? left : right;
    return runtime::roundToBf16(tile[fragment::accumulatorOf(r, h)]).bits;
  };
#pragma unroll
  for (int r = 0; r < 4; ++r)
    a[r] = pairOf(bits(r, 0), bits(r, 1));
}

/// out[n] = a b^T for a warp: a the 16 rows at `rows`, b the Columns rows
/// at `columns` (both D wide, row-major, `stride` apart), out Columns / 8
/// accumulator tiles.
template <int D, int Columns>
__device__ void productWithRows(Accumulator (&out)[Columns / 8],
                                const Bits *rows, const Bits *columns,
                                int stride, int lane) {
#pragma unroll
  for (int n = 0; n < Columns / 8; ++n)
    out[n][0] = out[n][1] = out[n][2] = out[n][3] = 0.0f;
#pragma unroll
  for (int k = 0; k < D; k += 16) {
    OperandA a;
    loadA(a, rows, stride, k, lane);
#pragma unroll
    for (int n = 0; n < Columns / 8; ++n) {
      OperandB b;
      loadBFromRows(b, columns, stride, k, 8 * n, lane);
      mma(out[n], a, b);
    }
  }
}

/// acc[n] += a b for a warp: a one A operand (16 x 16, toOperand), b the
/// 16 rows at `rows` (D wide, row-major, `stride` apart).
template <int D>
__device__ void accumulateChunk(Accumulator (&acc)[D / 8], const OperandA &a,
                                const Bits *rows, int stride, int lane) {
#pragma unroll
  for (int n = 0; n < D / 8; ++n) {
    OperandB b;
    loadB(b, rows, stride, 0, 8 * n, lane);
    mma(acc[n], a, b);
  }
}

/// acc[n] += a b for a warp: a the K / 16 A operands of a 16 x K product,
/// b the K rows at `rows`; the same sums, in the same order, as one
/// accumulateChunk after another.
template <int D, int K>
__device__ void accumulateProduct(Accumulator (&acc)[D / 8],
                                  const OperandA (&a)[K / 16], const Bits *rows,
                                  int stride, int lane) {
#pragma unroll
  for (int j = 0; j < K / 16; ++j)
    accumulateChunk<D>(acc, a[j], rows + 16 * j * stride, stride, lane);
}

template <int Tiles> __device__ void clear(Accumulator (&acc)[Tiles]) {
#pragma unroll
  for (int n = 0; n < Tiles; ++n)
    acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;
}

} // namespace tgc::cuda::tiles

#endif // TGC_RUNTIME_CUDA_TENSORCORETILES_CUH
