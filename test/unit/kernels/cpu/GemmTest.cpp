//===- GemmTest.cpp - CPU GEMM kernels against the reference --------------===//
//
// runtime/kernels/cpu/Gemm.cpp and Linear.cpp: batched matmul in every
// transposition (and matmulAdd, into the summand's bytes or its own), and
// linear (GEMM, bias and each activation, with and
// without the pre-activation) over rows that are not a multiple of its
// blocks of 512. Helpers and the error measure: KernelTestSupport.h.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cpu/KernelTestSupport.h"

#include "runtime/kernels/cpu/F32Tile.h"
#include "runtime/kernels/cpu/Gemm.h"
#include "runtime/kernels/cpu/SideBySide.h"
#include "runtime/kernels/cpu/WakeCost.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <omp.h>
#include <tuple>

namespace tgc::test {
namespace {

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

/// matmulAdd of one shape on T (float or Bf16) operands: the sums against
/// the reference product plus the summand in double, written into their
/// own bytes (the summand copied first) and into the summand's, the two
/// alike bit for bit.
template <typename T>
void expectMatmulAddMatches(const std::string &what, const MatmulCase &c,
                            const std::vector<T> &lhs,
                            const std::vector<T> &rhs,
                            const HostTensor &product) {
  const int64_t count = c.batch * c.m * c.n;
  std::vector<float> addend = uniform(count, 9);
  HostTensor expected = product;
  for (int64_t i = 0; i < count; ++i)
    expected.data[i] += addend[i];
  std::vector<float> out(count, 7.0f), inPlace = addend;
  cpu::matmulAdd(lhs.data(), rhs.data(), addend.data(), out.data(), c.batch,
                 c.m, c.n, c.k, c.transposeLhs, c.transposeRhs, c.sharedRhs);
  expectClose(what, out, expected, kGemmTolerance);
  cpu::matmulAdd(lhs.data(), rhs.data(), inPlace.data(), inPlace.data(),
                 c.batch, c.m, c.n, c.k, c.transposeLhs, c.transposeRhs,
                 c.sharedRhs);
  EXPECT_EQ(inPlace, out) << what << ": in place";
}

TEST(CpuKernels, MatmulAdd) {
  forEachMatmulCase([](const MatmulCase &c) {
    HostTensor product =
        reference::matmul(host(c.lhs, c.lhsShape()), host(c.rhs, c.rhsShape()),
                          c.transposeLhs, c.transposeRhs);
    expectMatmulAddMatches("matmulAdd " + c.name(), c, c.lhs, c.rhs, product);
    std::vector<runtime::Bf16> lhs = roundedToBf16(c.lhs),
                               rhs = roundedToBf16(c.rhs);
    auto widened = [](const std::vector<runtime::Bf16> &values) {
      std::vector<float> wide;
      for (runtime::Bf16 x : values)
        wide.push_back(runtime::widen(x));
      return wide;
    };
    HostTensor bf16Product = reference::matmul(
        host(widened(lhs), c.lhsShape()), host(widened(rhs), c.rhsShape()),
        c.transposeLhs, c.transposeRhs);
    expectMatmulAddMatches("bf16 matmulAdd " + c.name(), c, lhs, rhs,
                           bf16Product);
  });
}

/// cpu::linear of every activation, with and without writing the
/// pre-activation, against the reference formulas (Elementwise.h in double).
void expectLinearMatches(int64_t rows, int64_t k, int64_t n, uint64_t seed) {
  std::vector<float> input = uniform(rows * k, seed),
                     weight = uniform(k * n, seed + 1),
                     bias = uniform(n, seed + 2);
  std::vector<float> zeros(n, 0.0f);
  HostTensor product = reference::matmul(host(input, {rows, k}),
                                         host(weight, {k, n}), false, false);
  std::string shape = std::to_string(rows) + "x" + std::to_string(k) + "x" +
                      std::to_string(n);
  for (bool biased : {false, true}) {
    HostTensor pre = withBias(product, biased ? bias : zeros);
    for (auto [activation, name] : kActivations)
      for (int call = 0; call < 2; ++call) { // the second reuses a primitive
        HostTensor expected = reference::activated(pre, activation);
        std::string what = "linear " + shape + " " + name +
                           (biased ? " bias" : "");
        const float *b = biased ? bias.data() : nullptr;
        std::vector<float> out(rows * n, 7.0f), kept(rows * n, 7.0f);
        cpu::linear(input.data(), weight.data(), b, out.data(), rows, k, n,
                    activation);
        expectClose(what, out, expected, kActivationTolerance);
        cpu::linear(input.data(), weight.data(), b, out.data(), kept.data(),
                    rows, k, n, activation);
        expectClose(what + " (result beside pre)", out, expected,
                    kActivationTolerance);
        expectClose(what + " (pre)", kept, pre, kGemmTolerance);
      }
  }
}

// 1100 rows: two full blocks of 512 and a partial one, each GEMM followed by
// the epilogue (a product below the primitive's 2^21 multiply-adds).
TEST(CpuKernels, Linear) { expectLinearMatches(1100, 20, 70, 3); }

// Linears of 2^21 multiply-adds and more run on a oneDNN matmul primitive
// that adds the bias and applies the activation itself as a post-op
// (MatmulPrimitive.cpp); keeping the pre-activation, on blocks.
TEST(CpuKernels, LargeLinearOnAMatmulPrimitive) {
  expectLinearMatches(260, 96, 100, 8);
}

/// op(a) op(b) of m x n x k through cpu::gemm with beta 0, then again with
/// beta 1 (twice the product), against the reference.
void expectGemmWithBetas(int64_t m, int64_t n, int64_t k, bool transposeA,
                         bool transposeB, uint64_t seed) {
  std::vector<float> a = uniform(m * k, seed), b = uniform(k * n, seed + 1);
  HostTensor expected = reference::matmul(
      host(a, transposeA ? std::vector<int64_t>{k, m}
                         : std::vector<int64_t>{m, k}),
      host(b, transposeB ? std::vector<int64_t>{n, k}
                         : std::vector<int64_t>{k, n}),
      transposeA, transposeB);
  std::string what = std::string(transposeA ? "A^T" : "A") +
                     (transposeB ? " B^T" : " B");
  std::vector<float> out(m * n, 0.0f);
  cpu::gemm(a.data(), b.data(), out.data(), m, n, k, transposeA, transposeB,
            0.0f);
  expectClose(what + " beta 0", out, expected, kGemmTolerance);
  cpu::gemm(a.data(), b.data(), out.data(), m, n, k, transposeA, transposeB,
            1.0f);
  for (double &x : expected.data)
    x *= 2.0;
  expectClose(what + " beta 1", out, expected, kGemmTolerance);
}

// The dispatch's rule (Gemm.cpp's f32GemmLibrary) on each instruction set,
// for shapes of the bench rows' steps.
TEST(CpuKernels, F32GemmLibraryPerShapeAndInstructionSet) {
  using L = cpu::GemmLibrary;
  struct Case {
    int64_t m, n, k;
    bool ta, tb;
    L avx512, avx2;
  } cases[] = {
      {64, 64, 64, false, false, L::OpenBlas, L::OpenBlas}, // small
      {2048, 1024, 256, false, false, L::OneDnnSgemm, L::OneDnnSgemm},
      {2048, 256, 1024, false, true, L::OneDnnPrimitive, L::OneDnnPrimitive},
      {2048, 1024, 256, false, true, L::OneDnnSgemm, L::OneDnnSgemm},
      // Weight gradients over 2048 tokens: long K.
      {1024, 256, 2048, true, false, L::OneDnnPrimitive, L::OpenBlas},
      {256, 1024, 2048, true, false, L::OneDnnSgemm, L::OpenBlas},
      {512, 512, 2048, true, false, L::OneDnnSgemm, L::OpenBlas},
      {2048, 512, 2048, true, false, L::OneDnnPrimitive, L::OneDnnPrimitive},
      // The output loss's embedding gradient: short K.
      {8000, 256, 256, true, false, L::OneDnnSgemm, L::OneDnnSgemm},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
                 std::to_string(c.k) + (c.ta ? " T" : " N") +
                 (c.tb ? "T" : "N"));
    EXPECT_EQ(cpu::f32GemmLibrary(c.m, c.n, c.k, c.ta, c.tb, true), c.avx512);
    EXPECT_EQ(cpu::f32GemmLibrary(c.m, c.n, c.k, c.ta, c.tb, false), c.avx2);
  }
}

// The bf16 dispatch's rule (Bf16Gemm.cpp's bf16GemmOnPrimitive), for the
// shapes of the bench rows' steps: a primitive only with AMX, and there for
// products not transposed on the left with K at most 4N, not both long and
// wide.
TEST(CpuKernels, Bf16GemmOnPrimitivePerShape) {
  struct Case {
    int64_t m, n, k;
    bool ta, tb, amx;
  } cases[] = {
      {64, 64, 64, false, false, false},      // small
      {2048, 256, 256, false, false, true},   // projections' x W
      {2048, 256, 256, false, true, true},    // their dY W^T
      {2048, 1024, 256, false, true, true},   // ffn2's dY W2^T
      {2048, 256, 1024, false, true, true},   // ffn1's dH W1^T: K = 4N
      {1024, 8000, 256, false, true, true},   // the loss's logits
      {1024, 256, 8000, false, false, false}, // the loss's dL E: a long sum
      {256, 1024, 2048, true, false, false},  // weight gradients
      {8000, 256, 1024, true, false, false},
      {2048, 512, 2048, false, true, true},   // 6L's ffn1 dH W1^T
      {1024, 1024, 1024, false, false, true}, // squares: up to 1024
      {1536, 1536, 1536, false, false, false},
      {2048, 2048, 2048, false, false, false},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
                 std::to_string(c.k) + (c.ta ? " T" : " N") +
                 (c.tb ? "T" : "N"));
    EXPECT_EQ(cpu::bf16GemmOnPrimitive(c.m, c.n, c.k, c.ta, c.tb, true), c.amx);
    EXPECT_FALSE(cpu::bf16GemmOnPrimitive(c.m, c.n, c.k, c.ta, c.tb, false));
  }
}

