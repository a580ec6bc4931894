//===- Bf16Pairs.h - bf16 operands packed as pairs along k ------*- C++ -*-===//
//
// Both bf16 tile kernels (Bf16Tile.cpp on vdpbf16ps, AmxTile.cpp on AMX)
// multiply pairs: each 32-bit word of their operands holds two bf16 values
// adjacent along k, the first in the low half. b is packed into lines of 16
// words, word (p, j) = (b[2p][j], b[2p+1][j]); a is read as words
// (a[i][2p], a[i][2p+1]). The packing is vectorized for the layouts
// attention has: two rows interleaved (b row-major, or a transposed) and a
// 32-bit transpose (b = k^T of bf16 keys, a transposed for AMX). Internal
// to the CPU kernels.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_KERNELS_CPU_BF16PAIRS_H
#define TGC_RUNTIME_KERNELS_CPU_BF16PAIRS_H

#include "runtime/kernels/cpu/Bf16Tile.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#ifdef __AVX512BF16__
#include <immintrin.h>
#endif

namespace tgc::cpu::pairs {

using runtime::Bf16;

constexpr int64_t kLine = 16; // words of b per 64-byte line

inline uint32_t bitsOf(Bf16 x) { return x.bits; }
inline uint32_t bitsOf(float x) { return runtime::roundToBf16(x).bits; }

/// The word of elements `first` and `first + step` (0 for the second past
/// an odd k).
template <typename T>
inline uint32_t pairOf(const T *x, int64_t first, int64_t step, bool second) {
  return bitsOf(x[first]) | (second ? bitsOf(x[first + step]) : 0u) << 16;
}

#ifdef __AVX512BF16__
/// 16 elements as bf16 bits in the low halves of 16 words.
inline __m512i halves(const float *x, __mmask16 valid) {
  __m256bh rounded = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(valid, x));
  return _mm512_cvtepu16_epi32((__m256i)rounded);
}
inline __m512i halves(const Bf16 *x, __mmask16 valid) {
  return _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(valid, x));
}
inline __mmask16 firstLanes16(int64_t count) {
  return static_cast<__mmask16>(count >= 16 ? 0xffff : (1u << count) - 1u);
}

