//===- KernelTestSupport.h - the kernel tests' error measure ----*- C++ -*-===//
//
// What the CPU tests (test/unit/kernels/cpu, against the reference) and the
// CUDA tests (test/unit/kernels/cuda, against the CPU) compare with.
//
// Error of element i: |actual_i - expected_i| / max(|expected_i|, rms), rms
// the expected tensor's root mean square: relative for the large elements,
// absolute at the tensor's own scale for those near zero (where relative
// error means nothing after cancellation). Each comparison prints its worst
// error; tolerance 0 means bit-exact.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TEST_UNIT_KERNELS_KERNELTESTSUPPORT_H
#define TGC_TEST_UNIT_KERNELS_KERNELTESTSUPPORT_H

#include "runtime/kernels/KernelTypes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

namespace tgc::test {

/// The worst per-element error (see the file comment) against float (the
/// CPU kernels') or double (the reference's) expectations.
template <typename Expected>
double worstError(const std::vector<float> &actual,
                  const std::vector<Expected> &expected) {
  double squares = 0.0;
  for (Expected e : expected)
    squares += static_cast<double>(e) * e;
  double rms = std::sqrt(squares / std::max<size_t>(1, expected.size()));
  double worst = 0.0;
  for (size_t i = 0; i < actual.size(); ++i) {
    double diff = std::abs(static_cast<double>(actual[i]) - expected[i]);
    double scale = std::max<double>(std::abs(expected[i]), rms);
    worst = std::max(worst, scale > 0.0 ? diff / scale : diff);
  }
  return worst;
}

/// Compares, prints the worst error, and rejects an all-zero result (a
/// kernel that wrote nothing must not pass against a zero expectation).
template <typename Expected>
void expectCloseValues(const std::string &what,
                       const std::vector<float> &actual,
                       const std::vector<Expected> &expected,
                       double tolerance) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  double worst = worstError(actual, expected);
  std::cout << "  worst error " << what << ": " << worst << " (tolerance "
            << tolerance << ")\n";
  EXPECT_LE(worst, tolerance) << what;
  EXPECT_TRUE(std::any_of(actual.begin(), actual.end(),
                          [](float x) { return x != 0.0f; }))
      << what << " is all zeros";
}

/// expectCloseValues against floats; not a template, so that a braced
/// expectation (`{loss}`) converts.
inline void expectClose(const std::string &what,
                        const std::vector<float> &actual,
                        const std::vector<float> &expected, double tolerance) {
  expectCloseValues(what, actual, expected, tolerance);
}

/// The dropout of every test that has one, on both sides of a comparison:
/// one Philox key, so both drop the same elements.
inline runtime::Dropout testDropout(float rate) { return {1234, 7, 3, rate}; }

} // namespace tgc::test

#endif // TGC_TEST_UNIT_KERNELS_KERNELTESTSUPPORT_H
