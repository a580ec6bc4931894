//===- Bf16Test.cpp - the bf16 kernels of tg-mixed-precision --------------===//
//
// runtime/kernels/cpu/Bf16Gemm.cpp, Bf16Tile.cpp and the bf16 overloads of
// Gemm.cpp, with f32 or rounded bf16 results (the output loss's are in
// TrainingTest.cpp): rounding to bf16
// bit for bit, and bf16 GEMMs and tile products against the
// reference on the same rounded operands. A product of two bf16 values is
// exact in f32, so the only error left is f32 accumulation: the f32
// tolerance holds.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cpu/Bf16Tile.h"
#include "runtime/kernels/cpu/Gemm.h"
#include "test/unit/kernels/cpu/KernelTestSupport.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace tgc::test {
namespace {

using runtime::Bf16;

float fromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::vector<Bf16> rounded(const std::vector<float> &values) {
  std::vector<Bf16> out(values.size());
  cpu::toBf16(values.data(), out.data(), static_cast<int64_t>(values.size()));
  return out;
}

/// The rounded values back in f32: what the reference multiplies.
std::vector<float> widened(const std::vector<Bf16> &values) {
  std::vector<float> out;
  for (Bf16 v : values)
    out.push_back(runtime::widen(v));
  return out;
}

// Each case alone (the scalar loop) and all of them in one array of 48
// (whole blocks of 16: vcvtneps2bf16 where the CPU has it, which flushes
// subnormal inputs, so toBf16 redoes those lanes).
TEST(CpuKernels, ToBf16RoundsToNearestTiesToEven) {
  struct Case {
    uint32_t f32, bf16;
    const char *what;
  };
  const Case cases[] = {
      {0x3f800000u, 0x3f80u, "1 is exact"},
      {0x3f808000u, 0x3f80u, "a tie rounds to the even 1"},
      {0x3f818000u, 0x3f82u, "a tie rounds up to even"},
      {0x3f808001u, 0x3f81u, "just above the tie rounds up"},
      {0x3f807fffu, 0x3f80u, "just below the tie rounds down"},
      {0xbf808001u, 0xbf81u, "negative values round by magnitude"},
      {0x7f7fffffu, 0x7f80u, "the largest float rounds to infinity"},
      {0x7f800000u, 0x7f80u, "infinity stays"},
      {0x00000001u, 0x0000u, "the smallest subnormal rounds to zero"},
      {0x00010000u, 0x0001u, "a subnormal bf16 is exact"},
      {0x00018000u, 0x0002u, "a subnormal tie rounds to even"},
      {0x807fffffu, 0x8080u, "the largest subnormal rounds to the smallest "
                             "normal"},
      {0x7f800001u, 0x7fc0u, "a signalling NaN becomes a quiet one"},
      {0xffc12345u, 0xffc1u, "a quiet NaN keeps its sign and high payload"},
  };
  std::vector<float> together;
  while (together.size() < 48)
    for (const Case &c : cases)
      if (together.size() < 48)
        together.push_back(fromBits(c.f32));
  std::vector<Bf16> all = rounded(together);
  for (size_t i = 0; i < together.size(); ++i) {
    const Case &c = cases[i % std::size(cases)];
    EXPECT_EQ(rounded({fromBits(c.f32)})[0].bits, c.bf16) << c.what;
    EXPECT_EQ(all[i].bits, c.bf16) << c.what << ", element " << i;
  }
  // Every bit pattern class (NaNs, infinities, subnormals) in a long array,
  // which takes the parallel path: the same bits as roundToBf16.
  std::vector<float> patterns(100003);
  uint32_t state = 7;
  for (float &x : patterns) {
    state = state * 1664525u + 1013904223u;
    // One in 8 with a zero exponent: plenty of subnormals.
    x = fromBits(state % 8 == 0 ? state & 0x807fffffu : state);
  }
  std::vector<Bf16> out = rounded(patterns);
  for (size_t i = 0; i < patterns.size(); ++i)
    ASSERT_EQ(out[i].bits, runtime::roundToBf16(patterns[i]).bits)
        << "element " << i << ", bits " << std::hex
        << runtime::roundToBf16(patterns[i]).bits;
}

// The output loss's logit gradient rounded over its own rows: each row's
// bf16 values are toBf16's of that row, at a row stride of 2 * width, for
// widths below, at and across the kernel's 256-value blocks, with
// subnormals and NaNs; 300 x 1000 takes the parallel path.
TEST(CpuKernels, RoundRowsInPlaceRoundsEachRowOverItsOwnFirstHalf) {
  for (auto [rows, width] : {std::pair<int64_t, int64_t>{3, 1},
                             {4, 37},
                             {2, 256},
                             {5, 300},
                             {300, 1000}}) {
    std::vector<float> values(rows * width);
    uint32_t state = static_cast<uint32_t>(rows * 7919 + width);
    for (float &x : values) {
      state = state * 1664525u + 1013904223u;
      x = fromBits(state % 8 == 0 ? state & 0x807fffffu : state);
    }
    std::vector<Bf16> expected = rounded(values);
    std::vector<float> inPlace = values;
    const Bf16 *out = cpu::roundRowsInPlace(inPlace.data(), rows, width);
    ASSERT_EQ(static_cast<const void *>(out),
              static_cast<const void *>(inPlace.data()));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < width; ++c)
        ASSERT_EQ(out[r * 2 * width + c].bits, expected[r * width + c].bits)
            << rows << " x " << width << ": row " << r << ", column " << c;
  }
}

