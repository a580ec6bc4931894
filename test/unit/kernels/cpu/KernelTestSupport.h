//===- KernelTestSupport.h - helpers of the CPU kernel tests ----*- C++ -*-===//
//
// The CPU kernel tests (one file per op family of runtime/kernels/cpu) run
// every kernel of runtime/kernels/cpu/Kernels.h on random f32 inputs (fixed
// seeds, the cases of test/unit/kernels/KernelTestCases.h) and compare it
// with the interpreter's double-precision kernel on the same values. Shapes
// are not multiples of the kernels' tiles (GEMM row blocks of 128,
// attention tiles of 16 queries x 64 keys) and are large enough to take the
// OpenMP paths.
//
// The error measure: test/unit/kernels/KernelTestSupport.h. Float rounding
// of one operation is 6e-8; the tolerances say how much accumulation each
// kernel adds.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TEST_UNIT_KERNELS_CPU_KERNELTESTSUPPORT_H
#define TGC_TEST_UNIT_KERNELS_CPU_KERNELTESTSUPPORT_H

#include "runtime/kernels/cpu/Kernels.h"
#include "runtime/kernels/reference/HostTensor.h"
#include "runtime/kernels/reference/Kernels.h"
#include "test/unit/kernels/KernelTestCases.h"
#include "test/unit/kernels/KernelTestSupport.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tgc::test {

/// GEMM results against the reference: k = 53 products of values in
/// [-1, 1]: float accumulation error grows like sqrt(k) eps; 1e-5 leaves
/// room for OpenBLAS's blocked summation order.
inline constexpr double kGemmTolerance = 1e-5;

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

/// linear's epilogue on the reference's product [rows, n]: + bias, then
/// ReLU when `relu`.
/// linear's pre-activation, product + bias.
inline HostTensor withBias(HostTensor product, const std::vector<float> &bias) {
  int64_t n = static_cast<int64_t>(bias.size());
  for (int64_t i = 0; i < product.numElements(); ++i)
    product[i] += bias[i % n];
  return product;
}

/// Every activation of linear's epilogue, with a name for the messages.
inline constexpr std::pair<runtime::Activation, const char *> kActivations[] = {
    {runtime::Activation::none, "none"},
    {runtime::Activation::relu, "relu"},
    {runtime::Activation::gelu, "gelu"},
    {runtime::Activation::geluTanh, "gelu_tanh"},
    {runtime::Activation::silu, "silu"},
    {runtime::Activation::sigmoid, "sigmoid"},
    {runtime::Activation::tanh, "tanh"}};

/// linear's results against the double formulas: the GEMM's tolerance, plus
/// what oneDNN's post-ops (their own erf, exp and tanh approximations, a
/// few float steps off) add to the activation's value.
inline constexpr double kActivationTolerance = 2e-5;

/// The m x n result of a kernel that wrote rows `ld` apart into `out`,
/// each row checked not to be written past column n (the caller filled
/// `out` with NaN first).
inline std::vector<float> resultRows(const std::vector<float> &out, int64_t m,
                                     int64_t n, int64_t ld,
                                     const std::string &what) {
  std::vector<float> rows(m * n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j)
      rows[i * n + j] = out[i * ld + j];
    for (int64_t j = n; j < ld; ++j)
      EXPECT_TRUE(std::isnan(out[i * ld + j])) << what << ": wrote past n";
  }
  return rows;
}

/// expectClose against the reference's double-precision result.
inline void expectClose(const std::string &what,
                        const std::vector<float> &actual,
                        const HostTensor &expected, double tolerance,
                        AllZeros zeros = AllZeros::Rejected) {
  ASSERT_EQ(static_cast<int64_t>(actual.size()), expected.numElements())
      << what;
  expectCloseValues(what, actual, expected.data, tolerance, zeros);
}

} // namespace tgc::test

#endif // TGC_TEST_UNIT_KERNELS_CPU_KERNELTESTSUPPORT_H
