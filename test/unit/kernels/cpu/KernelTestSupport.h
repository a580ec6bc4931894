//===- KernelTestSupport.h - helpers of the CPU kernel tests ----*- C++ -*-===//
//
// The CPU kernel tests (one file per op family of runtime/kernels/cpu) run
// every kernel of runtime/kernels/cpu/Kernels.h on random f32 inputs (fixed
// seeds, test/unit/RandomInputs.h) and compare it with the interpreter's
// double-precision kernel on the same values. Shapes are not multiples of
// the kernels' tiles (GEMM row blocks of 128, attention tiles of 16 queries
// x 64 keys) and are large enough to take the OpenMP paths.
//
// Error of element i: |actual_i - expected_i| / max(|expected_i|, rms), rms
// the expected tensor's root mean square: relative for the large elements,
// absolute at the tensor's own scale for those near zero (where relative
// error means nothing after cancellation). Float rounding of one operation
// is 6e-8; the tolerances say how much accumulation each kernel adds. Each
// comparison prints its worst error; tolerance 0 means bit-exact.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TEST_UNIT_KERNELS_CPU_KERNELTESTSUPPORT_H
#define TGC_TEST_UNIT_KERNELS_CPU_KERNELTESTSUPPORT_H

#include "runtime/kernels/reference/HostTensor.h"
#include "runtime/kernels/reference/Kernels.h"
#include "runtime/kernels/cpu/Kernels.h"
#include "test/unit/RandomInputs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

namespace tgc::test {

inline HostTensor host(const std::vector<float> &values,
                       std::vector<int64_t> shape) {
  return HostTensor::f32(std::move(shape),
                         std::vector<double>(values.begin(), values.end()));
}
inline HostTensor hostIds(const std::vector<int32_t> &values,
                          std::vector<int64_t> shape) {
  return HostTensor::i32(std::move(shape),
                         std::vector<double>(values.begin(), values.end()));
}
inline std::vector<float> toFloats(const HostTensor &t) {
  return std::vector<float>(t.data.begin(), t.data.end());
}

/// The worst per-element error (see the file comment).
inline double worstError(const std::vector<float> &actual,
                         const HostTensor &expected) {
  double squares = 0.0;
  for (double e : expected.data)
    squares += e * e;
  double rms = std::sqrt(squares / std::max<int64_t>(1, expected.data.size()));
  double worst = 0.0;
  for (size_t i = 0; i < actual.size(); ++i) {
    double diff = std::abs(static_cast<double>(actual[i]) - expected[i]);
    double scale = std::max(std::abs(expected[i]), rms);
    worst = std::max(worst, scale > 0.0 ? diff / scale : diff);
  }
  return worst;
}

/// Compares, prints the worst error, and rejects an all-zero result (a
/// kernel that wrote nothing must not pass against a zero expectation).
inline void expectClose(const std::string &what,
                        const std::vector<float> &actual,
                        const HostTensor &expected, double tolerance) {
  ASSERT_EQ(static_cast<int64_t>(actual.size()), expected.numElements())
      << what;
  double worst = worstError(actual, expected);
  std::cout << "  worst error " << what << ": " << worst << " (tolerance "
            << tolerance << ")\n";
  EXPECT_LE(worst, tolerance) << what;
  EXPECT_TRUE(std::any_of(actual.begin(), actual.end(),
                          [](float x) { return x != 0.0f; }))
      << what << " is all zeros";
}

/// The same dropout (Philox key) on both sides, as the norm and attention
/// tests use it.
inline cpu::Dropout cpuDropout(float rate) { return {1234, 7, 3, rate}; }
inline reference::Dropout interpDropout(float rate) {
  return {1234, 7, 3, rate};
}

} // namespace tgc::test

#endif // TGC_TEST_UNIT_KERNELS_CPU_KERNELTESTSUPPORT_H
