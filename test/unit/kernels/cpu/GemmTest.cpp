//===- GemmTest.cpp - CPU GEMM kernels against the reference --------------===//
//
// runtime/kernels/cpu/Gemm.cpp: batched matmul in every transposition, and
// linear (GEMM, bias and ReLU) over rows that are not a multiple of its
// blocks of 128. Helpers and the error measure: KernelTestSupport.h.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cpu/KernelTestSupport.h"

namespace tgc::test {
namespace {

// k = 53 products of values in [-1, 1]: float accumulation error grows like
// sqrt(k) eps; 1e-5 leaves room for OpenBLAS's blocked summation order.
constexpr double kGemmTolerance = 1e-5;

TEST(CpuKernels, Matmul) {
  forEachMatmulCase([](const MatmulCase &c) {
    HostTensor expected =
        reference::matmul(host(c.lhs, c.lhsShape()), host(c.rhs, c.rhsShape()),
                          c.transposeLhs, c.transposeRhs);
    std::vector<float> out(c.batch * c.m * c.n, 0.0f);
    cpu::matmul(c.lhs.data(), c.rhs.data(), out.data(), c.batch, c.m, c.n, c.k,
                c.transposeLhs, c.transposeRhs, c.sharedRhs);
    expectClose(c.name(), out, expected, kGemmTolerance);
  });
}

TEST(CpuKernels, Linear) {
  // 300 rows: two full blocks of 128 and a partial one.
  const int64_t rows = 300, k = 45, n = 70;
  std::vector<float> input = uniform(rows * k, 3), weight = uniform(k * n, 4),
                     bias = uniform(n, 5);
  HostTensor product = reference::matmul(host(input, {rows, k}),
                                         host(weight, {k, n}), false, false);
  for (bool relu : {false, true}) {
    HostTensor expected = withBiasAndRelu(product, bias, relu);
    std::vector<float> out(rows * n, 0.0f);
    cpu::linear(input.data(), weight.data(), bias.data(), out.data(), rows, k,
                n, relu);
    expectClose(std::string("linear relu=") + (relu ? "1" : "0"), out, expected,
                kGemmTolerance);
  }
}

} // namespace
} // namespace tgc::test