// The large products the rule sends to a matmul primitive: A B^T with K
// above N, and A^T B with M above N, at least 1024, and K at least 4N (a
// narrowing linear's weight gradient); and the A^T B with a long K that
// runs on OpenBLAS where oneDNN has no AVX-512 kernels (oneDNN's sgemm
// elsewhere).
TEST(CpuKernels, LargeGemmWithLongRowsOnAMatmulPrimitive) {
  expectGemmWithBetas(120, 64, 300, false, true, 11);
}
TEST(CpuKernels, LargeTransposedLhsGemmOnAMatmulPrimitive) {
  expectGemmWithBetas(1024, 24, 100, true, false, 13);
}
TEST(CpuKernels, LargeTransposedLhsGemmWithALongSum) {
  expectGemmWithBetas(96, 80, 400, true, false, 17);
}

// Products of 2^21 multiply-adds and more run on oneDNN's sgemm (Gemm.cpp):
// 160 x 136 x 100 in every transposition, beta 0 and 1.
TEST(CpuKernels, LargeGemmsOnOneDnn) {
  const int64_t m = 160, n = 136, k = 100;
  std::vector<float> a = uniform(m * k, 6), b = uniform(k * n, 7);
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      HostTensor expected =
          reference::matmul(host(a, ta ? std::vector<int64_t>{k, m}
                                       : std::vector<int64_t>{m, k}),
                            host(b, tb ? std::vector<int64_t>{n, k}
                                       : std::vector<int64_t>{k, n}),
                            ta, tb);
      std::vector<float> out(m * n, 0.5f);
      cpu::gemm(a.data(), b.data(), out.data(), m, n, k, ta, tb, 1.0f);
      for (double &x : expected.data)
        x += 0.5; // beta 1 adds what out held
      std::string what = std::string("large gemm ") + (ta ? "T" : "N") +
                         (tb ? "T" : "N");
      expectClose(what, out, expected, kGemmTolerance);
      cpu::gemm(a.data(), b.data(), out.data(), m, n, k, ta, tb, 0.0f);
      for (double &x : expected.data)
        x -= 0.5;
      expectClose(what + " beta 0", out, expected, kGemmTolerance);
    }
}

