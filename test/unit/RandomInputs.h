//===- RandomInputs.h - seeded random kernel inputs for tests ---*- C++ -*-===//
//
// The inputs the kernel tests (test/unit/kernels/cpu, test/unit/kernels/cuda)
// feed both sides of a comparison: the same seed gives the same values
// everywhere.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TEST_UNIT_RANDOMINPUTS_H
#define TGC_TEST_UNIT_RANDOMINPUTS_H

#include <cstdint>
#include <random>
#include <vector>

namespace tgc::test {

/// `count` draws of `distribution` from a fixed seed.
template <typename Distribution>
std::vector<typename Distribution::result_type>
draws(int64_t count, uint32_t seed, Distribution distribution) {
  std::mt19937 rng(seed);
  std::vector<typename Distribution::result_type> out(count);
  for (auto &x : out)
    x = distribution(rng);
  return out;
}

/// Uniform floats in [lo, hi) from a fixed seed.
inline std::vector<float> uniform(int64_t count, uint32_t seed,
                                  float lo = -1.0f, float hi = 1.0f) {
  return draws(count, seed, std::uniform_real_distribution<float>(lo, hi));
}

/// Integers in [lo, hi] from a fixed seed.
inline std::vector<int32_t> randomIds(int64_t count, uint32_t seed, int32_t lo,
                                      int32_t hi) {
  return draws(count, seed, std::uniform_int_distribution<int32_t>(lo, hi));
}

} // namespace tgc::test

#endif // TGC_TEST_UNIT_RANDOMINPUTS_H
