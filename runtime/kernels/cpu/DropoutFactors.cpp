//===- DropoutFactors.cpp - dropout factors of a run of elements ----------===//
//
// Dropout::factor(i) runs a whole Philox call for one element although each
// call yields four lanes, and one call at a time. Here the Philox rounds run
// on many counters at once, in intrinsics whose 32 x 32 -> 64-bit products
// are vpmuludq on even and odd lanes apart: on AVX-512 four groups of 16
// counters (0.53 ns a factor, one thread, Intel Xeon with AMX; GCC's
// vectorization of the portable loop below widens each counter to 64 bits
// and multiplies with vpmullq: 0.86-0.92 ns), on AVX2 two groups of eight
// (the portable loop ran at about the scalar rate there, 2.4 ns a factor,
// AMD EPYC Zen 3). The portable loop, arrays the compiler vectorizes, serves
// other CPUs. The stream is runtime::dropoutUniform's, bit for bit.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cpu/Kernels.h"
#include "runtime/kernels/Philox.h"

#include <algorithm>
#include <cmath>
#if defined(__AVX512F__)
#include <immintrin.h>
#define TGC_DROPOUT_AVX512 1
#elif defined(__AVX2__)
#include <immintrin.h>
#define TGC_DROPOUT_AVX2 1
#endif