// The bf16 GEMM reads a through a leading dimension longer than its rows
// (the output loss's rounded rows), plain and transposed; NaNs between the
// rows must never be read.
TEST(CpuKernels, Bf16GemmReadsAThroughItsLeadingDimension) {
  const int64_t m = 37, n = 29, k = 45;
  std::vector<Bf16> b = rounded(uniform(k * n, 12));
  for (bool transposeA : {false, true}) {
    int64_t rows = transposeA ? k : m, columns = transposeA ? m : k,
            lda = 2 * columns + 3;
    std::vector<Bf16> packed = rounded(uniform(rows * columns, 11));
    std::vector<Bf16> strided(rows * lda, Bf16{0x7fc0});
    for (int64_t r = 0; r < rows; ++r)
      std::copy(packed.begin() + r * columns, packed.begin() + (r + 1) * columns,
                strided.begin() + r * lda);
    HostTensor expected = reference::matmul(
        host(widened(packed), {rows, columns}), host(widened(b), {k, n}),
        transposeA, false);
    std::vector<float> out(m * n, 0.0f);
    cpu::gemm(strided.data(), b.data(), out.data(), m, n, k, transposeA, false,
              0.0f, lda);
    expectClose(std::string("bf16 gemm with lda, transposeA=") +
                    (transposeA ? "1" : "0"),
                out, expected, kGemmTolerance);
  }
}

// A product of 2^21 multiply-adds and more, not transposed on the left:
// on a matmul primitive where oneDNN runs AMX kernels (bf16GemmOnPrimitive),
// on oneDNN's GEMM call elsewhere; beta 0 and 1, B plain and transposed.
TEST(CpuKernels, LargeBf16GemmOnThePrimitiveOrTheCall) {
  const int64_t m = 160, n = 136, k = 100;
  ASSERT_GE(m * n * k, cpu::kOneDnnFrom);
  std::vector<Bf16> a = rounded(uniform(m * k, 21)),
                    b = rounded(uniform(k * n, 22));
  for (bool transposeB : {false, true}) {
    SCOPED_TRACE(transposeB ? "A B^T" : "A B");
    HostTensor expected = reference::matmul(
        host(widened(a), {m, k}),
        host(widened(b), transposeB ? std::vector<int64_t>{n, k}
                                    : std::vector<int64_t>{k, n}),
        false, transposeB);
    std::vector<float> out(m * n, 0.0f);
    cpu::gemm(a.data(), b.data(), out.data(), m, n, k, false, transposeB, 0.0f);
    expectClose("beta 0", out, expected, kGemmTolerance);
    cpu::gemm(a.data(), b.data(), out.data(), m, n, k, false, transposeB, 1.0f);
    for (double &x : expected.data)
      x *= 2.0;
    expectClose("beta 1", out, expected, kGemmTolerance);
  }
}