// The attention tiles' f32 product (F32Tile.h, used on AVX2 CPUs): every
// shape class its blocks of 6 x 16 meet (row and column tails, the last
// rows split 4 + 3 and 4 + 4, n below 8, k of 1), both operands in place or
// transposed (b in place when its rows are a multiple of 8 floats, packed
// otherwise), beta 0 (out never read:
// it starts as NaN) and 1, alpha not 1, and a result row stride wider than
// n, which it must not write past. Against sums in double.
// Operands stored with `pad` floats after each row as well: attention's
// heads are rows of a wider tensor.
TEST(CpuKernels, F32TileProduct) {
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{32, 32, 32},
                         {64, 64, 64},
                         {7, 17, 5},
                         {6, 16, 1},
                         {13, 3, 40},
                         {1, 9, 33},
                         {64, 70, 32},
                         {32, 16, 32},
                         {5, 8, 7},
                         {9, 24, 16},
                         {8, 40, 9},
                         {14, 16, 3}}) {
    std::vector<float> a = uniform((m + 3) * (k + 3), 21),
                       b = uniform((k + 3) * (n + 3), 22),
                       start = uniform(m * n, 23);
    for (int64_t pad : {0, 3})
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (float beta : {0.0f, 1.0f}) {
            const float alpha = 0.75f;
            auto at = [&](const std::vector<float> &x, bool t, int64_t rows,
                          int64_t cols, int64_t r, int64_t c) {
              return static_cast<double>(t ? x[c * (rows + pad) + r]
                                           : x[r * (cols + pad) + c]);
            };
            std::vector<double> expected(m * n);
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) {
                double sum = 0.0;
                for (int64_t p = 0; p < k; ++p)
                  sum += at(a, ta, m, k, i, p) * at(b, tb, k, n, p, j);
                expected[i * n + j] = alpha * sum + beta * start[i * n + j];
              }
            const int64_t ld = n + 5;
            std::vector<float> out(m * ld, std::nanf(""));
            if (beta != 0.0f)
              for (int64_t i = 0; i < m; ++i)
                for (int64_t j = 0; j < n; ++j)
                  out[i * ld + j] = start[i * n + j];
            auto operand = [&](const std::vector<float> &x, bool t,
                               int64_t rows, int64_t cols) {
              return t ? cpu::TileOperand<float>{x.data(), 1, rows + pad}
                       : cpu::TileOperand<float>{x.data(), cols + pad, 1};
            };
            cpu::f32TileProduct(operand(a, ta, m, k), operand(b, tb, k, n),
                                out.data(), ld, m, n, k, alpha, beta);
            std::string what =
                std::to_string(m) + "x" + std::to_string(n) + "x" +
                std::to_string(k) + (ta ? " aT" : "") + (tb ? " bT" : "") +
                " pad " + std::to_string(pad) + " beta " + std::to_string(beta);
            expectCloseValues("f32 tile " + what,
                              resultRows(out, m, n, ld, what), expected,
                              kGemmTolerance);
          }
  }
}

