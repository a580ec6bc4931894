//===- Bf16Tile.cpp - small bf16 products for attention tiles ---------===//
//
// The products run on AMX tiles where the CPU and the OS allow them
// (AmxTile.cpp), else on vdpbf16ps here. This kernel keeps an 8 x 32 block
// of out in 16 registers and, per pair along k (Bf16Pairs.h), loads two
// lines of b and broadcasts one word of a per row (16 vdpbf16ps for 10
// loads). Without AVX512-BF16, scalar code makes the same sums.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cpu/AmxTile.h"
#include "runtime/kernels/cpu/Bf16Pairs.h"

#include <cstring>

namespace tgc::cpu {

using namespace pairs;

namespace {

/// a as words for the vector kernel: in place when it is row-major bf16
/// with whole pairs, else rounded into `scratch` (pair-major when a is
/// transposed).
template <typename T>
PairWords packA(TileOperand<T> a, int64_t m, int64_t k,
                std::vector<uint32_t> &scratch) {
  const int64_t pairs = (k + 1) / 2;
  if constexpr (std::is_same_v<T, Bf16>)
    if (a.colStride == 1 && k % 2 == 0 && a.rowStride % 2 == 0 &&
        reinterpret_cast<uintptr_t>(a.data) % 4 == 0)
      return {reinterpret_cast<const uint32_t *>(a.data), a.rowStride / 2, 1};
  scratch.resize(m * pairs);
  if (a.rowStride == 1) { // a transposed: rows 2p, 2p+1 of its storage
    for (int64_t p = 0; p < pairs; ++p)
      interleave(a.data + 2 * p * a.colStride,
                 2 * p + 1 < k ? a.data + (2 * p + 1) * a.colStride : nullptr,
                 scratch.data() + p * m, m);
    return {scratch.data(), 1, m};
  }
  for (int64_t i = 0; i < m; ++i)
    rowPairs(a.data + i * a.rowStride, a.colStride, k,
             scratch.data() + i * pairs);
  return {scratch.data(), pairs, 1};
}

#ifdef __AVX512BF16__
/// Rows [i0, i0 + Rows) x lines [line0, line0 + Lines) of out.
template <int Rows, int Lines>
inline void block(PairWords a, const uint32_t *b, int64_t pairs, int64_t width,
                  int64_t i0, int64_t line0, float *out, int64_t ldOut,
                  int64_t n, float alpha, float beta) {
  __m512 sums[Rows][Lines];
  for (int r = 0; r < Rows; ++r)
    for (int l = 0; l < Lines; ++l)
      sums[r][l] = _mm512_setzero_ps();
  for (int64_t p = 0; p < pairs; ++p) {
    __m512bh columns[Lines];
    for (int l = 0; l < Lines; ++l)
      columns[l] = (__m512bh)_mm512_loadu_si512(b + p * width + (line0 + l) * kLine);
    for (int r = 0; r < Rows; ++r) {
      __m512bh word = (__m512bh)_mm512_set1_epi32(
          static_cast<int>(a.words[(i0 + r) * a.row + p * a.pair]));
      for (int l = 0; l < Lines; ++l)
        sums[r][l] = _mm512_dpbf16_ps(sums[r][l], word, columns[l]);
    }
  }
  const __m512 scaleBy = _mm512_set1_ps(alpha), keepBy = _mm512_set1_ps(beta);
  for (int l = 0; l < Lines; ++l) {
    int64_t j0 = (line0 + l) * kLine;
    __mmask16 valid = firstLanes16(n - j0);
    for (int r = 0; r < Rows; ++r) {
      float *o = out + (i0 + r) * ldOut + j0;
      __m512 v = _mm512_mul_ps(sums[r][l], scaleBy);
      if (beta != 0.0f)
        v = _mm512_fmadd_ps(keepBy, _mm512_maskz_loadu_ps(valid, o), v);
      _mm512_mask_storeu_ps(o, valid, v);
    }
  }
}

template <int Rows>
inline void rowBlock(PairWords a, const uint32_t *b, int64_t pairs,
                     int64_t lines, int64_t i0, float *out, int64_t ldOut,
                     int64_t n, float alpha, float beta) {
  const int64_t width = lines * kLine;
  int64_t line = 0;
  for (; line + 2 <= lines; line += 2)
    block<Rows, 2>(a, b, pairs, width, i0, line, out, ldOut, n, alpha, beta);
  if (line < lines)
    block<Rows, 1>(a, b, pairs, width, i0, line, out, ldOut, n, alpha, beta);
}

void multiplyPacked(PairWords a, const uint32_t *b, int64_t m, int64_t n,
                    int64_t pairs, int64_t lines, float *out, int64_t ldOut,
                    float alpha, float beta) {
  int64_t i0 = 0;
  for (; i0 + 8 <= m; i0 += 8)
    rowBlock<8>(a, b, pairs, lines, i0, out, ldOut, n, alpha, beta);
  switch (m - i0) {
  case 7: rowBlock<7>(a, b, pairs, lines, i0, out, ldOut, n, alpha, beta); break;
  case 6: rowBlock<6>(a, b, pairs, lines, i0, out, ldOut, n, alpha, beta); break;
  case 5: rowBlock<5>(a, b, pairs, lines, i0, out, ldOut, n, alpha, beta); break;
  case 4: rowBlock<4>(a, b, pairs, lines, i0, out, ldOut, n, alpha, beta); break;
  case 3: rowBlock<3>(a, b, pairs, lines, i0, out, ldOut, n, alpha, beta); break;
  case 2: rowBlock<2>(a, b, pairs, lines, i0, out, ldOut, n, alpha, beta); break;
  case 1: rowBlock<1>(a, b, pairs, lines, i0, out, ldOut, n, alpha, beta); break;
  default: break;
  }
}
#else
inline float widenBits(uint32_t bits) {
  float f;
  bits <<= 16;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// The sums vdpbf16ps makes, in scalar code: per pair, the product of the
/// second elements is added first, then the first's (a product of two
/// bf16 values is exact in f32).
void multiplyPacked(PairWords a, const uint32_t *b, int64_t m, int64_t n,
                    int64_t pairs, int64_t lines, float *out, int64_t ldOut,
                    float alpha, float beta) {
  std::vector<float> sums(n);
  for (int64_t i = 0; i < m; ++i) {
    std::fill(sums.begin(), sums.end(), 0.0f);
    for (int64_t p = 0; p < pairs; ++p) {
      uint32_t x = a.words[i * a.row + p * a.pair];
      float x0 = widenBits(x & 0xffffu), x1 = widenBits(x >> 16);
      const uint32_t *line = b + p * lines * kLine;
      for (int64_t j = 0; j < n; ++j) {
        sums[j] += x1 * widenBits(line[j] >> 16);
        sums[j] += x0 * widenBits(line[j] & 0xffffu);
      }
    }
    float *row = out + i * ldOut;
    for (int64_t j = 0; j < n; ++j)
      row[j] = beta == 0.0f ? alpha * sums[j] : alpha * sums[j] + beta * row[j];
  }
}
#endif

} // namespace

TileUnit fastestTileUnit() {
  return amxTilesUsable() ? TileUnit::Amx : TileUnit::Vectors;
}

template <typename A, typename B>
void bf16TileProduct(TileOperand<A> a, TileOperand<B> b, float *out,
                     int64_t ldOut, int64_t m, int64_t n, int64_t k,
                     float alpha, float beta, TileUnit unit) {
  if (m == 0 || n == 0)
    return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        out[i * ldOut + j] = beta == 0.0f ? 0.0f : beta * out[i * ldOut + j];
    return;
  }
#if TGC_AMX_TILES // a build without them has no AMX products to call
  if (unit == TileUnit::Amx && amxTilesUsable())
    return amxTileProduct(a, b, out, ldOut, m, n, k, alpha, beta);
#endif
  const int64_t lines = (n + kLine - 1) / kLine;
  PackedOperands &packed = packedOperands();
  PairWords words = packA(a, m, k, packed.a);
  packB(b, k, n, lines, packed.b);
  multiplyPacked(words, packed.b.data(), m, n, (k + 1) / 2, lines, out, ldOut,
                 alpha, beta);
}

template void bf16TileProduct(TileOperand<Bf16>, TileOperand<Bf16>, float *,
                              int64_t, int64_t, int64_t, int64_t, float, float,
                              TileUnit);
template void bf16TileProduct(TileOperand<float>, TileOperand<Bf16>, float *,
                              int64_t, int64_t, int64_t, int64_t, float, float,
                              TileUnit);
template void bf16TileProduct(TileOperand<float>, TileOperand<float>, float *,
                              int64_t, int64_t, int64_t, int64_t, float, float,
                              TileUnit);

} // namespace tgc::cpu
