//===- RuntimeTest.cpp - Philox, the dropout stream, init, schedule ------===//
#include "common/Schedule.h"
#include "runtime/kernels/KernelTypes.h"
#include "runtime/kernels/Philox.h"
#include "runtime/program/train/Initializers.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <vector>

using namespace tgc::runtime;

namespace {

void expectPhilox(PhiloxCounter counter, PhiloxKey key,
                  std::array<uint32_t, 4> expected) {
  PhiloxCounter out = philox4x32_10(counter, key);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(out.v[i], expected[i]) << "word " << i;
}

// Random123's known-answer vectors for philox4x32_10 (kat_vectors).
TEST(Philox, KnownAnswerZero) {
  expectPhilox({{0, 0, 0, 0}}, {{0, 0}},
               {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
}

TEST(Philox, KnownAnswerAllOnes) {
  expectPhilox({{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}},
               {{0xffffffff, 0xffffffff}},
               {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
}

TEST(Philox, KnownAnswerPi) {
  expectPhilox({{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}},
               {{0xa4093822, 0x299f31d0}},
               {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

TEST(Philox, UniformUsesTheTop24Bits) {
  EXPECT_EQ(uniformFromBits(0), 0.0f);
  EXPECT_EQ(uniformFromBits(0xffffffffu), 1.0f - 0x1.0p-24f);
  EXPECT_EQ(uniformFromBits(0x80000000u), 0.5f);
  EXPECT_LT(uniformFromBits(0xffffffffu), 1.0f);
}

// The documented stream: counter {block lo, block hi, op_id, step}, key
// {seed, "tgc."}, lane i % 4.
TEST(DropoutStream, FollowsTheDocumentedCounterLayout) {
  uint64_t index = (uint64_t(5) << 34) + 4 * 7 + 2; // block hi word is used
  uint64_t block = index / 4;
  PhiloxCounter out =
      philox4x32_10({{uint32_t(block), uint32_t(block >> 32), 9u, 123u}},
                    {{42u, 0x7467632eu}});
  EXPECT_EQ(dropoutUniform(42, 123, 9, index), uniformFromBits(out.v[2]));
  EXPECT_EQ(dropoutKeep(42, 123, 9, index, 0.3f),
            uniformFromBits(out.v[2]) >= 0.3f);
}

// Dropout::factors4 (the quad kernels' four factors from one Philox block)
// gives factor()'s values, with and without an index offset, at rate 0 too.
TEST(DropoutStream, FourFactorsAreFactorOfEach) {
  for (float rate : {0.0f, 0.1f, 0.5f})
    for (uint64_t offset : {uint64_t(0), uint64_t(4) << 33}) {
      Dropout dropout{42, 123, 9, rate, offset};
      for (uint64_t index = 0; index < 4000; index += 4) {
        float f[4];
        dropout.factors4(index, f);
        for (int q = 0; q < 4; ++q)
          ASSERT_EQ(f[q], dropout.factor(index + q))
              << "rate " << rate << " offset " << offset << " index "
              << index + q;
      }
    }
}

TEST(DropoutStream, KeepsAboutOneMinusRate) {
  const int n = 100000;
  for (float rate : {0.1f, 0.3f, 0.5f}) {
    int kept = 0;
    for (int i = 0; i < n; ++i)
      kept += dropoutKeep(7, 1, 3, i, rate);
    // 5 standard deviations of a binomial(n, 1 - rate) proportion.
    double sigma = std::sqrt(rate * (1.0 - rate) / n);
    EXPECT_NEAR(kept / double(n), 1.0 - rate, 5 * sigma) << "rate " << rate;
  }
}

TEST(DropoutStream, RateZeroKeepsEverything) {
  for (uint64_t i = 0; i < 1000; ++i)
    EXPECT_TRUE(dropoutKeep(1, 2, 3, i, 0.0f));
}

TEST(DropoutStream, DependsOnSeedStepAndOpId) {
  auto mask = [](uint32_t seed, uint32_t step, uint32_t opId) {
    std::vector<bool> m;
    for (uint64_t i = 0; i < 256; ++i)
      m.push_back(dropoutKeep(seed, step, opId, i, 0.5f));
    return m;
  };
  EXPECT_EQ(mask(1, 1, 1), mask(1, 1, 1));
  EXPECT_NE(mask(1, 1, 1), mask(2, 1, 1));
  EXPECT_NE(mask(1, 1, 1), mask(1, 2, 1));
  EXPECT_NE(mask(1, 1, 1), mask(1, 1, 2));
}

TEST(Initializers, Fnv1aMatchesReferenceValues) {
  EXPECT_EQ(fnv1a32(""), 0x811c9dc5u);
  EXPECT_EQ(fnv1a32("a"), 0xe40c292cu);
  EXPECT_EQ(fnv1a32("foobar"), 0xbf9cf968u);
}

TEST(Initializers, UniformFollowsTheDocumentedStream) {
  std::vector<int64_t> shape{3, 5};
  std::vector<double> values(15);
  ASSERT_TRUE(
      initializeTensor(values.data(), shape, InitKind::Uniform, 0.25, 11, "w"));
  uint32_t hash = fnv1a32("w");
  for (uint64_t i = 0; i < 15; ++i) {
    PhiloxCounter out =
        philox4x32_10({{uint32_t(i / 4), 0u, 0u, 0xffffffffu}}, {{11u, hash}});
    double u = uniformFromBits(out.v[i % 4]);
    EXPECT_EQ(values[i], 0.25 * (2.0 * u - 1.0)) << i;
  }
}

TEST(Initializers, DeterministicPerSeedAndName) {
  std::vector<int64_t> shape{64};
  auto fill = [&](uint32_t seed, const char *name) {
    std::vector<float> v(64);
    EXPECT_TRUE(
        initializeTensor(v.data(), shape, InitKind::Normal, 1.0, seed, name));
    return v;
  };
  EXPECT_EQ(fill(1, "a"), fill(1, "a"));
  EXPECT_NE(fill(1, "a"), fill(2, "a"));
  EXPECT_NE(fill(1, "a"), fill(1, "b"));
}

TEST(Initializers, FloatFillIsTheDoubleFillRounded) {
  std::vector<int64_t> shape{4, 6};
  std::vector<float> f(24);
  std::vector<double> d(24);
  ASSERT_TRUE(
      initializeTensor(f.data(), shape, InitKind::XavierUniform, 0, 3, "x"));
  ASSERT_TRUE(
      initializeTensor(d.data(), shape, InitKind::XavierUniform, 0, 3, "x"));
  for (int i = 0; i < 24; ++i)
    EXPECT_EQ(f[i], static_cast<float>(d[i]));
}

TEST(Initializers, DistributionsHaveTheirMoments) {
  const int64_t n = 200000;
  std::vector<int64_t> shape{n};
  std::vector<double> v(n);
  ASSERT_TRUE(initializeTensor(v.data(), shape, InitKind::Normal, 0.5, 5, "n"));
  double mean = 0, sq = 0;
  for (double x : v) {
    mean += x / n;
    sq += x * x / n;
  }
  EXPECT_NEAR(mean, 0.0, 0.005);
  EXPECT_NEAR(std::sqrt(sq - mean * mean), 0.5, 0.005);

  ASSERT_TRUE(
      initializeTensor(v.data(), shape, InitKind::Uniform, 2.0, 5, "u"));
  mean = sq = 0;
  for (double x : v) {
    EXPECT_GE(x, -2.0);
    EXPECT_LT(x, 2.0);
    mean += x / n;
    sq += x * x / n;
  }
  EXPECT_NEAR(mean, 0.0, 0.02);
  EXPECT_NEAR(sq, 4.0 / 3.0, 0.02); // Var Uniform(-a, a) = a^2 / 3
}

TEST(Initializers, XavierBoundUsesTheLastTwoDimensions) {
  // fan_in = 20, fan_out = 30: a = sqrt(6 / 50).
  std::vector<int64_t> shape{2, 20, 30};
  std::vector<double> v(1200);
  ASSERT_TRUE(
      initializeTensor(v.data(), shape, InitKind::XavierUniform, 0, 1, "x"));
  double bound = std::sqrt(6.0 / 50.0), maxAbs = 0;
  for (double x : v)
    maxAbs = std::max(maxAbs, std::fabs(x));
  EXPECT_LE(maxAbs, bound);
  EXPECT_GT(maxAbs, 0.95 * bound);
  std::vector<int64_t> vector{5};
  EXPECT_FALSE(
      initializeTensor(v.data(), vector, InitKind::XavierUniform, 0, 1, "x"));
}

TEST(Initializers, ConstantKinds) {
  std::vector<int64_t> shape{2, 3};
  std::vector<double> v(6, 7.0);
  ASSERT_TRUE(initializeTensor(v.data(), shape, InitKind::Zeros, 0, 1, "z"));
  EXPECT_EQ(v, std::vector<double>(6, 0.0));
  ASSERT_TRUE(initializeTensor(v.data(), shape, InitKind::Ones, 0, 1, "o"));
  EXPECT_EQ(v, std::vector<double>(6, 1.0));
}

// lr = d^-0.5 min(step^-0.5, step warmup^-1.5), d = 512, warmup = 4000.
TEST(Schedule, NoamAtWarmupMilestones) {
  double d = 512, w = 4000;
  // step 1: 1 / (sqrt(512) * 4000^1.5) = 1.7469281074217108e-07
  EXPECT_DOUBLE_EQ(noamLearningRate(d, w, 1),
                   1.0 / (std::sqrt(512.0) * 4000.0 * std::sqrt(4000.0)));
  EXPECT_NEAR(noamLearningRate(d, w, 1), 1.7469281074217108e-07, 1e-20);
  // step 4000 (the peak): 1 / sqrt(512 * 4000) = 6.987712429686843e-04
  EXPECT_DOUBLE_EQ(noamLearningRate(d, w, 4000),
                   1.0 / std::sqrt(512.0 * 4000.0));
  EXPECT_NEAR(noamLearningRate(d, w, 4000), 6.987712429686843e-04, 1e-17);
  // step 8000 (decay): 1 / sqrt(512 * 8000) = 4.941058844013092e-04
  EXPECT_DOUBLE_EQ(noamLearningRate(d, w, 8000),
                   1.0 / std::sqrt(512.0 * 8000.0));
  EXPECT_NEAR(noamLearningRate(d, w, 8000), 4.941058844013092e-04, 1e-17);
  EXPECT_DOUBLE_EQ(noamLearningRate(d, w, 8000, 2.0),
                   2.0 / std::sqrt(512.0 * 8000.0));
}

} // namespace
