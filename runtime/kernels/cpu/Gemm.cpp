//===- Gemm.cpp - matmul on OpenBLAS (f32) or oneDNN (bf16) --------------===//
//
// f32 operands: oneDNN's sgemm for all but small products, OpenBLAS's
// cblas_sgemm for those (bench/gemm_peak.cpp and the shapes of a step,
// measured on AMD EPYC with AVX-512, 2 threads: oneDNN 1.5-2.0x OpenBLAS's
// rate from 128^3 multiply-adds up, e.g. 470 against 248 GFLOP/s at
// 2048x512x512; at 64^3 OpenBLAS is 3.7x faster, oneDNN's call costing more
// than the product). The transposed products f32GemmLibrary names run on a
// oneDNN matmul primitive instead (MatmulPrimitive.cpp), which also keeps
// the long weight-gradient products on OpenBLAS where oneDNN has no AVX-512
// kernels; linear is Linear.cpp. The bf16 gemm is in Bf16Gemm.cpp; a bf16
// product whose result is rounded to bf16 runs on a primitive that rounds in
// its epilogue. The libraries thread each call themselves; the two products
// of a pair (tg.beside_next, SideBySide.h) each call from their own thread
// of a parallel region, where both libraries run single-threaded.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cpu/Gemm.h"
#include "runtime/kernels/cpu/Kernels.h"
#include "runtime/kernels/cpu/ReusedBuffer.h"
#include "runtime/kernels/cpu/WakeCost.h"

#include <algorithm>
#include <cblas.h>
#include <dnnl.h>

namespace tgc::cpu {

/// Whether oneDNN's effective instruction set includes `isa`. Its values
/// are bit sets, not an order: AVX2-VNNI's is above AVX-512's.
static bool oneDnnRuns(dnnl_cpu_isa_t isa) {
  return (dnnl_get_effective_cpu_isa() & isa) == isa;
}

bool oneDnnHasAvx512() {
  static const bool has = oneDnnRuns(dnnl_cpu_isa_avx512_core);
  return has;
}

bool oneDnnHasAmx() {
  static const bool has = oneDnnRuns(dnnl_cpu_isa_avx512_core_amx);
  return has;
}

/// Large products go to oneDNN, whose sgemm is 1.5-2.0x OpenBLAS's on
/// AVX-512, with two kinds on a matmul primitive (bench/gemm_shapes.cpp, 2
/// threads, AMD EPYC with AVX-512): A B^T with K above N (the input gradient
/// of a wide linear: 2048x512x2048, 345 against 247 GFLOP/s), and A^T B with
/// M above N, at least 1024, and K at least 4N (the weight gradient of a
/// narrowing linear over the batch's tokens, e.g. the second FFN's:
/// 1024x256x2048, 280-390 against 234-322 GFLOP/s; sgemm stays faster for
/// 512x128x1024, 412 against 382, and for the output loss's chunks, e.g.
/// 8000x512x256, 389 against 322). Without AVX-512 (AMD EPYC Zen 3, AVX2)
/// oneDNN's A^T B with a long K falls to half OpenBLAS's rate (the weight
/// gradients over the batch's tokens: 1024x256x2048 68 against 131,
/// 256x1024x2048 71 against 127, 512x512x2048 92-107 against 128), while K
/// at most max(M, N) stays level (2048x512x2048 161 against 169): there
/// those run on OpenBLAS.
GemmLibrary f32GemmLibrary(int64_t m, int64_t n, int64_t k, bool transposeA,
                           bool transposeB, bool avx512) {
  if (m * n * k < kOneDnnFrom)
    return GemmLibrary::OpenBlas;
  if (transposeA && !transposeB) {
    if (!avx512 && k >= 2 * std::max(m, n))
      return GemmLibrary::OpenBlas;
    if (m > n && m >= 1024 && k >= 4 * n)
      return GemmLibrary::OneDnnPrimitive;
  }
  if (!transposeA && transposeB && k > n)
    return GemmLibrary::OneDnnPrimitive;
  return GemmLibrary::OneDnnSgemm;
}

void gemm(const float *a, const float *b, float *out, int64_t m, int64_t n,
          int64_t k, bool transposeA, bool transposeB, float beta) {
  if (m == 0 || n == 0)
    return;
  if (k == 0) { // an empty sum; BLAS would reject the zero leading dimension
    for (int64_t i = 0; i < m * n; ++i)
      out[i] *= beta;
    return;
  }
  CallingThreadOnly alone(gemmOnCallingThread(m * n * k));
  // Leading dimensions are the stored row lengths: a is [m, k] or [k, m].
  // A library that refuses the call falls through to the next.
  switch (
      f32GemmLibrary(m, n, k, transposeA, transposeB, oneDnnHasAvx512())) {
  case GemmLibrary::OneDnnPrimitive:
    if (matmulPrimitive(a, b, nullptr, out, m, n, k, transposeA, transposeB,
                        beta, Activation::none))
      return;
    [[fallthrough]];
  case GemmLibrary::OneDnnSgemm:
    if (dnnl_sgemm(transposeA ? 'T' : 'N', transposeB ? 'T' : 'N', m, n, k,
                   1.0f, a, transposeA ? m : k, b, transposeB ? k : n, beta,
                   out, n) == dnnl_success)
      return;
    [[fallthrough]];
  case GemmLibrary::OpenBlas:
    break;
  }
  cblas_sgemm(CblasRowMajor, transposeA ? CblasTrans : CblasNoTrans,
              transposeB ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), 1.0f, a,
              static_cast<int>(transposeA ? m : k), b,
              static_cast<int>(transposeB ? k : n), beta, out,
              static_cast<int>(n));
}