/// Sixteen vectors of 16 words transposed in place: 32-bit, then 64-bit
/// interleaves, then two exchanges of 128-bit lanes.
inline void transpose16(__m512i r[16]) {
  __m512i t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
    r[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
    r[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
    r[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
  }
  for (int i = 0; i < 16; i += 8)
    for (int j = 0; j < 4; ++j) {
      t[i + j] = _mm512_shuffle_i32x4(r[i + j], r[i + j + 4], 0x88);
      t[i + j + 4] = _mm512_shuffle_i32x4(r[i + j], r[i + j + 4], 0xdd);
    }
  for (int j = 0; j < 8; ++j) {
    r[j] = _mm512_shuffle_i32x4(t[j], t[j + 8], 0x88);
    r[j + 8] = _mm512_shuffle_i32x4(t[j], t[j + 8], 0xdd);
  }
}
#endif

/// out[c * outStride + r] = in[r * inStride + c] for r < rows, c < cols:
/// a matrix of 32-bit words transposed (a bf16 operand's pairs).
inline void transposeWords(const uint32_t *in, int64_t inStride, int64_t rows,
                           int64_t cols, uint32_t *out, int64_t outStride) {
#ifdef __AVX512BF16__
  __m512i r[16];
  for (int64_t r0 = 0; r0 < rows; r0 += 16)
    for (int64_t c0 = 0; c0 < cols; c0 += 16) {
      const __mmask16 readColumns = firstLanes16(cols - c0),
                      writeRows = firstLanes16(rows - r0);
      for (int64_t i = 0; i < 16; ++i)
        r[i] = r0 + i < rows ? _mm512_maskz_loadu_epi32(
                                   readColumns, in + (r0 + i) * inStride + c0)
                             : _mm512_setzero_si512();
      transpose16(r);
      for (int64_t c = 0; c < std::min<int64_t>(16, cols - c0); ++c)
        _mm512_mask_storeu_epi32(out + (c0 + c) * outStride + r0, writeRows,
                                 r[c]);
    }
#else
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out[c * outStride + r] = in[r * inStride + c];
#endif
}

/// words[c] = (even[c], odd[c]) for c < count: two rows interleaved, odd
/// null past an odd k.
template <typename T>
inline void interleave(const T *even, const T *odd, uint32_t *words,
                       int64_t count) {
  int64_t c = 0;
#ifdef __AVX512BF16__
  for (; c < count; c += 16) {
    __mmask16 valid = firstLanes16(count - c);
    __m512i low = halves(even + c, valid);
    __m512i high = odd ? _mm512_slli_epi32(halves(odd + c, valid), 16)
                       : _mm512_setzero_si512();
    _mm512_mask_storeu_epi32(words + c, valid, _mm512_or_si512(low, high));
  }
#endif
  for (; c < count; ++c)
    words[c] = bitsOf(even[c]) | (odd ? bitsOf(odd[c]) : 0u) << 16;
}

/// words[p] = (row[2p], row[2p+1]) for the (k + 1) / 2 pairs of one row of
/// k elements `colStride` apart, f32 ones rounded.
template <typename T>
inline void rowPairs(const T *row, int64_t colStride, int64_t k,
                     uint32_t *words) {
  const int64_t pairs = (k + 1) / 2;
  int64_t p = 0;
#ifdef __AVX512BF16__
  if constexpr (std::is_same_v<T, float>)
    if (colStride == 1)
      for (; p + 16 <= k / 2; p += 16)
        _mm512_storeu_si512(words + p, (__m512i)_mm512_cvtne2ps_pbh(
                                           _mm512_loadu_ps(row + 2 * p + 16),
                                           _mm512_loadu_ps(row + 2 * p)));
#endif
  for (; p < pairs; ++p)
    words[p] = pairOf(row, 2 * p * colStride, colStride, 2 * p + 1 < k);
}

/// The thread's packed operands, kept across calls (attention calls the
/// products from inside its parallel loop, several times per block).
struct PackedOperands {
  std::vector<uint32_t> a, b;
};
inline PackedOperands &packedOperands() {
  thread_local PackedOperands packed;
  return packed;
}

/// a as words: word (i, p) at words[i * row + p * pair].
struct PairWords {
  const uint32_t *words;
  int64_t row, pair;
};

/// b [k, n] in lines: word (p, j) at packed[p * lines * 16 + j], zero past
/// n and past an odd k.
template <typename T>
inline void packB(TileOperand<T> b, int64_t k, int64_t n, int64_t lines,
                  std::vector<uint32_t> &packed) {
  const int64_t pairs = (k + 1) / 2, width = lines * kLine;
  packed.resize(pairs * width);
  if (b.colStride == 1) { // row-major: rows 2p and 2p+1 interleaved
    for (int64_t p = 0; p < pairs; ++p) {
      uint32_t *line = packed.data() + p * width;
      interleave(b.data + 2 * p * b.rowStride,
                 2 * p + 1 < k ? b.data + (2 * p + 1) * b.rowStride : nullptr,
                 line, n);
      std::fill(line + n, line + width, 0u);
    }
    return;
  }
  // b = x^T with x's rows `colStride` apart: word (p, j) is the word p of
  // x's row j when x is bf16 (a 32-bit transpose).
  for (int64_t p = 0; p < pairs; ++p)
    std::fill(packed.data() + p * width + n, packed.data() + (p + 1) * width,
              0u);
  if constexpr (std::is_same_v<T, Bf16>)
    if (b.rowStride == 1 && k % 2 == 0 && b.colStride % 2 == 0 &&
        reinterpret_cast<uintptr_t>(b.data) % 4 == 0) {
      transposeWords(reinterpret_cast<const uint32_t *>(b.data),
                     b.colStride / 2, n, pairs, packed.data(), width);
      return;
    }
  for (int64_t p = 0; p < pairs; ++p)
    for (int64_t j = 0; j < n; ++j)
      packed[p * width + j] =
          pairOf(b.data, 2 * p * b.rowStride + j * b.colStride, b.rowStride,
                 2 * p + 1 < k);
}

} // namespace tgc::cpu::pairs

#endif // TGC_RUNTIME_KERNELS_CPU_BF16PAIRS_H