/// Where each of sideBySide's two calls ran: its thread, whether in a
/// parallel region, and the order the calls started in.
struct PairRun {
  int firstThread = -1, secondThread = -1, order = 0, firstOrder = -1,
      secondOrder = -1;
  bool firstInRegion = false, secondInRegion = false;
  void run() {
    cpu::sideBySide(
        [&] {
          firstThread = omp_get_thread_num();
          firstInRegion = omp_in_parallel();
#pragma omp atomic capture
          firstOrder = order++;
        },
        [&] {
          secondThread = omp_get_thread_num();
          secondInRegion = omp_in_parallel();
#pragma omp atomic capture
          secondOrder = order++;
        });
  }
};

/// Runs `body` with omp_get_max_threads() == threads, then restores it.
template <typename Body> void withThreads(int threads, Body body) {
  int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  body();
  omp_set_num_threads(before);
}

// Two threads: one call each, in a region. Any other count, or from inside
// a region: both in the calling thread, the first first.
TEST(CpuKernels, SideBySideRunsAPairOnTwoThreadsOnly) {
  withThreads(2, [] {
    PairRun pair;
    pair.run();
    EXPECT_EQ(pair.firstThread, 0);
    EXPECT_EQ(pair.secondThread, 1);
    EXPECT_TRUE(pair.firstInRegion && pair.secondInRegion);
    EXPECT_EQ(pair.order, 2);
  });
  for (int threads : {1, 3}) {
    withThreads(threads, [&] {
      PairRun pair;
      pair.run();
      EXPECT_EQ(pair.firstThread, 0) << threads << " threads";
      EXPECT_EQ(pair.secondThread, 0) << threads << " threads";
      EXPECT_FALSE(pair.firstInRegion || pair.secondInRegion);
      EXPECT_EQ(pair.firstOrder, 0);
      EXPECT_EQ(pair.secondOrder, 1);
    });
  }
  withThreads(2, [] {
    PairRun pair;
#pragma omp parallel num_threads(2)
#pragma omp master
    pair.run();
    EXPECT_EQ(pair.firstThread, 0);
    EXPECT_EQ(pair.secondThread, 0);
    EXPECT_EQ(pair.firstOrder, 0);
    EXPECT_EQ(pair.secondOrder, 1);
  });
}