TEST(CpuKernels, Bf16Matmul) {
  forEachMatmulCase([](const MatmulCase &c) {
    std::vector<Bf16> lhs = rounded(c.lhs), rhs = rounded(c.rhs);
    HostTensor expected = reference::matmul(host(widened(lhs), c.lhsShape()),
                                            host(widened(rhs), c.rhsShape()),
                                            c.transposeLhs, c.transposeRhs);
    std::vector<float> out(c.batch * c.m * c.n, 0.0f);
    cpu::matmul(lhs.data(), rhs.data(), out.data(), c.batch, c.m, c.n, c.k,
                c.transposeLhs, c.transposeRhs, c.sharedRhs);
    expectClose("bf16 " + c.name(), out, expected, kGemmTolerance);
  });
}

// 1100 x 20 x 70 runs as blocks of GEMMs with the epilogue after each;
// 260 x 96 x 100 (over 2^21 multiply-adds) on a oneDNN matmul primitive
// with bf16 operands that applies the bias and activation itself, unless
// the pre-activation is kept.
class Bf16LinearTest : public ::testing::TestWithParam<std::array<int64_t, 3>> {};

TEST_P(Bf16LinearTest, MatchesTheReferenceOnTheRoundedValues) {
  const auto [rows, k, n] = GetParam();
  std::vector<Bf16> input = rounded(uniform(rows * k, 3)),
                    weight = rounded(uniform(k * n, 4));
  std::vector<float> bias = uniform(n, 5);
  HostTensor pre = withBias(
      reference::matmul(host(widened(input), {rows, k}),
                        host(widened(weight), {k, n}), false, false),
      bias);
  for (auto [activation, name] : kActivations) {
    HostTensor expected = reference::activated(pre, activation);
    std::vector<float> out(rows * n, 0.0f), kept(rows * n, 0.0f);
    cpu::linear(input.data(), weight.data(), bias.data(), out.data(), rows, k,
                n, activation);
    expectClose(std::string("bf16 linear ") + name, out, expected,
                kActivationTolerance);
    cpu::linear(input.data(), weight.data(), bias.data(), out.data(),
                kept.data(), rows, k, n, activation);
    expectClose(std::string("bf16 linear ") + name + " beside pre", out,
                expected, kActivationTolerance);
    expectClose(std::string("bf16 linear ") + name + " pre", kept, pre,
                kGemmTolerance);
  }
}

INSTANTIATE_TEST_SUITE_P(CpuKernels, Bf16LinearTest,
                         ::testing::Values(std::array<int64_t, 3>{1100, 20, 70},
                                           std::array<int64_t, 3>{260, 96, 100}));

/// A bf16 result of a bf16 product (tg-fold-bf16-roundings) against the f32
/// result of the same product: each element its rounding (runtime::
/// roundToBf16), up to the last f32 bits of the sums, which another kernel
/// may add in another order: a value that near a tie may round the other
/// way, one bf16 step apart. So: every element within half a bf16 step of
/// the f32 result (plus its f32 error), and nearly all (at least 99%;
/// measured: all) bit for bit its rounding. Truncating instead of rounding
/// misses the second by far.
void expectRoundedResult(const std::string &name,
                         const std::vector<Bf16> &rounded,
                         const std::vector<float> &unrounded) {
  ASSERT_EQ(rounded.size(), unrounded.size());
  size_t exact = 0;
  for (size_t i = 0; i < rounded.size(); ++i) {
    float value = runtime::widen(rounded[i]), f32 = unrounded[i];
    exact += rounded[i].bits == runtime::roundToBf16(f32).bits;
    int exponent; // f32 in [2^(exponent-1), 2^exponent): bf16 steps of
    std::frexp(f32, &exponent); // 2^(exponent-8) there
    ASSERT_LE(std::fabs(value - f32),
              std::ldexp(1.0f, exponent - 9) + 1e-5f * (1 + std::fabs(f32)))
        << name << " element " << i;
  }
  EXPECT_GE(exact, rounded.size() * 99 / 100) << name;
}

