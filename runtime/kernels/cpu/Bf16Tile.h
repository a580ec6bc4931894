//===- Bf16Tile.h - small bf16 products for attention tiles -------*- C++ -*-===//
//
// The products of an attention block (scores, output, and the four of the
// backward) are a few thousand multiply-adds each, too small for a GEMM
// library call (oneDNN's costs more than the product; OpenBLAS has no bf16
// GEMM). bf16TileProduct packs both operands into vdpbf16ps's pair layout
// and multiplies them in the calling thread.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_KERNELS_CPU_BF16TILE_H
#define TGC_RUNTIME_KERNELS_CPU_BF16TILE_H

#include "runtime/kernels/KernelTypes.h"

#include <cstdint>

namespace tgc::cpu {

/// A matrix operand read with strides: element (r, c) of the logical
/// matrix is data[r * rowStride + c * colStride], so a transposed operand is
/// the same memory with the strides swapped. f32 values are rounded to bf16
/// (ties to even, runtime::roundToBf16) as they are packed.
template <typename T>
struct TileOperand {
  const T *data;
  int64_t rowStride, colStride;
};

/// out [m, n] (rows ldOut apart) = alpha a b + beta out, with a [m, k] and
/// b [k, n] in bf16 and the products summed in f32: pairs along k, each
/// pair added in turn (vdpbf16ps where the CPU has AVX512-BF16; the same
/// sums in scalar code elsewhere). beta 0 never reads out.
template <typename A, typename B>
void bf16TileProduct(TileOperand<A> a, TileOperand<B> b, float *out,
                     int64_t ldOut, int64_t m, int64_t n, int64_t k,
                     float alpha, float beta);

} // namespace tgc::cpu

#endif // TGC_RUNTIME_KERNELS_CPU_BF16TILE_H
