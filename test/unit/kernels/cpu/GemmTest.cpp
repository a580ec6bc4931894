//===- GemmTest.cpp - CPU GEMM kernels against the reference --------------===//
//
// runtime/kernels/cpu/Gemm.cpp: batched matmul in every transposition, and
// linear (GEMM, bias and ReLU) over rows that are not a multiple of its
// blocks of 128. Helpers and the error measure: KernelTestSupport.h.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cpu/KernelTestSupport.h"

using tgc::HostTensor;
namespace cpu = tgc::cpu;
namespace reference = tgc::reference;
using namespace tgc::test;

namespace {

// k = 53 products of values in [-1, 1]: float accumulation error grows like
// sqrt(k) eps; 1e-5 leaves room for OpenBLAS's blocked summation order.
constexpr double kGemmTolerance = 1e-5;

TEST(CpuKernels, Matmul) {
  const int64_t batch = 3, m = 37, n = 29, k = 53;
  for (bool shared : {false, true})
    for (bool tl : {false, true})
      for (bool tr : {false, true}) {
        std::vector<float> lhs = uniform(batch * m * k, 1);
        std::vector<float> rhs = uniform((shared ? 1 : batch) * k * n, 2);
        std::vector<int64_t> lShape = {batch, tl ? k : m, tl ? m : k};
        std::vector<int64_t> rShape = {tr ? n : k, tr ? k : n};
        if (!shared)
          rShape.insert(rShape.begin(), batch);
        HostTensor expected =
            reference::matmul(host(lhs, lShape), host(rhs, rShape), tl, tr);
        std::vector<float> out(batch * m * n, 0.0f);
        cpu::matmul(lhs.data(), rhs.data(), out.data(), batch, m, n, k, tl, tr,
                    shared);
        expectClose("matmul shared=" + std::to_string(shared) +
                        " transposeLhs=" + std::to_string(tl) +
                        " transposeRhs=" + std::to_string(tr),
                    out, expected, kGemmTolerance);
      }
}

TEST(CpuKernels, Linear) {
  // 300 rows: two full blocks of 128 and a partial one.
  const int64_t rows = 300, k = 45, n = 70;
  std::vector<float> input = uniform(rows * k, 3), weight = uniform(k * n, 4),
                     bias = uniform(n, 5);
  HostTensor product =
      reference::matmul(host(input, {rows, k}), host(weight, {k, n}), false,
                     false);
  for (bool relu : {false, true}) {
    HostTensor expected = product;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < n; ++c) {
        double &y = expected[r * n + c];
        y += bias[c];
        if (relu)
          y = std::max(y, 0.0);
      }
    std::vector<float> out(rows * n, 0.0f);
    cpu::linear(input.data(), weight.data(), bias.data(), out.data(), rows, k,
                n, relu);
    expectClose(std::string("linear relu=") + (relu ? "1" : "0"), out,
                expected, kGemmTolerance);
  }
}

} // namespace
