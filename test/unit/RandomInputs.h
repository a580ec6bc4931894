//===- RandomInputs.h - seeded random kernel inputs for tests ---*- C++ -*-===//
//
// The inputs the kernel tests (test/unit/kernels/cpu, test/unit/kernels/cuda) feed both
// sides of a comparison: the same seed gives the same values everywhere.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TEST_UNIT_RANDOMINPUTS_H
#define TGC_TEST_UNIT_RANDOMINPUTS_H

#include <cstdint>
#include <random>
#include <vector>

namespace tgc::test {

/// Uniform floats in [lo, hi) from a fixed seed.
inline std::vector<float> uniform(int64_t count, uint32_t seed,
                                  float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> out(count);
  for (float &x : out)
    x = dist(rng);
  return out;
}

/// Integers in [lo, hi] from a fixed seed.
inline std::vector<int32_t> randomIds(int64_t count, uint32_t seed, int32_t lo,
                                      int32_t hi) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> dist(lo, hi);
  std::vector<int32_t> out(count);
  for (int32_t &x : out)
    x = dist(rng);
  return out;
}

} // namespace tgc::test

#endif // TGC_TEST_UNIT_RANDOMINPUTS_H
