//===- F32Tile.cpp - small f32 products for attention tiles ----------===//
//
// b is read in whole vectors of 8 floats per k step. A b stored in rows of
// a multiple of 8 floats (v, dO, q, k as attention's heads of 32 or 64
// values) is read in place; any other (k^T and v^T, transposed reads, or a
// row length not a multiple of 8) is first copied into such rows, zeros
// past n (transposed b on AVX2 in 8 x 8 blocks transposed in registers).
// a is read in place, one broadcast per row and k step. The AVX2 kernel
// keeps up to 6 x 16 results in 12 registers: per k step, 2 loads of b, 6
// broadcasts of a and 12 FMAs; the rows go in blocks of 6 but the last
// ones in blocks of at least 3 (32 rows: 6, 6, 6, 6, 4, 4, not ..., 6, 2),
// since a block of 1 or 2 rows has too few independent sums to hide the
// FMA's latency. Other CPUs get the same sums in plain loops.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cpu/F32Tile.h"
#include "runtime/kernels/cpu/ReusedBuffer.h"

#include <algorithm>
#include <cstring>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define TGC_F32_TILE_AVX2 1
#endif

namespace tgc::cpu {
namespace {

#ifdef TGC_F32_TILE_AVX2
/// The 8 x 8 floats in `rows` transposed in registers.
inline void transpose8x8(__m256 rows[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(rows[i], rows[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(rows[i], rows[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {
    rows[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
    rows[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
  }
}

/// packed [k, nPadded] = s^T for s [n, k] with rows `ld` apart (a
/// transposed b: k^T and v^T), in 8 x 8 blocks transposed in registers
/// rather than one strided load per value; rows of s past n are zeros.
/// Returns how many of the k rows it packed (a multiple of 8).
int64_t packTransposedBlocks(const float *s, int64_t ld, int64_t k, int64_t n,
                             int64_t nPadded, float *packed) {
  const int64_t whole = k / 8 * 8;
  for (int64_t j0 = 0; j0 < nPadded; j0 += 8)
    for (int64_t p0 = 0; p0 < whole; p0 += 8) {
      __m256 rows[8];
      for (int i = 0; i < 8; ++i)
        rows[i] = j0 + i < n ? _mm256_loadu_ps(s + (j0 + i) * ld + p0)
                             : _mm256_setzero_ps();
      transpose8x8(rows);
      for (int i = 0; i < 8; ++i)
        _mm256_storeu_ps(packed + (p0 + i) * nPadded + j0, rows[i]);
    }
  return whole;
}
#endif

/// b [k, n] into `packed` [k, nPadded], zeros in columns n .. nPadded.
void packB(TileOperand<float> b, int64_t k, int64_t n, int64_t nPadded,
           float *packed) {
  int64_t p0 = 0;
#ifdef TGC_F32_TILE_AVX2
  if (b.rowStride == 1 && b.colStride != 1)
    p0 = packTransposedBlocks(b.data, b.colStride, k, n, nPadded, packed);
#endif
  for (int64_t p = p0; p < k; ++p) {
    float *row = packed + p * nPadded;
    const float *source = b.data + p * b.rowStride;
    if (b.colStride == 1) {
      std::memcpy(row, source, n * sizeof(float));
    } else {
      for (int64_t j = 0; j < n; ++j)
        row[j] = source[j * b.colStride];
    }
    std::fill(row + n, row + nPadded, 0.0f);
  }
}

#ifdef TGC_F32_TILE_AVX2
/// Lanes below `count` (0..8) set.
inline __m256i firstLanes8(int64_t count) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), lanes);
}

/// R rows x C vectors of 8 results: out = alpha a b + beta out for the
/// first `columns` of the 8 C columns.
template <int R, int C>
void block(const float *a, int64_t aRows, int64_t aCols, const float *b,
           int64_t ldb, int64_t k, float *out, int64_t ldOut, int64_t columns,
           float alpha, float beta) {
  // Every loop over acc unrolled whole, so that it lives in registers
  // (else GCC stores it to the stack on every k step).
  __m256 acc[R][C];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int c = 0; c < C; ++c)
      acc[r][c] = _mm256_setzero_ps();
  for (int64_t p = 0; p < k; ++p) {
    __m256 bv[C];
#pragma GCC unroll 2
    for (int c = 0; c < C; ++c)
      bv[c] = _mm256_loadu_ps(b + p * ldb + 8 * c);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      __m256 ar = _mm256_broadcast_ss(a + r * aRows + p * aCols);
#pragma GCC unroll 2
      for (int c = 0; c < C; ++c)
        acc[r][c] = _mm256_fmadd_ps(ar, bv[c], acc[r][c]);
    }
  }
  const __m256 alphas = _mm256_set1_ps(alpha), betas = _mm256_set1_ps(beta);
#pragma GCC unroll 2
  for (int c = 0; c < C; ++c) {
    int64_t valid = std::min<int64_t>(8, columns - 8 * c);
    __m256i mask = firstLanes8(valid);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      float *o = out + r * ldOut + 8 * c;
      __m256 v = _mm256_mul_ps(alphas, acc[r][c]);
      if (valid == 8) {
        if (beta != 0.0f)
          v = _mm256_fmadd_ps(betas, _mm256_loadu_ps(o), v);
        _mm256_storeu_ps(o, v);
      } else {
        if (beta != 0.0f)
          v = _mm256_fmadd_ps(betas, _mm256_maskload_ps(o, mask), v);
        _mm256_maskstore_ps(o, mask, v);
      }
    }
  }
}

/// The next block's rows when `left` rows remain: 6, except that 7 and 8
/// go as 4 + 3 and 4 + 4 rather than 6 + 1 and 6 + 2.
inline int64_t blockRows(int64_t left) {
  if (left == 7 || left == 8)
    return 4;
  return std::min<int64_t>(6, left);
}

template <int C>
void rowsBlock(int64_t rows, const float *a, int64_t aRows, int64_t aCols,
               const float *b, int64_t ldb, int64_t k, float *out,
               int64_t ldOut, int64_t columns, float alpha, float beta) {
  switch (rows) {
  case 6:
    return block<6, C>(a, aRows, aCols, b, ldb, k, out, ldOut, columns, alpha, beta);
  case 5:
    return block<5, C>(a, aRows, aCols, b, ldb, k, out, ldOut, columns, alpha, beta);
  case 4:
    return block<4, C>(a, aRows, aCols, b, ldb, k, out, ldOut, columns, alpha, beta);
  case 3:
    return block<3, C>(a, aRows, aCols, b, ldb, k, out, ldOut, columns, alpha, beta);
  case 2:
    return block<2, C>(a, aRows, aCols, b, ldb, k, out, ldOut, columns, alpha, beta);
  default:
    return block<1, C>(a, aRows, aCols, b, ldb, k, out, ldOut, columns, alpha, beta);
  }
}
#endif

} // namespace

void f32TileProduct(TileOperand<float> a, TileOperand<float> b, float *out,
                    int64_t ldOut, int64_t m, int64_t n, int64_t k,
                    float alpha, float beta) {
  if (m <= 0 || n <= 0)
    return;
  // b's rows as the kernel reads them: in place, or packed.
  const float *rowsOfB = b.data;
  int64_t ldb = b.rowStride;
  if (b.colStride != 1 || n % 8 != 0) {
    ldb = (n + 7) / 8 * 8;
    struct PackedB;
    float *packed = reusedScratch<PackedB, float>(std::max<int64_t>(k, 1) * ldb);
    packB(b, k, n, ldb, packed);
    rowsOfB = packed;
  }
#ifdef TGC_F32_TILE_AVX2
  constexpr int64_t kColumns = 16;
  for (int64_t j0 = 0; j0 < n; j0 += kColumns) {
    const int64_t columns = std::min(kColumns, n - j0);
    for (int64_t i0 = 0, rows; i0 < m; i0 += rows) {
      rows = blockRows(m - i0);
      const float *aBlock = a.data + i0 * a.rowStride;
      float *outBlock = out + i0 * ldOut + j0;
      if (columns > 8)
        rowsBlock<2>(rows, aBlock, a.rowStride, a.colStride, rowsOfB + j0,
                     ldb, k, outBlock, ldOut, columns, alpha, beta);
      else
        rowsBlock<1>(rows, aBlock, a.rowStride, a.colStride, rowsOfB + j0,
                     ldb, k, outBlock, ldOut, columns, alpha, beta);
    }
  }
#else
  for (int64_t i = 0; i < m; ++i) {
    float *row = out + i * ldOut;
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t p = 0; p < k; ++p)
        sum += a.data[i * a.rowStride + p * a.colStride] * rowsOfB[p * ldb + j];
      row[j] = beta != 0.0f ? alpha * sum + beta * row[j] : alpha * sum;
    }
  }
#endif
}

} // namespace tgc::cpu