TEST(CpuKernels, CallingThreadOnlyHoldsOneThreadForItsScope) {
  withThreads(2, [] {
    {
      cpu::CallingThreadOnly alone(true);
      EXPECT_EQ(omp_get_max_threads(), 1);
      {
        cpu::CallingThreadOnly nested(true);
        EXPECT_EQ(omp_get_max_threads(), 1);
      }
      EXPECT_EQ(omp_get_max_threads(), 1);
    }
    EXPECT_EQ(omp_get_max_threads(), 2);
    {
      cpu::CallingThreadOnly notAlone(false);
      EXPECT_EQ(omp_get_max_threads(), 2);
    }
    int inside = 0;
#pragma omp parallel num_threads(2)
#pragma omp master
    {
      cpu::CallingThreadOnly alone(true);
      inside = omp_get_max_threads();
    }
    EXPECT_EQ(inside, 2) << "a region's thread count is left alone";
    EXPECT_EQ(omp_get_max_threads(), 2);
  });
}

// The suite runs this file twice: as it is, and with OMP_WAIT_POLICY=passive
// (cpu.CpuKernels.GemmsWithSleepingWorkers), where the small products run
// on the calling thread and must still match the reference.
TEST(CpuKernels, SmallGemmsOnTheCallingThreadOnlyWhereWorkersSleep) {
  const char *policy = std::getenv("OMP_WAIT_POLICY");
  bool passive = policy && std::strcmp(policy, "passive") == 0;
  const char *spin = std::getenv("GOMP_SPINCOUNT");
  if (!passive && spin)
    GTEST_SKIP() << "GOMP_SPINCOUNT is set: the policy is the environment's";
  EXPECT_EQ(cpu::workersSleep(), passive);
  EXPECT_EQ(cpu::gemmOnCallingThread(int64_t{1024} * 128 * 128), passive);
  EXPECT_FALSE(cpu::gemmOnCallingThread(cpu::kSleepingGemmFrom));
}

// A projection's two gradient products at once, as the generated step runs
// a pair (each library single-threaded inside the region), for a square
// projection (oneDNN's sgemm and OpenBLAS) and a widening one whose dX is a
// oneDNN matmul primitive: each matches the reference.
TEST(CpuKernels, GemmsSideBySideMatchTheReference) {
  for (auto [rows, in, out] : {std::tuple<int64_t, int64_t, int64_t>{1024, 128, 128},
                               {1024, 128, 512}}) {
    std::vector<float> x = uniform(rows * in, 40), w = uniform(in * out, 41),
                       dy = uniform(rows * out, 42);
    HostTensor dxExpected = reference::matmul(host(dy, {rows, out}),
                                              host(w, {in, out}), false, true);
    HostTensor dwExpected = reference::matmul(host(x, {rows, in}),
                                              host(dy, {rows, out}), true, false);
    std::vector<float> dx(rows * in, 0.0f), dw(in * out, 0.0f);
    withThreads(2, [&] {
      cpu::sideBySide(
          [&] {
            cpu::matmul(dy.data(), w.data(), dx.data(), 1, rows, in, out,
                        false, true, true);
          },
          [&] {
            cpu::matmul(x.data(), dy.data(), dw.data(), 1, in, out, rows,
                        true, false, false);
          });
    });
    std::string what = std::to_string(rows) + "x" + std::to_string(in) + "x" +
                       std::to_string(out);
    expectClose("side by side dX " + what, dx, dxExpected, kGemmTolerance);
    expectClose("side by side dW " + what, dw, dwExpected, kGemmTolerance);
  }
}

} // namespace
} // namespace tgc::test
