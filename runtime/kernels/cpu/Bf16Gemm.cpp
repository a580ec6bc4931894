//===- Bf16Gemm.cpp - bf16 x bf16 -> f32 GEMMs on oneDNN, rounding to bf16 ===//
//
// oneDNN's bf16 GEMM call multiplies bf16 operands and accumulates in f32
// (on Zen 4 and Sapphire Rapids with vdpbf16ps, twice the f32 FMA rate);
// where the CPU has AMX most products run on a matmul primitive instead,
// whose kernels use it (bf16GemmOnPrimitive). Both run on libgomp's
// threads, the pool the generated loops and OpenBLAS use.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cpu/Gemm.h"
#include "runtime/kernels/cpu/Kernels.h"
#include "runtime/kernels/cpu/ReusedBuffer.h"
#include "runtime/kernels/cpu/WakeCost.h"

#include <dnnl.h>
#include <omp.h>

#include <algorithm>

#ifdef __AVX512BF16__
#include <immintrin.h>
#endif

// Exported by libdnnl 2.6 but missing from its headers; row-major like
// dnnl_sgemm. The operands are bf16 bit patterns.
extern "C" dnnl_status_t dnnl_gemm_bf16bf16f32(
    char transa, char transb, dnnl_dim_t M, dnnl_dim_t N, dnnl_dim_t K,
    float alpha, const tgc::runtime::Bf16 *A, dnnl_dim_t lda,
    const tgc::runtime::Bf16 *B, dnnl_dim_t ldb, float beta, float *C,
    dnnl_dim_t ldc);

namespace tgc::cpu {

namespace {

/// The operands as f32, for an sgemm where oneDNN has no bf16 GEMM (a CPU
/// without AVX-512): the same products, accumulated in f32. `a` is read
/// through its leading dimension, the widened copy is packed.
void widenedGemm(const Bf16 *a, const Bf16 *b, float *out, int64_t m,
                 int64_t n, int64_t k, bool transposeA, bool transposeB,
                 float beta, int64_t lda) {
  struct WidenedA;
  struct WidenedB;
  float *wa = reusedScratch<WidenedA, float>(m * k),
        *wb = reusedScratch<WidenedB, float>(k * n);
  int64_t aRows = transposeA ? k : m, aColumns = transposeA ? m : k;
  for (int64_t r = 0; r < aRows; ++r)
    for (int64_t c = 0; c < aColumns; ++c)
      wa[r * aColumns + c] = runtime::widen(a[r * lda + c]);
  for (int64_t i = 0; i < k * n; ++i)
    wb[i] = runtime::widen(b[i]);
  gemm(wa, wb, out, m, n, k, transposeA, transposeB, beta);
}

} // namespace

/// On AMX (bench/gemm_shapes.cpp, Intel Xeon, 2 threads, oneDNN 2.6) the
/// primitive ran the step's products not transposed on the left 1.3-2.1x
/// faster than the call: e.g. the projections' x W 2048x256x256 1617-2095
/// against 1106-1311 GFLOP/s, their input gradients dY W^T 1856-2442
/// against 1088-1345, the loss's logits 1024x8000x256 (A B^T) 1216-1252
/// against 842-878. With a long sum it is slower (the loss's dL E,
/// 1024x256x8000: 1427-1628 against 1703-1795), as it is for most A^T B
/// (the weight gradients: 1217-1643 against 1325-1907) and for products
/// both wide and long (bench/gemm_peak.cpp's squares: 1024^3 1533-1568
/// against 1331-1362, but 1536^3 1275-1293 against 1833, 2048^3 1110-1411
/// against 1595-1686). Elsewhere (AVX512-BF16 without AMX, measured on AMD
/// EPYC when the call was chosen) the call stays.
bool bf16GemmOnPrimitive(int64_t m, int64_t n, int64_t k, bool transposeA, bool,
                         bool amx) {
  return amx && !transposeA && m * n * k >= kOneDnnFrom && k <= 4 * n &&
         (k <= 1024 || n <= 512);
}

void gemm(const Bf16 *a, const Bf16 *b, float *out, int64_t m, int64_t n,
          int64_t k, bool transposeA, bool transposeB, float beta,
          int64_t lda) {
  // Inside a parallel region the libraries run one thread each, and the
  // primitives' lock (MatmulPrimitive.cpp) would make two callers take
  // turns: there the call runs.
  if ((lda == 0 || lda == (transposeA ? m : k)) && !omp_in_parallel() &&
      bf16GemmOnPrimitive(m, n, k, transposeA, transposeB, oneDnnHasAmx()) &&
      matmulPrimitive(a, b, nullptr, out, m, n, k, transposeA, transposeB, beta,
                      runtime::Activation::none))
    return;
  bf16GemmCall(a, b, out, m, n, k, transposeA, transposeB, beta, lda);
}

void bf16GemmCall(const Bf16 *a, const Bf16 *b, float *out, int64_t m,
                  int64_t n, int64_t k, bool transposeA, bool transposeB,
                  float beta, int64_t lda) {
  if (m == 0 || n == 0)
    return;
  if (k == 0) { // an empty sum
    for (int64_t i = 0; i < m * n; ++i)
      out[i] *= beta;
    return;
  }
  if (lda == 0)
    lda = transposeA ? m : k;
  CallingThreadOnly alone(gemmOnCallingThread(m * n * k));
  dnnl_status_t status = dnnl_gemm_bf16bf16f32(
      transposeA ? 'T' : 'N', transposeB ? 'T' : 'N', m, n, k, 1.0f, a, lda,
      b, transposeB ? k : n, beta, out, n);
  if (status != dnnl_success)
    widenedGemm(a, b, out, m, n, k, transposeA, transposeB, beta, lda);
}

#ifdef __AVX512BF16__
/// Sixteen values at a time with vcvtneps2bf16 (nearest, ties to even, a
/// NaN kept a quiet NaN, as roundToBf16), about 1.4x the integer rounding
/// on 2^19 values; the instruction flushes subnormal inputs to zero, so the
/// lanes that hold one are rounded again by roundToBf16.
static void roundBlock(const float *input, Bf16 *out) {
  __m512 x = _mm512_loadu_ps(input);
  _mm256_storeu_si256(reinterpret_cast<__m256i *>(out),
                      reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(x)));
  __m512i bits = _mm512_castps_si512(x);
  __mmask16 subnormal =
      _mm512_test_epi32_mask(bits, _mm512_set1_epi32(0x007fffff)) &
      ~_mm512_test_epi32_mask(bits, _mm512_set1_epi32(0x7f800000));
  for (; subnormal; subnormal &= subnormal - 1) {
    int lane = __builtin_ctz(subnormal);
    out[lane] = runtime::roundToBf16(input[lane]);
  }
}
#endif

