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

/// What an all-zero result means to a comparison.
enum class AllZeros {
  Rejected, ///< a kernel that wrote nothing must not pass against zeros
  /// the test filled the output with garbage first (so a kernel that wrote
  /// nothing fails the comparison), and zeros may be the exact answer
  Allowed,
};

/// Compares, prints the worst error, and rejects an all-zero result unless
/// told otherwise.
template <typename Expected>
void expectCloseValues(const std::string &what,
                       const std::vector<float> &actual,
                       const std::vector<Expected> &expected,
                       double tolerance,
                       AllZeros zeros = AllZeros::Rejected) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  double worst = worstError(actual, expected);
  std::cout << "  worst error " << what << ": " << worst << " (tolerance "
            << tolerance << ")\n";
  EXPECT_LE(worst, tolerance) << what;
  if (zeros == AllZeros::Rejected) {
    EXPECT_TRUE(std::any_of(actual.begin(), actual.end(),
                            [](float x) { return x != 0.0f; }))
        << what << " is all zeros";
  }
}

/// expectCloseValues against floats; not a template, so that a braced
/// expectation (`{loss}`) converts.
inline void expectClose(const std::string &what,
                        const std::vector<float> &actual,
                        const std::vector<float> &expected, double tolerance,
                        AllZeros zeros = AllZeros::Rejected) {
  expectCloseValues(what, actual, expected, tolerance, zeros);
}

/// The share of elements whose error (worstError's measure) exceeds `bound`.
template <typename Expected>
double shareAbove(const std::vector<float> &actual,
                  const std::vector<Expected> &expected, double bound) {
  double squares = 0.0;
  for (Expected e : expected)
    squares += static_cast<double>(e) * e;
  double rms = std::sqrt(squares / std::max<size_t>(1, expected.size()));
  size_t above = 0;
  for (size_t i = 0; i < actual.size(); ++i)
    if (std::abs(actual[i] - static_cast<double>(expected[i])) >
        bound * std::max<double>(std::abs(expected[i]), rms))
      ++above;
  return static_cast<double>(above) / std::max<size_t>(1, actual.size());
}

// Attention with bf16_products rounds f32 operands (probabilities, dO, score
// gradients) to bf16 for its products. Two sides that compute those values
// in different orders (or in double) may round a value within the last f32
// bits of a bf16 tie to neighbouring bf16s: one term of a sum off by 2^-8
// relative. So most elements must match the expectation with the same
// roundings to f32 accuracy (kBf16ProductsNear) and every element within a
// few such steps (kBf16ProductsTolerance), while against the result without
// the roundings most elements are off by the roundings' size.
inline constexpr double kBf16ProductsTolerance = 1e-2;
inline constexpr double kBf16ProductsNear = 1e-4;

/// Close to `rounded` (the same roundings), far from `plain` (none).
template <typename Expected>
void expectBf16Products(const std::string &what, const std::vector<float> &got,
                        const std::vector<Expected> &rounded,
                        const std::vector<Expected> &plain) {
  expectCloseValues(what, got, rounded, kBf16ProductsTolerance);
  double near = shareAbove(got, rounded, kBf16ProductsNear),
         far = shareAbove(got, plain, kBf16ProductsNear);
  std::cout << "  " << what << ": " << 100 * near << "% of elements above "
            << kBf16ProductsNear << " from the rounded expectation, "
            << 100 * far << "% from the plain one\n";
  EXPECT_LE(near, 0.01) << what;
  EXPECT_GE(far, 0.2) << what << ": the products were not rounded";
}

/// Each value rounded to bf16 (runtime::roundToBf16).
inline std::vector<runtime::Bf16>
roundedToBf16(const std::vector<float> &values) {
  std::vector<runtime::Bf16> rounded;
  for (float x : values)
    rounded.push_back(runtime::roundToBf16(x));
  return rounded;
}

/// The dropout of every test that has one, on both sides of a comparison:
/// one Philox key, so both drop the same elements.
inline runtime::Dropout testDropout(float rate) { return {1234, 7, 3, rate}; }

/// Expects `rounded` to be `values` rounded to bf16, bit for bit (a kernel's
/// bf16 copy written beside its f32 result: tg-fold-bf16-roundings).
inline void expectRoundedCopy(const std::string &what,
                              const std::vector<runtime::Bf16> &rounded,
                              const std::vector<float> &values) {
  ASSERT_EQ(rounded.size(), values.size()) << what;
  int64_t differing = 0;
  for (size_t i = 0; i < values.size(); ++i)
    differing += rounded[i].bits != runtime::roundToBf16(values[i]).bits;
  EXPECT_EQ(differing, 0) << what << ": bf16 copies that are not the f32 "
                                     "result rounded";
}

} // namespace tgc::test

#endif // TGC_TEST_UNIT_KERNELS_KERNELTESTSUPPORT_H
