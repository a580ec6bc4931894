//===- Gemm.h - the one cblas_sgemm call of the CPU kernels -------*- C++ -*-===//
#ifndef TGC_RUNTIME_KERNELS_CPU_GEMM_H
#define TGC_RUNTIME_KERNELS_CPU_GEMM_H

#include <cstdint>

namespace tgc::cpu {

/// out [m, n] = op(a) op(b) + beta out, with op(a) [m, k] and op(b) [k, n],
/// row-major (a stored as [k, m] when transposed, b as [n, k]). OpenBLAS
/// threads the call itself: never call it inside an OpenMP parallel region.
void gemm(const float *a, const float *b, float *out, int64_t m, int64_t n,
          int64_t k, bool transposeA, bool transposeB, float beta);

} // namespace tgc::cpu

#endif // TGC_RUNTIME_KERNELS_CPU_GEMM_H