namespace tgc::cpu {
namespace {

/// Philox counters per vectorized round.
constexpr int kBlocks = 64;

/// The factors of elements [x, end) one Philox call per block of four (the
/// run's unaligned head and tail).
void scalarFactors(const Dropout &dropout, uint64_t first, int64_t &x,
                   int64_t end, float kept, float *factors) {
  const runtime::PhiloxKey key{{dropout.seed, runtime::kDropoutKeyTag}};
  while (x < end) {
    uint64_t index = first + static_cast<uint64_t>(x);
    uint64_t block = index / 4;
    runtime::PhiloxCounter counter{{static_cast<uint32_t>(block),
                                    static_cast<uint32_t>(block >> 32),
                                    dropout.opId, dropout.step}};
    runtime::PhiloxCounter bits = runtime::philox4x32_10(counter, key);
    for (uint64_t lane = index % 4; lane < 4 && x < end; ++lane, ++x)
      factors[x] = runtime::uniformFromBits(bits.v[lane]) >= dropout.rate
                       ? kept
                       : 0.0f;
  }
}

#ifdef TGC_DROPOUT_AVX2
/// Lanes 0-7 of `c` times `m`: the high and the low 32 bits of each product.
inline void multiply(__m256i c, __m256i m, __m256i &high, __m256i &low) {
  __m256i even = _mm256_mul_epu32(c, m); // lanes 0, 2, 4, 6, 64 bits each
  __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(c, 32), m);
  high = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
  low = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
}

/// Counters in flight at once: a round is a chain of dependent
/// multiplies, so two groups of eight hide each other's latency.
constexpr int kGroups = 2;

/// The factors of whole runs of 32 x kGroups elements from x on (`first + x`
/// a multiple of 4); returns where it stopped.
int64_t avx2Factors(const Dropout &dropout, uint64_t first, int64_t x,
                    int64_t count, float kept, uint32_t threshold,
                    float *factors) {
  const __m256i m0 = _mm256_set1_epi64x(runtime::kPhiloxM0),
                m1 = _mm256_set1_epi64x(runtime::kPhiloxM1),
                lanes = _mm256_setr_epi64x(0, 1, 2, 3),
                order = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7),
                below = _mm256_set1_epi32(static_cast<int>(threshold) - 1);
  const __m256 keptFactor = _mm256_set1_ps(kept);
  for (; count - x >= 32 * kGroups; x += 32 * kGroups) {
    __m256i c0[kGroups], c1[kGroups], c2[kGroups], c3[kGroups];
    for (int g = 0; g < kGroups; ++g) {
      // Blocks block0 .. block0 + 7 as 64-bit values, split into halves.
      const uint64_t block0 = (first + static_cast<uint64_t>(x)) / 4 + 8 * g;
      __m256i low = _mm256_permutevar8x32_epi32(
          _mm256_add_epi64(_mm256_set1_epi64x(block0), lanes), order);
      __m256i high = _mm256_permutevar8x32_epi32(
          _mm256_add_epi64(_mm256_set1_epi64x(block0 + 4), lanes), order);
      c0[g] = _mm256_permute2x128_si256(low, high, 0x20);
      c1[g] = _mm256_permute2x128_si256(low, high, 0x31);
      c2[g] = _mm256_set1_epi32(static_cast<int>(dropout.opId));
      c3[g] = _mm256_set1_epi32(static_cast<int>(dropout.step));
    }
    uint32_t k0 = dropout.seed, k1 = runtime::kDropoutKeyTag;
    for (int round = 0; round < 10; ++round) { // runtime::philoxRound
      const __m256i key0 = _mm256_set1_epi32(static_cast<int>(k0)),
                    key1 = _mm256_set1_epi32(static_cast<int>(k1));
      for (int g = 0; g < kGroups; ++g) {
        __m256i high0, low0, high1, low1;
        multiply(c0[g], m0, high0, low0);
        multiply(c2[g], m1, high1, low1);
        c0[g] = _mm256_xor_si256(_mm256_xor_si256(high1, c1[g]), key0);
        c2[g] = _mm256_xor_si256(_mm256_xor_si256(high0, c3[g]), key1);
        c1[g] = low1;
        c3[g] = low0;
      }
      k0 += runtime::kPhiloxW0;
      k1 += runtime::kPhiloxW1;
    }
    // Lane j of block b is element 4b + j: kept where (bits >> 8) >= threshold.
    auto factorsOf = [&](__m256i bits) {
      __m256i keep = _mm256_cmpgt_epi32(_mm256_srli_epi32(bits, 8), below);
      return _mm256_and_ps(_mm256_castsi256_ps(keep), keptFactor);
    };
    auto pairs = [](__m256 a, __m256 b, bool high) {
      __m256d ad = _mm256_castps_pd(a), bd = _mm256_castps_pd(b);
      return _mm256_castpd_ps(high ? _mm256_unpackhi_pd(ad, bd)
                                   : _mm256_unpacklo_pd(ad, bd));
    };
    for (int g = 0; g < kGroups; ++g) {
      __m256 f0 = factorsOf(c0[g]), f1 = factorsOf(c1[g]),
             f2 = factorsOf(c2[g]), f3 = factorsOf(c3[g]);
      __m256 f01Low = _mm256_unpacklo_ps(f0, f1),
             f01High = _mm256_unpackhi_ps(f0, f1),
             f23Low = _mm256_unpacklo_ps(f2, f3),
             f23High = _mm256_unpackhi_ps(f2, f3);
      __m256 r0 = pairs(f01Low, f23Low, false),
             r1 = pairs(f01Low, f23Low, true),
             r2 = pairs(f01High, f23High, false),
             r3 = pairs(f01High, f23High, true);
      float *f = factors + x + 32 * g;
      _mm256_storeu_ps(f, _mm256_permute2f128_ps(r0, r1, 0x20));
      _mm256_storeu_ps(f + 8, _mm256_permute2f128_ps(r2, r3, 0x20));
      _mm256_storeu_ps(f + 16, _mm256_permute2f128_ps(r0, r1, 0x31));
      _mm256_storeu_ps(f + 24, _mm256_permute2f128_ps(r2, r3, 0x31));
    }
  }
  return x;
}
#endif

#ifdef TGC_DROPOUT_AVX512
/// Lanes 0-15 of `c` times `m`: the high and the low 32 bits of each
/// product (vpmuludq on even and odd lanes apart; GCC's vectorization of the
/// loop below widens the counters and multiplies with vpmullq, 3 uops).
inline void multiply(__m512i c, __m512i m, __m512i &high, __m512i &low) {
  __m512i even = _mm512_mul_epu32(c, m);
  __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(c, 32), m);
  high = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
  low = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
}

/// Groups of 16 counters in flight at once (a round is a chain of
/// dependent multiplies).
constexpr int kGroups512 = 4;