TEST(CpuKernels, Bf16MatmulRoundedResult) {
  forEachMatmulCase([](const MatmulCase &c) {
    std::vector<Bf16> lhs = rounded(c.lhs), rhs = rounded(c.rhs);
    std::vector<float> f32(c.batch * c.m * c.n, 0.0f);
    cpu::matmul(lhs.data(), rhs.data(), f32.data(), c.batch, c.m, c.n, c.k,
                c.transposeLhs, c.transposeRhs, c.sharedRhs);
    std::vector<Bf16> out(f32.size(), Bf16{0x7fc0}); // NaN: all written
    cpu::matmul(lhs.data(), rhs.data(), out.data(), c.batch, c.m, c.n, c.k,
                c.transposeLhs, c.transposeRhs, c.sharedRhs);
    expectRoundedResult("bf16 -> bf16 " + c.name(), out, f32);
  });
}

// tg.reduce_sum of a bf16 input (a bias gradient read from its GEMMs'
// operand) is the f32 kernel's sum of the widened values, bit for bit: the
// same double accumulation in the same order; the widening is exact.
TEST(CpuKernels, Bf16ReduceIsTheSumOfTheWidenedValues) {
  for (const ReduceCase &c : kReduceCases) {
    const std::vector<Bf16> input =
        rounded(uniform(HostTensor::countOf(c.shape), 12));
    const std::vector<float> wide = widened(input);
    const std::array<bool, 8> reduced = c.reduced();
    const int64_t outCount = c.outCount();
    std::vector<float> got(outCount, 7.0f), want(outCount, 0.0f);
    cpu::reduce(input.data(), got.data(), c.shape.data(), c.rank(),
                reduced.data(), runtime::Reduction::Sum);
    cpu::reduce(wide.data(), want.data(), c.shape.data(), c.rank(),
                reduced.data(), runtime::Reduction::Sum);
    for (int64_t i = 0; i < outCount; ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(got[i]),
                std::bit_cast<uint32_t>(want[i]))
          << "sum of " << input.size() << " bf16 values into " << outCount
          << ", output " << i;
  }
}

// Each bf16 result of linear, alone or beside the pre-activation in either
// type, is the f32 result rounded once: the activation is computed from the
// unrounded sum.
TEST_P(Bf16LinearTest, RoundedResultIsTheF32ResultRounded) {
  const auto [rows, k, n] = GetParam();
  std::vector<Bf16> input = rounded(uniform(rows * k, 3)),
                    weight = rounded(uniform(k * n, 4));
  std::vector<float> bias = uniform(n, 5);
  const Bf16 nan{0x7fc0}; // all written
  for (auto [activation, name] : kActivations) {
    std::string what = std::string("bf16 -> bf16 linear ") + name;
    std::vector<float> f32(rows * n, 0.0f), f32Pre(rows * n, 0.0f);
    cpu::linear(input.data(), weight.data(), bias.data(), f32.data(),
                f32Pre.data(), rows, k, n, activation);
    std::vector<Bf16> out(f32.size(), nan), pre(f32.size(), nan);
    cpu::linear(input.data(), weight.data(), bias.data(), out.data(), rows, k,
                n, activation);
    expectRoundedResult(what, out, f32);
    std::vector<float> wide(f32.size(), 0.0f);
    cpu::linear(input.data(), weight.data(), bias.data(), out.data(),
                pre.data(), rows, k, n, activation);
    expectRoundedResult(what + " beside bf16 pre", out, f32);
    expectRoundedResult(what + " bf16 pre", pre, f32Pre);
    cpu::linear(input.data(), weight.data(), bias.data(), out.data(),
                wide.data(), rows, k, n, activation);
    expectRoundedResult(what + " beside f32 pre", out, f32);
    expectClose(what + " f32 pre", wide, f32Pre, 0.0);
    cpu::linear(input.data(), weight.data(), bias.data(), wide.data(),
                pre.data(), rows, k, n, activation);
    expectClose(what + " f32 beside bf16 pre", wide, f32, 0.0);
    expectRoundedResult(what + " bf16 pre beside f32", pre, f32Pre);
  }
}