namespace {

/// A bf16 product rounded to bf16: on a primitive, which rounds in its
/// epilogue; without one (a CPU oneDNN has no bf16 kernels for), the f32
/// result in a reused buffer, then rounded.
void roundedProduct(const Bf16 *a, const Bf16 *b, Bf16 *out, int64_t m,
                    int64_t n, int64_t k, bool transposeA, bool transposeB) {
  if (matmulPrimitive(a, b, nullptr, out, m, n, k, transposeA, transposeB,
                      Activation::none))
    return;
  struct UnroundedProduct;
  float *product = reusedScratch<UnroundedProduct, float>(m * n);
  gemm(a, b, product, m, n, k, transposeA, transposeB, 0.0f);
  toBf16(product, out, m * n);
}

/// One product of matmul: f32 results (added to out's with beta 1), or
/// bf16 ones rounded as written.
template <typename T>
void product(const T *a, const T *b, float *out, int64_t m, int64_t n,
             int64_t k, bool transposeA, bool transposeB, float beta) {
  gemm(a, b, out, m, n, k, transposeA, transposeB, beta);
}
void product(const Bf16 *a, const Bf16 *b, Bf16 *out, int64_t m, int64_t n,
             int64_t k, bool transposeA, bool transposeB, float) {
  roundedProduct(a, b, out, m, n, k, transposeA, transposeB);
}

template <typename T, typename Out>
void matmulOf(const T *lhs, const T *rhs, Out *out, int64_t batch, int64_t m,
              int64_t n, int64_t k, bool transposeLhs, bool transposeRhs,
              bool rhsShared, float beta = 0.0f) {
  // Untransposed lhs batches are contiguous rows: one tall GEMM keeps
  // OpenBLAS's threads busy where per-batch calls would be small.
  if (rhsShared && !transposeLhs) {
    product(lhs, rhs, out, batch * m, n, k, false, transposeRhs, beta);
    return;
  }
  for (int64_t b = 0; b < batch; ++b)
    product(lhs + b * m * k, rhs + (rhsShared ? 0 : b * k * n),
            out + b * m * n, m, n, k, transposeLhs, transposeRhs, beta);
}

/// matmulAdd: the summand in out, then the product added to it.
template <typename T>
void matmulAddOf(const T *lhs, const T *rhs, const float *addend, float *out,
                 int64_t batch, int64_t m, int64_t n, int64_t k,
                 bool transposeLhs, bool transposeRhs, bool rhsShared) {
  if (out != addend)
    std::copy(addend, addend + batch * m * n, out);
  matmulOf(lhs, rhs, out, batch, m, n, k, transposeLhs, transposeRhs,
           rhsShared, 1.0f);
}

} // namespace

void matmul(const float *lhs, const float *rhs, float *out, int64_t batch,
            int64_t m, int64_t n, int64_t k, bool transposeLhs,
            bool transposeRhs, bool rhsShared) {
  matmulOf(lhs, rhs, out, batch, m, n, k, transposeLhs, transposeRhs,
           rhsShared);
}

void matmul(const Bf16 *lhs, const Bf16 *rhs, float *out, int64_t batch,
            int64_t m, int64_t n, int64_t k, bool transposeLhs,
            bool transposeRhs, bool rhsShared) {
  matmulOf(lhs, rhs, out, batch, m, n, k, transposeLhs, transposeRhs,
           rhsShared);
}

void matmul(const Bf16 *lhs, const Bf16 *rhs, Bf16 *out, int64_t batch,
            int64_t m, int64_t n, int64_t k, bool transposeLhs,
            bool transposeRhs, bool rhsShared) {
  matmulOf(lhs, rhs, out, batch, m, n, k, transposeLhs, transposeRhs,
           rhsShared);
}

void matmulAdd(const float *lhs, const float *rhs, const float *addend,
               float *out, int64_t batch, int64_t m, int64_t n, int64_t k,
               bool transposeLhs, bool transposeRhs, bool rhsShared) {
  matmulAddOf(lhs, rhs, addend, out, batch, m, n, k, transposeLhs,
              transposeRhs, rhsShared);
}

void matmulAdd(const Bf16 *lhs, const Bf16 *rhs, const float *addend,
               float *out, int64_t batch, int64_t m, int64_t n, int64_t k,
               bool transposeLhs, bool transposeRhs, bool rhsShared) {
  matmulAddOf(lhs, rhs, addend, out, batch, m, n, k, transposeLhs,
              transposeRhs, rhsShared);
}

/// The two kernels the unfused ops call, so the same bits: the CPU's GEMM
/// reads grad whole anyway, and the column sums are a cheap second pass.
template <typename T>
static void weightBiasGradOf(const T *input, const T *grad, float *weightGrad,
                             float *biasGrad, int64_t rows, int64_t k,
                             int64_t n) {
  matmul(input, grad, weightGrad, 1, k, n, rows, true, false, false);
  const int64_t shape[] = {rows, n};
  const bool reduced[] = {true, false};
  reduce(grad, biasGrad, shape, 2, reduced, runtime::Reduction::Sum);
}

void weightBiasGrad(const float *input, const float *grad, float *weightGrad,
                    float *biasGrad, int64_t rows, int64_t k, int64_t n) {
  weightBiasGradOf(input, grad, weightGrad, biasGrad, rows, k, n);
}

void weightBiasGrad(const Bf16 *input, const Bf16 *grad, float *weightGrad,
                    float *biasGrad, int64_t rows, int64_t k, int64_t n) {
  weightBiasGradOf(input, grad, weightGrad, biasGrad, rows, k, n);
}

} // namespace tgc::cpu
