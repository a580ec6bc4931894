//===- F32Tile.h - small f32 products for attention tiles ---------*- C++ -*-===//
//
// An attention block's products are a few tens of thousands of
// multiply-adds each (32 x 32 x 32 on the bench's 2-layer row). OpenBLAS
// 0.3.21 has small-matrix kernels for AVX-512 only; on an AVX2 CPU its sgemm
// packs both operands through its large-matrix path and takes about 2 us
// for 32 x 32 x 32, a third of the core's FMA rate (AMD EPYC Zen 3, one
// thread). f32TileProduct reads a in place, and b too where its rows are
// whole vectors of 8 (else it packs b), and keeps a 6 x 16 block of the
// result in registers.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_KERNELS_CPU_F32TILE_H
#define TGC_RUNTIME_KERNELS_CPU_F32TILE_H

#include "runtime/kernels/cpu/Bf16Tile.h"

#include <cstdint>

namespace tgc::cpu {

#if defined(__SANITIZE_ADDRESS__)
#define TGC_F32_TILE_INSTRUMENTED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TGC_F32_TILE_INSTRUMENTED 1
#endif
#endif

/// Whether f32TileProduct is this build's fastest way to an attention tile's
/// product: AVX2 with FMA and no AVX-512 (where OpenBLAS's small-matrix
/// kernels win). Not under AddressSanitizer: a check on every load made the
/// instrumented tiles slower than OpenBLAS, which is not instrumented (a
/// training step 1.3x as long in the sanitizer stage); its unit test still
/// runs the kernel instrumented.
#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__) &&         \
    !defined(TGC_F32_TILE_INSTRUMENTED)
inline constexpr bool kF32TilesBeatBlas = true;
#else
inline constexpr bool kF32TilesBeatBlas = false;
#endif

/// out [m, n] (rows ldOut apart) = alpha a b + beta out in f32, with a
/// [m, k] and b [k, n] read through their strides (TileOperand); each sum
/// runs over k in order. beta 0 never reads out. out overlaps neither a nor b
/// (both may be read in place while out is written).
void f32TileProduct(TileOperand<float> a, TileOperand<float> b, float *out,
                    int64_t ldOut, int64_t m, int64_t n, int64_t k,
                    float alpha, float beta);

} // namespace tgc::cpu

#endif // TGC_RUNTIME_KERNELS_CPU_F32TILE_H