/// The factors of whole runs of 64 x kGroups512 elements from x on (`first
/// + x` a multiple of 4); returns where it stopped.
int64_t avx512Factors(const Dropout &dropout, uint64_t first, int64_t x,
                      int64_t count, float kept, uint32_t threshold,
                      float *factors) {
  const __m512i m0 = _mm512_set1_epi64(runtime::kPhiloxM0),
                m1 = _mm512_set1_epi64(runtime::kPhiloxM1),
                lanes = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7),
                lowHalves = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16,
                                              18, 20, 22, 24, 26, 28, 30),
                highHalves = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17,
                                               19, 21, 23, 25, 27, 29, 31),
                thresholds = _mm512_set1_epi32(static_cast<int>(threshold));
  const __m512 keptFactor = _mm512_set1_ps(kept);
  for (; count - x >= 64 * kGroups512; x += 64 * kGroups512) {
    __m512i c0[kGroups512], c1[kGroups512], c2[kGroups512], c3[kGroups512];
    for (int g = 0; g < kGroups512; ++g) {
      // Blocks block0 .. block0 + 15 as 64-bit values, split into halves.
      const uint64_t block0 = (first + static_cast<uint64_t>(x)) / 4 + 16 * g;
      __m512i blocks0 = _mm512_add_epi64(_mm512_set1_epi64(block0), lanes),
              blocks8 = _mm512_add_epi64(_mm512_set1_epi64(block0 + 8), lanes);
      c0[g] = _mm512_permutex2var_epi32(blocks0, lowHalves, blocks8);
      c1[g] = _mm512_permutex2var_epi32(blocks0, highHalves, blocks8);
      c2[g] = _mm512_set1_epi32(static_cast<int>(dropout.opId));
      c3[g] = _mm512_set1_epi32(static_cast<int>(dropout.step));
    }
    uint32_t k0 = dropout.seed, k1 = runtime::kDropoutKeyTag;
    for (int round = 0; round < 10; ++round) { // runtime::philoxRound
      const __m512i key0 = _mm512_set1_epi32(static_cast<int>(k0)),
                    key1 = _mm512_set1_epi32(static_cast<int>(k1));
      for (int g = 0; g < kGroups512; ++g) {
        __m512i high0, low0, high1, low1;
        multiply(c0[g], m0, high0, low0);
        multiply(c2[g], m1, high1, low1);
        c0[g] = _mm512_ternarylogic_epi32(high1, c1[g], key0, 0x96);
        c2[g] = _mm512_ternarylogic_epi32(high0, c3[g], key1, 0x96);
        c1[g] = low1;
        c3[g] = low0;
      }
      k0 += runtime::kPhiloxW0;
      k1 += runtime::kPhiloxW1;
    }
    // Lane j of block b is element 4b + j: kept where (bits >> 8) >=
    // threshold. The four lanes' vectors are interleaved: within 128-bit
    // lanes first (r0..r3 hold blocks L, L + 4, L + 8, L + 12 of lane L of
    // 4), then the 128-bit lanes transposed.
    auto factorsOf = [&](__m512i bits) {
      return _mm512_maskz_mov_ps(
          _mm512_cmpge_epu32_mask(_mm512_srli_epi32(bits, 8), thresholds),
          keptFactor);
    };
    for (int g = 0; g < kGroups512; ++g) {
      __m512 f0 = factorsOf(c0[g]), f1 = factorsOf(c1[g]),
             f2 = factorsOf(c2[g]), f3 = factorsOf(c3[g]);
      __m512d f01Low = _mm512_castps_pd(_mm512_unpacklo_ps(f0, f1)),
              f01High = _mm512_castps_pd(_mm512_unpackhi_ps(f0, f1)),
              f23Low = _mm512_castps_pd(_mm512_unpacklo_ps(f2, f3)),
              f23High = _mm512_castps_pd(_mm512_unpackhi_ps(f2, f3));
      __m512 r0 = _mm512_castpd_ps(_mm512_unpacklo_pd(f01Low, f23Low)),
             r1 = _mm512_castpd_ps(_mm512_unpackhi_pd(f01Low, f23Low)),
             r2 = _mm512_castpd_ps(_mm512_unpacklo_pd(f01High, f23High)),
             r3 = _mm512_castpd_ps(_mm512_unpackhi_pd(f01High, f23High));
      __m512 t0 = _mm512_shuffle_f32x4(r0, r1, 0x44),
             t1 = _mm512_shuffle_f32x4(r2, r3, 0x44),
             t2 = _mm512_shuffle_f32x4(r0, r1, 0xEE),
             t3 = _mm512_shuffle_f32x4(r2, r3, 0xEE);
      float *f = factors + x + 64 * g;
      _mm512_storeu_ps(f, _mm512_shuffle_f32x4(t0, t1, 0x88));
      _mm512_storeu_ps(f + 16, _mm512_shuffle_f32x4(t0, t1, 0xDD));
      _mm512_storeu_ps(f + 32, _mm512_shuffle_f32x4(t2, t3, 0x88));
      _mm512_storeu_ps(f + 48, _mm512_shuffle_f32x4(t2, t3, 0xDD));
    }
  }
  return x;
}
#endif

} // namespace

