//===- Bf16Gemm.cpp - bf16 x bf16 -> f32 GEMMs on oneDNN, rounding to bf16 ===//
//
// oneDNN's bf16 GEMM multiplies bf16 operands and accumulates in f32 (on
// Zen 4 and Sapphire Rapids with vdpbf16ps, twice the f32 FMA rate). It
// runs on libgomp's threads, the pool the generated loops and OpenBLAS use.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cpu/Gemm.h"
#include "runtime/kernels/cpu/Kernels.h"
#include "runtime/kernels/cpu/ReusedBuffer.h"

#include <dnnl.h>

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
/// without AVX-512): the same products, accumulated in f32.
void widenedGemm(const Bf16 *a, const Bf16 *b, float *out, int64_t m,
                 int64_t n, int64_t k, bool transposeA, bool transposeB,
                 float beta) {
  struct WidenedA;
  struct WidenedB;
  std::vector<float> &wa = reusedBuffer<WidenedA>(m * k, 0.0f);
  std::vector<float> &wb = reusedBuffer<WidenedB>(k * n, 0.0f);
  for (int64_t i = 0; i < m * k; ++i)
    wa[i] = runtime::widen(a[i]);
  for (int64_t i = 0; i < k * n; ++i)
    wb[i] = runtime::widen(b[i]);
  gemm(wa.data(), wb.data(), out, m, n, k, transposeA, transposeB, beta);
}

} // namespace

void gemm(const Bf16 *a, const Bf16 *b, float *out, int64_t m, int64_t n,
          int64_t k, bool transposeA, bool transposeB, float beta) {
  if (m == 0 || n == 0)
    return;
  if (k == 0) { // an empty sum
    for (int64_t i = 0; i < m * n; ++i)
      out[i] *= beta;
    return;
  }
  dnnl_status_t status = dnnl_gemm_bf16bf16f32(
      transposeA ? 'T' : 'N', transposeB ? 'T' : 'N', m, n, k, 1.0f, a,
      transposeA ? m : k, b, transposeB ? k : n, beta, out, n);
  if (status != dnnl_success)
    widenedGemm(a, b, out, m, n, k, transposeA, transposeB, beta);
}

void toBf16(const float *input, Bf16 *out, int64_t count) {
  // Integer rounding, which the compiler vectorizes; ties to even as
  // vcvtneps2bf16 does.
#pragma omp parallel for simd schedule(static) if (count >= (1 << 16))
  for (int64_t i = 0; i < count; ++i)
    out[i] = runtime::roundToBf16(input[i]);
}

} // namespace tgc::cpu
