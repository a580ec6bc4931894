//===- Bf16Tile.h - small bf16 products for attention tiles -----*- C++ -*-===//
//
// The products of an attention block (scores, output, and the four of the
// backward) are a few thousand multiply-adds each, too small for a GEMM
// library call (oneDNN's costs more than the product; OpenBLAS has no bf16
// GEMM). bf16TileProduct packs both operands into pairs along k
// (Bf16Pairs.h) and multiplies them in the calling thread, on AMX tiles
// where the CPU has them (AmxTile.cpp), else on vdpbf16ps.
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

/// Where a tile product runs: AVX512-BF16's vdpbf16ps (or scalar code
/// making the same sums on CPUs without it), or AMX's tdpbf16ps.
enum class TileUnit { Vectors, Amx };

/// AMX where this build, the CPU and the OS allow it, else the vectors.
TileUnit fastestTileUnit();

/// out [m, n] (rows ldOut apart) = alpha a b + beta out, with a [m, k] and
/// b [k, n] in bf16 and the products summed in f32, pairs along k: on the
/// vectors each pair added in turn; AMX sums its pairs in its own order
/// (and flushes f32 subnormals), so the two units' results differ by
/// rounding. beta 0 never reads out. `unit` Amx where AMX is not usable
/// runs on the vectors (the tests ask for each unit).
template <typename A, typename B>
void bf16TileProduct(TileOperand<A> a, TileOperand<B> b, float *out,
                     int64_t ldOut, int64_t m, int64_t n, int64_t k,
                     float alpha, float beta,
                     TileUnit unit = fastestTileUnit());

} // namespace tgc::cpu

#endif // TGC_RUNTIME_KERNELS_CPU_BF16TILE_H
