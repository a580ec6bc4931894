//===- VectorMath.h - vectorized math from glibc's libmvec --------*- C++ -*-===//
//
// glibc ships SIMD versions of expf, logf, erff, tanhf and powf (libmvec: 8
// lanes for AVX2, 16 for AVX-512; erff and tanhf since glibc 2.35), but
// math.h declares them only under -ffast-math, which would also drop the
// NaN and infinity checks the step relies on. Declaring them SIMD functions
// here lets GCC call them from `#pragma omp simd` loops: the kernels' and
// the generated elementwise loops' (GELU's erf, tanh, sigmoid's exp), which
// would otherwise call the scalar function once per element (libm.so pulls
// in libmvec as needed). Their error is within 4 ulp.
// And the row maximum the softmaxes start from, written so that GCC
// vectorizes it wherever it is inlined.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_KERNELS_CPU_VECTORMATH_H
#define TGC_RUNTIME_KERNELS_CPU_VECTORMATH_H

#include <cmath>
#include <cstdint>

extern "C" float expf(float) noexcept __attribute__((simd("notinbranch")));
extern "C" float logf(float) noexcept __attribute__((simd("notinbranch")));
extern "C" float erff(float) noexcept __attribute__((simd("notinbranch")));
extern "C" float tanhf(float) noexcept __attribute__((simd("notinbranch")));
extern "C" float powf(float, float) noexcept
    __attribute__((simd("notinbranch")));

namespace tgc::cpu {

/// The largest of x[0], ..., x[n - 1] (n >= 1; a NaN after x[0] is passed
/// over, as std::max does). A comparison of values: with std::max, whose
/// operands are references, GCC 12 leaves the simd reduction scalar once
/// the function is inlined (a chain of vmaxss, about 3 cycles an element).
inline float maxOf(const float *x, int64_t n) {
  float max = x[0];
#pragma omp simd reduction(max : max)
  for (int64_t i = 0; i < n; ++i)
    max = x[i] > max ? x[i] : max;
  return max;
}

} // namespace tgc::cpu

#endif // TGC_RUNTIME_KERNELS_CPU_VECTORMATH_H
