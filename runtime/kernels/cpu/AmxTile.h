//===- AmxTile.h - small bf16 products on AMX tiles -------------*- C++ -*-===//
//
// The AMX path of bf16TileProduct (Bf16Tile.h), internal to the CPU kernels.
// Built where the kernels' -march has AMX-BF16 (Sapphire Rapids and later);
// used where the CPU has it and Linux grants the process its tile state.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_KERNELS_CPU_AMXTILE_H
#define TGC_RUNTIME_KERNELS_CPU_AMXTILE_H

#include "runtime/kernels/cpu/Bf16Tile.h"

// (AMX's packing and epilogue are AVX-512 code.)
#if defined(__AMX_TILE__) && defined(__AMX_BF16__) && defined(__AVX512BF16__)
#define TGC_AMX_TILES 1
#else
#define TGC_AMX_TILES 0
#endif

namespace tgc::cpu {

/// Whether this build has the AMX products, the CPU has AMX's bf16 tiles
/// and the kernel lets this process use them (asked once, on first call).
bool amxTilesUsable();

/// bf16TileProduct on AMX tiles; only where amxTilesUsable().
template <typename A, typename B>
void amxTileProduct(TileOperand<A> a, TileOperand<B> b, float *out,
                    int64_t ldOut, int64_t m, int64_t n, int64_t k, float alpha,
                    float beta);

} // namespace tgc::cpu

#endif // TGC_RUNTIME_KERNELS_CPU_AMXTILE_H
