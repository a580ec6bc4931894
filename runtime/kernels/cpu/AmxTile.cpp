//===- AmxTile.cpp - small bf16 products on AMX tiles -----------------===//
//
// AMX multiplies whole tiles: tdpbf16ps adds a [16 x 16 pairs] tile of a
// times a [16 pairs x 16] tile of b (Bf16Pairs.h's layout, 64-byte rows)
// into a 16 x 16 f32 tile, 8192 multiply-adds in one instruction. An
// attention block's products (32 x 32 x 64 on the 3-layer bench row) are
// a few such tiles, so a product packs a into whole tiles (zero past m and
// k; a row-major bf16 a of whole tiles, the queries, is read in place) and
// b into lines of zero-padded pairs, and keeps a 32 x 32 block of out in
// four tiles. Where the block is whole and alpha is 1 the tiles load and
// store out directly; else the block goes through memory and addBlock.
// bench/attention_kernels on an Intel Xeon with AMX: the bf16-products
// rows 1.4x (2 layers) to 2.8x (256 positions) faster than on vdpbf16ps.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cpu/AmxTile.h"

#if TGC_AMX_TILES
#include "runtime/kernels/cpu/Bf16Pairs.h"

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace tgc::cpu {

#if TGC_AMX_TILES
using namespace pairs;

namespace {

/// The AMX products: tiles of 16 rows of 64 bytes, the palette's largest.
/// tmm0-3 hold a 32 x 32 block of out in f32 (2 x 2 tiles), tmm4-5 two
/// row tiles of a (16 rows x 16 pairs), tmm6-7 two column tiles of b
/// (16 pairs x 16 columns, the pair layout packB writes).
constexpr int64_t kTileRows = 16, kTilePairs = 16;

struct alignas(64) TileConfig {
  uint8_t palette = 1, startRow = 0;
  uint8_t reserved[14] = {};
  uint16_t bytesPerRow[16] = {};
  uint8_t rows[16] = {};
};

/// Loads the one configuration every product uses (tile state is per
/// thread, and oneDNN's kernels load their own in the same threads).
inline void configureTiles() {
  static const TileConfig config = [] {
    TileConfig c;
    for (int t = 0; t < 8; ++t) {
      c.bytesPerRow[t] = 64;
      c.rows[t] = kTileRows;
    }
    return c;
  }();
  _tile_loadconfig(&config);
}

/// out = alpha block + beta out on rows [i0, i0 + rows) and columns
/// [j0, j0 + cols) of out.
inline void addBlock(const float *block, float *out, int64_t ldOut,
                     int64_t rows, int64_t cols, float alpha, float beta) {
  const __m512 scaleBy = _mm512_set1_ps(alpha), keepBy = _mm512_set1_ps(beta);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; c += 16) {
      __mmask16 valid = firstLanes16(cols - c);
      float *o = out + r * ldOut + c;
      __m512 v = _mm512_mul_ps(_mm512_loadu_ps(block + r * 32 + c), scaleBy);
      if (beta != 0.0f)
        v = _mm512_fmadd_ps(keepBy, _mm512_maskz_loadu_ps(valid, o), v);
      _mm512_mask_storeu_ps(o, valid, v);
    }
}

/// Rows [i0, i0 + 16 R) x columns [j0, j0 + 16 C) of a b, summed over
/// `kTiles` tiles of 16 pairs onto `start` (rows `ldStart` floats apart) or
/// onto zero when it is null, stored into `block` (rows `ldBlock` apart).
template <int R, int C>
inline void amxBlock(const uint32_t *a, int64_t aRow, const uint32_t *b,
                     int64_t bRow, int64_t kTiles, const float *start,
                     int64_t ldStart, float *block, int64_t ldBlock) {
  // The tile intrinsics take the register's number as a literal.
  const int64_t down = kTileRows * ldStart;
  if (start) {
    _tile_loadd(0, start, ldStart * 4);
    if constexpr (C > 1)
      _tile_loadd(1, start + 16, ldStart * 4);
    if constexpr (R > 1)
      _tile_loadd(2, start + down, ldStart * 4);
    if constexpr (R > 1 && C > 1)
      _tile_loadd(3, start + down + 16, ldStart * 4);
  } else {
    _tile_zero(0);
    if constexpr (C > 1)
      _tile_zero(1);
    if constexpr (R > 1)
      _tile_zero(2);
    if constexpr (R > 1 && C > 1)
      _tile_zero(3);
  }
  for (int64_t t = 0; t < kTiles; ++t) {
    const uint32_t *at = a + t * kTilePairs, *bt = b + t * kTilePairs * bRow;
    _tile_loadd(4, at, aRow * 4);
    _tile_loadd(6, bt, bRow * 4);
    _tile_dpbf16ps(0, 4, 6);
    if constexpr (C > 1) {
      _tile_loadd(7, bt + 16, bRow * 4);
      _tile_dpbf16ps(1, 4, 7);
    }
    if constexpr (R > 1) {
      _tile_loadd(5, at + kTileRows * aRow, aRow * 4);
      _tile_dpbf16ps(2, 5, 6);
      if constexpr (C > 1)
        _tile_dpbf16ps(3, 5, 7);
    }
  }
  const int64_t blockDown = kTileRows * ldBlock, stride = ldBlock * 4;
  _tile_stored(0, block, stride);
  if constexpr (C > 1)
    _tile_stored(1, block + 16, stride);
  if constexpr (R > 1)
    _tile_stored(2, block + blockDown, stride);
  if constexpr (R > 1 && C > 1)
    _tile_stored(3, block + blockDown + 16, stride);
}

template <int R, int C>
inline void amxBlockInto(const uint32_t *a, int64_t aRow, const uint32_t *b,
                         int64_t bRow, int64_t kTiles, float *out,
                         int64_t ldOut, int64_t rows, int64_t cols, float alpha,
                         float beta) {
  // Whole tiles with alpha 1 and beta 0 or 1 go to out directly (beta 1:
  // the tiles start from out's values); the rest through a block and
  // addBlock.
  if (alpha == 1.0f && (beta == 0.0f || beta == 1.0f) &&
      rows == R * kTileRows && cols == C * 16) {
    amxBlock<R, C>(a, aRow, b, bRow, kTiles, beta == 0.0f ? nullptr : out,
                   ldOut, out, ldOut);
    return;
  }
  alignas(64) float block[32 * 32];
  amxBlock<R, C>(a, aRow, b, bRow, kTiles, nullptr, 0, block, 32);
  addBlock(block, out, ldOut, rows, cols, alpha, beta);
}

/// a as whole tiles: words (i, p) at words[i * row + p], rows to a multiple
/// of 16 and pairs to a multiple of 16, zero past m and k. A row-major bf16
/// a of whole tiles is read in place.
template <typename T>
PairWords packTileRows(TileOperand<T> a, int64_t m, int64_t k, int64_t rows,
                       int64_t pairs, std::vector<uint32_t> &scratch) {
  if constexpr (std::is_same_v<T, Bf16>)
    if (a.colStride == 1 && m == rows && k == 2 * pairs &&
        a.rowStride % 2 == 0 && reinterpret_cast<uintptr_t>(a.data) % 4 == 0)
      return {reinterpret_cast<const uint32_t *>(a.data), a.rowStride / 2, 1};
  const int64_t used = (k + 1) / 2;
  scratch.resize(rows * pairs);
  for (int64_t i = 0; i < m; ++i)
    std::fill(scratch.data() + i * pairs + used,
              scratch.data() + (i + 1) * pairs, 0u);
  std::fill(scratch.data() + m * pairs, scratch.data() + rows * pairs, 0u);
  if (a.rowStride == 1) { // a transposed: interleave k's rows, then transpose
    thread_local std::vector<uint32_t> pairMajor;
    pairMajor.resize(used * m);
    for (int64_t p = 0; p < used; ++p)
      interleave(a.data + 2 * p * a.colStride,
                 2 * p + 1 < k ? a.data + (2 * p + 1) * a.colStride : nullptr,
                 pairMajor.data() + p * m, m);
    transposeWords(pairMajor.data(), m, used, m, scratch.data(), pairs);
    return {scratch.data(), pairs, 1};
  }
  for (int64_t i = 0; i < m; ++i)
    rowPairs(a.data + i * a.rowStride, a.colStride, k,
             scratch.data() + i * pairs);
  return {scratch.data(), pairs, 1};
}

} // namespace