void dropoutFactors(const Dropout &dropout, uint64_t start, int64_t count,
                    float *factors) {
  if (dropout.rate <= 0.0f) {
    std::fill(factors, factors + count, 1.0f);
    return;
  }
  const float kept = 1.0f / (1.0f - dropout.rate);
  // u = (bits >> 8) 2^-24 >= rate exactly when (bits >> 8) >= rate 2^24
  // rounded up (rate 2^24 is exact in float).
  const uint32_t threshold =
      static_cast<uint32_t>(std::ceil(dropout.rate * 16777216.0f));
  const uint64_t first = start + dropout.indexOffset;
  int64_t x = 0;
  scalarFactors(dropout, first, x,
                std::min<int64_t>(count, (4 - first % 4) % 4), kept, factors);
#if defined(TGC_DROPOUT_AVX512)
  x = avx512Factors(dropout, first, x, count, kept, threshold, factors);
#elif defined(TGC_DROPOUT_AVX2)
  x = avx2Factors(dropout, first, x, count, kept, threshold, factors);
#endif
  while (count - x >= 4) {
    const int blocks =
        static_cast<int>(std::min<int64_t>(kBlocks, (count - x) / 4));
    const uint64_t block0 = (first + static_cast<uint64_t>(x)) / 4;
    uint32_t c0[kBlocks], c1[kBlocks], c2[kBlocks], c3[kBlocks];
#pragma omp simd
    for (int b = 0; b < blocks; ++b) {
      uint64_t block = block0 + static_cast<uint64_t>(b);
      c0[b] = static_cast<uint32_t>(block);
      c1[b] = static_cast<uint32_t>(block >> 32);
      c2[b] = dropout.opId;
      c3[b] = dropout.step;
    }
    uint32_t k0 = dropout.seed, k1 = runtime::kDropoutKeyTag;
    for (int round = 0; round < 10; ++round) { // runtime::philoxRound
#pragma omp simd
      for (int b = 0; b < blocks; ++b) {
        uint64_t p0 = static_cast<uint64_t>(runtime::kPhiloxM0) * c0[b];
        uint64_t p1 = static_cast<uint64_t>(runtime::kPhiloxM1) * c2[b];
        uint32_t next0 = static_cast<uint32_t>(p1 >> 32) ^ c1[b] ^ k0;
        uint32_t next2 = static_cast<uint32_t>(p0 >> 32) ^ c3[b] ^ k1;
        c1[b] = static_cast<uint32_t>(p1);
        c3[b] = static_cast<uint32_t>(p0);
        c0[b] = next0;
        c2[b] = next2;
      }
      k0 += runtime::kPhiloxW0;
      k1 += runtime::kPhiloxW1;
    }
    float *f = factors + x;
#pragma omp simd
    for (int b = 0; b < blocks; ++b) {
      f[4 * b + 0] = (c0[b] >> 8) >= threshold ? kept : 0.0f;
      f[4 * b + 1] = (c1[b] >> 8) >= threshold ? kept : 0.0f;
      f[4 * b + 2] = (c2[b] >> 8) >= threshold ? kept : 0.0f;
      f[4 * b + 3] = (c3[b] >> 8) >= threshold ? kept : 0.0f;
    }
    x += 4 * blocks;
  }
  scalarFactors(dropout, first, x, count, kept, factors);
}

} // namespace tgc::cpu