// A bf16 bias (tg-mixed-precision's, where the result is read only in
// bf16) is its widened value added to the f32 sums: the results are those
// of the f32 bias holding the same values, bit for bit, f32 and bf16, on
// both paths (blocks of GEMMs and the oneDNN primitive).
TEST_P(Bf16LinearTest, Bf16BiasIsItsWidenedValue) {
  const auto [rows, k, n] = GetParam();
  std::vector<Bf16> input = rounded(uniform(rows * k, 3)),
                    weight = rounded(uniform(k * n, 4)),
                    bias = rounded(uniform(n, 5));
  const std::vector<float> wideBias = widened(bias);
  const Bf16 nan{0x7fc0}; // all written
  for (auto [activation, name] : kActivations) {
    std::string what = std::string("bf16-bias linear ") + name;
    std::vector<float> got(rows * n, 7.0f), want(rows * n, 0.0f);
    cpu::linear(input.data(), weight.data(), bias.data(), got.data(), rows, k,
                n, activation);
    cpu::linear(input.data(), weight.data(), wideBias.data(), want.data(), rows,
                k, n, activation);
    expectClose(what + " f32", got, want, 0.0);
    std::vector<Bf16> gotBf16(rows * n, nan), wantBf16(rows * n, nan);
    cpu::linear(input.data(), weight.data(), bias.data(), gotBf16.data(), rows,
                k, n, activation);
    cpu::linear(input.data(), weight.data(), wideBias.data(), wantBf16.data(),
                rows, k, n, activation);
    for (int64_t i = 0; i < rows * n; ++i)
      ASSERT_EQ(gotBf16[i].bits, wantBf16[i].bits) << what << " bf16 " << i;
  }
}

// tg.weight_bias_grad is the unfused ops' kernels, bit for bit: matmul's
// input^T grad and reduce's column sums of grad, f32 and bf16 operands, on
// a shape for the oneDNN primitive and a small one.
TEST(CpuKernels, WeightBiasGradIsMatmulAndReduce) {
  for (auto [rows, k, n] : {std::array<int64_t, 3>{300, 96, 100},
                            std::array<int64_t, 3>{37, 5, 70}}) {
    const std::vector<float> input = uniform(rows * k, 21),
                             grad = uniform(rows * n, 22);
    const std::vector<Bf16> input16 = rounded(input), grad16 = rounded(grad);
    const int64_t shape[] = {rows, n};
    const bool reduced[] = {true, false};
    auto expectSame = [&](const std::string &what, const auto *x,
                          const auto *g) {
      std::vector<float> dw(k * n, 7.0f), db(n, 7.0f), wantDw(k * n), wantDb(n);
      cpu::weightBiasGrad(x, g, dw.data(), db.data(), rows, k, n);
      cpu::matmul(x, g, wantDw.data(), 1, k, n, rows, true, false, false);
      cpu::reduce(g, wantDb.data(), shape, 2, reduced, runtime::Reduction::Sum);
      expectClose(what + " weight gradient", dw, wantDw, 0.0);
      expectClose(what + " bias gradient", db, wantDb, 0.0);
    };
    std::string name = std::to_string(rows) + "x" + std::to_string(k) + "x" +
                       std::to_string(n);
    expectSame("f32 " + name, input.data(), grad.data());
    expectSame("bf16 " + name, input16.data(), grad16.data());
  }
}

