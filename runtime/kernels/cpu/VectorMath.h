//===- VectorMath.h - vectorized expf from glibc's libmvec --------*- C++ -*-===//
//
// glibc ships SIMD versions of expf (libmvec: 8 lanes for AVX2, 16 for
// AVX-512), but math.h declares them only under -ffast-math, which would
// also drop the NaN and infinity checks the step relies on. Declaring expf
// a SIMD function here lets GCC call them from `#pragma omp simd` loops
// (libm.so pulls in libmvec as needed). Their error is within 4 ulp.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_KERNELS_CPU_VECTORMATH_H
#define TGC_RUNTIME_KERNELS_CPU_VECTORMATH_H

#include <cmath>

extern "C" float expf(float) noexcept __attribute__((simd("notinbranch")));

#endif // TGC_RUNTIME_KERNELS_CPU_VECTORMATH_H
