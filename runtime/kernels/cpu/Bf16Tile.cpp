//===- Bf16Tile.cpp - small bf16 products for attention tiles ---------===//
//
// vdpbf16ps multiplies pairs: each 32-bit word of its operands holds two
// bf16 values adjacent along k. So b is packed into lines of 16 words,
// word (p, j) = (b[2p][j], b[2p+1][j]), zero past n and past an odd k, and
// a is read as words (a[i][2p], a[i][2p+1]) from wherever they lie: in
// place for a row-major bf16 a (the queries), else from a rounded copy.
// The kernel keeps an 8 x 32 block of out in 16 registers and, per pair,
// loads two lines of b and broadcasts one word of a per row (16 vdpbf16ps
// for 10 loads). The packing is vectorized for the layouts attention has:
// two rows interleaved (b row-major, or a transposed) and a 32-bit
// transpose for b = k^T of bf16 keys.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cpu/Bf16Tile.h"

#include <algorithm>
#include <cstring>
#include <vector>

#ifdef __AVX512BF16__
#include <immintrin.h>
#endif

namespace tgc::cpu {

using runtime::Bf16;

namespace {

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
#endif

/// words[c] = (even[c], odd[c]) for c < count: two rows interleaved, odd
/// null past an odd k.
template <typename T>
void interleave(const T *even, const T *odd, uint32_t *words, int64_t count) {
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

/// The thread's packed operands, kept across calls (attention calls this
/// from inside its parallel loop, several times per block).
struct Packed {
  std::vector<uint32_t> a, b;
};
Packed &packedScratch() {
  thread_local Packed packed;
  return packed;
}

/// a as words: word (i, p) at words[i * row + p * pair].
struct PairWords {
  const uint32_t *words;
  int64_t row, pair;
};

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
  for (int64_t i = 0; i < m; ++i) {
    const T *row = a.data + i * a.rowStride;
    uint32_t *words = scratch.data() + i * pairs;
    int64_t p = 0;
#ifdef __AVX512BF16__
    if constexpr (std::is_same_v<T, float>)
      if (a.colStride == 1)
        for (; p + 16 <= k / 2; p += 16)
          _mm512_storeu_si512(
              words + p, (__m512i)_mm512_cvtne2ps_pbh(
                             _mm512_loadu_ps(row + 2 * p + 16),
                             _mm512_loadu_ps(row + 2 * p)));
#endif
    for (; p < pairs; ++p)
      words[p] = pairOf(row, 2 * p * a.colStride, a.colStride, 2 * p + 1 < k);
  }
  return {scratch.data(), pairs, 1};
}

template <typename T>
void packB(TileOperand<T> b, int64_t k, int64_t n, int64_t lines,
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
    std::fill(packed.data() + p * width + n, packed.data() + (p + 1) * width, 0u);
  if constexpr (std::is_same_v<T, Bf16>)
    if (b.rowStride == 1 && k % 2 == 0 && b.colStride % 2 == 0 &&
        reinterpret_cast<uintptr_t>(b.data) % 4 == 0) {
      const uint32_t *x = reinterpret_cast<const uint32_t *>(b.data);
      const int64_t xRow = b.colStride / 2;
      for (int64_t j = 0; j < n; ++j)
        for (int64_t p = 0; p < pairs; ++p)
          packed[p * width + j] = x[j * xRow + p];
      return;
    }
  for (int64_t p = 0; p < pairs; ++p)
    for (int64_t j = 0; j < n; ++j)
      packed[p * width + j] = pairOf(b.data, 2 * p * b.rowStride + j * b.colStride,
                                     b.rowStride, 2 * p + 1 < k);
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

template <typename A, typename B>
void bf16TileProduct(TileOperand<A> a, TileOperand<B> b, float *out,
                     int64_t ldOut, int64_t m, int64_t n, int64_t k,
                     float alpha, float beta) {
  if (m == 0 || n == 0)
    return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        out[i * ldOut + j] = beta == 0.0f ? 0.0f : beta * out[i * ldOut + j];
    return;
  }
  const int64_t lines = (n + kLine - 1) / kLine;
  Packed &packed = packedScratch();
  PairWords words = packA(a, m, k, packed.a);
  packB(b, k, n, lines, packed.b);
  multiplyPacked(words, packed.b.data(), m, n, (k + 1) / 2, lines, out, ldOut,
                 alpha, beta);
}

template void bf16TileProduct(TileOperand<Bf16>, TileOperand<Bf16>, float *,
                              int64_t, int64_t, int64_t, int64_t, float, float);
template void bf16TileProduct(TileOperand<float>, TileOperand<Bf16>, float *,
                              int64_t, int64_t, int64_t, int64_t, float, float);
template void bf16TileProduct(TileOperand<float>, TileOperand<float>, float *,
                              int64_t, int64_t, int64_t, int64_t, float, float);

} // namespace tgc::cpu