/// Rounds `count` values on the calling thread.
static void roundSpan(const float *input, Bf16 *out, int64_t count) {
  int64_t blocks = 0;
#ifdef __AVX512BF16__
  blocks = count / 16;
  for (int64_t b = 0; b < blocks; ++b)
    roundBlock(input + 16 * b, out + 16 * b);
#endif
  // Elsewhere integer rounding, which the compiler vectorizes.
#pragma omp simd
  for (int64_t i = 16 * blocks; i < count; ++i)
    out[i] = runtime::roundToBf16(input[i]);
}

/// Below this many values toBf16 runs on the calling thread: one thread
/// rounds 2^16 values in about 8 us, and waking the others (passive
/// waiting) costs more (AMD EPYC, 2 threads: 52 us for 2^16 in parallel).
constexpr int64_t kParallelRounding = 1 << 18;

void toBf16(const float *input, Bf16 *out, int64_t count) {
  constexpr int64_t kSpan = 1 << 14; // a multiple of 16
  int64_t spans = (count + kSpan - 1) / kSpan;
#pragma omp parallel for schedule(static) if (count >= kParallelRounding)
  for (int64_t s = 0; s < spans; ++s)
    roundSpan(input + s * kSpan, out + s * kSpan,
              std::min(kSpan, count - s * kSpan));
}

Bf16 *roundRowInPlace(float *row, int64_t width) {
  Bf16 *out = reinterpret_cast<Bf16 *>(row);
  // A block's bf16 values land on f32 values already read: those of this
  // block (copied out first) and of the blocks before it.
  constexpr int64_t kBlock = 256;
  float block[kBlock];
  for (int64_t c = 0; c < width; c += kBlock) {
    int64_t n = std::min(kBlock, width - c);
    std::copy(row + c, row + c + n, block);
    roundSpan(block, out + c, n);
  }
  return out;
}

Bf16 *roundRowsInPlace(float *values, int64_t rows, int64_t width) {
#pragma omp parallel for schedule(static) if (rows * width >= kParallelRounding)
  for (int64_t r = 0; r < rows; ++r)
    roundRowInPlace(values + r * width, width);
  return reinterpret_cast<Bf16 *>(values);
}

} // namespace tgc::cpu