template <typename A, typename B>
void amxTileProduct(TileOperand<A> a, TileOperand<B> b, float *out,
                    int64_t ldOut, int64_t m, int64_t n, int64_t k, float alpha,
                    float beta) {
  const int64_t pairs =
                    (k + 2 * kTilePairs - 1) / (2 * kTilePairs) * kTilePairs,
                rows = (m + kTileRows - 1) / kTileRows * kTileRows,
                lines = (n + kLine - 1) / kLine, width = lines * kLine;
  PackedOperands &packed = packedOperands();
  PairWords words = packTileRows(a, m, k, rows, pairs, packed.a);
  packB(b, k, n, lines, packed.b);
  packed.b.resize(pairs * width, 0u); // whole tiles of pairs: zero rows
  configureTiles();
  const int64_t kTiles = pairs / kTilePairs;
  for (int64_t i0 = 0; i0 < m; i0 += 32) {
    const uint32_t *ai = words.words + i0 * words.row;
    const int64_t blockRows = std::min<int64_t>(32, m - i0);
    for (int64_t j0 = 0; j0 < n; j0 += 32) {
      const uint32_t *bj = packed.b.data() + j0;
      const int64_t blockCols = std::min<int64_t>(32, n - j0);
      float *o = out + i0 * ldOut + j0;
      if (blockRows > 16 && blockCols > 16)
        amxBlockInto<2, 2>(ai, words.row, bj, width, kTiles, o, ldOut,
                           blockRows, blockCols, alpha, beta);
      else if (blockRows > 16)
        amxBlockInto<2, 1>(ai, words.row, bj, width, kTiles, o, ldOut,
                           blockRows, blockCols, alpha, beta);
      else if (blockCols > 16)
        amxBlockInto<1, 2>(ai, words.row, bj, width, kTiles, o, ldOut,
                           blockRows, blockCols, alpha, beta);
      else
        amxBlockInto<1, 1>(ai, words.row, bj, width, kTiles, o, ldOut,
                           blockRows, blockCols, alpha, beta);
    }
  }
  _tile_release();
}

template void amxTileProduct(TileOperand<Bf16>, TileOperand<Bf16>, float *,
                             int64_t, int64_t, int64_t, int64_t, float, float);
template void amxTileProduct(TileOperand<float>, TileOperand<Bf16>, float *,
                             int64_t, int64_t, int64_t, int64_t, float, float);
template void amxTileProduct(TileOperand<float>, TileOperand<float>, float *,
                             int64_t, int64_t, int64_t, int64_t, float, float);

/// Whether this CPU has AMX's bf16 tiles and the kernel lets this process
/// use them (Linux asks each process to request the tile state first).
bool amxTilesUsable() {
  static const bool usable = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
      return false;
    const bool tiles = edx & (1u << 24), bf16 = edx & (1u << 22);
    constexpr long kRequestPermission = 0x1023, kTileData = 18;
    return tiles && bf16 &&
           syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0;
  }();
  return usable;
}
#else
bool amxTilesUsable() { return false; }
#endif

} // namespace tgc::cpu