// Attention's tile products on each unit this CPU has (the vectors, and
// AMX where usable): bf16 operands read in place or f32 ones rounded as
// they are packed, each of them row-major or transposed, on shapes with
// partial register blocks and tiles (m not a multiple of 8 or 16, n of 16)
// and an odd k, whole AMX tiles (out read and written in place) and
// several tiles along k; alpha other than 1; beta 0 must not read out (NaN
// there), beta 1 adds.
TEST(CpuKernels, Bf16TileProductMatchesTheReferenceOnTheRoundedValues) {
  const std::array<int64_t, 3> shapes[] = {
      {37, 53, 24}, {64, 64, 64}, {8, 16, 2},  {5, 40, 37},
      {1, 1, 1},    {32, 64, 32}, {48, 40, 96}};
  std::vector<cpu::TileUnit> units = {cpu::TileUnit::Vectors};
  if (cpu::fastestTileUnit() == cpu::TileUnit::Amx)
    units.push_back(cpu::TileUnit::Amx);
  for (cpu::TileUnit unit : units)
    for (auto [m, n, k] : shapes)
      for (int layout = 0; layout < 4; ++layout)
        for (auto [alpha, beta] : {std::pair{1.0f, 0.0f}, std::pair{1.0f, 1.0f},
                                   std::pair{0.5f, 1.0f}}) {
          bool ta = layout & 1, tb = layout & 2;
          std::vector<float> a = uniform(m * k, 11), b = uniform(k * n, 12);
          std::vector<Bf16> a16 = rounded(a), b16 = rounded(b);
          HostTensor expected = reference::matmul(
              host(widened(a16), ta ? std::vector<int64_t>{k, m}
                                    : std::vector<int64_t>{m, k}),
              host(widened(b16), tb ? std::vector<int64_t>{n, k}
                                    : std::vector<int64_t>{k, n}),
              ta, tb);
          std::vector<float> start = uniform(m * n, 13);
          for (int64_t i = 0; i < m * n; ++i)
            expected.data[i] = alpha * expected.data[i] + beta * start[i];
          auto operand = [](const auto *data, bool transposed, int64_t rows,
                            int64_t cols) {
            using E = std::remove_cv_t<std::remove_pointer_t<decltype(data)>>;
            return transposed ? cpu::TileOperand<E>{data, 1, rows}
                              : cpu::TileOperand<E>{data, cols, 1};
          };
          std::string what =
              std::string(unit == cpu::TileUnit::Amx ? "amx " : "vectors ") +
              std::to_string(m) + "x" + std::to_string(n) + "x" +
              std::to_string(k) + (ta ? " aT" : "") + (tb ? " bT" : "") +
              " alpha " + std::to_string(alpha) + " beta " +
              std::to_string(beta);
          // Row stride 5 floats wider than n: the kernel writes only n.
          const int64_t ld = n + 5;
          auto run = [&](auto aOperand, auto bOperand) {
            std::vector<float> out(m * ld, std::nanf(""));
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j)
                if (beta != 0.0f)
                  out[i * ld + j] = start[i * n + j];
            cpu::bf16TileProduct(aOperand, bOperand, out.data(), ld, m, n, k,
                                 alpha, beta, unit);
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = n; j < ld; ++j)
                EXPECT_TRUE(std::isnan(out[i * ld + j]))
                    << what << ": wrote past n at " << i << ", " << j;
            return resultRows(out, m, n, ld, what);
          };
          expectClose(
              "bf16 tile " + what,
              run(operand(a16.data(), ta, m, k), operand(b16.data(), tb, k, n)),
              expected, kGemmTolerance);
          expectClose(
              "f32-rounded tile " + what,
              run(operand(a.data(), ta, m, k), operand(b.data(), tb, k, n)),
              expected, kGemmTolerance);
        }
}

} // namespace
} // namespace tgc::test
