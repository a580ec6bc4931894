//===- SplitMix64.h - a tiny, fully specified random generator --*- C++ -*-===//
//
// The data's randomness (task sentences, the order of a corpus) uses this
// rather than <random>, whose distributions differ between standard
// libraries: a batch must be the same wherever and whenever it is made.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_SPLITMIX64_H
#define TGC_RUNTIME_SPLITMIX64_H

#include <cstdint>
#include <utility>
#include <vector>

namespace tgc::runtime {

class SplitMix64 {
public:
  explicit SplitMix64(uint64_t state) : state(state) {}
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [lo, hi] (the modulo bias is negligible for small ranges).
  int64_t between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }

private:
  uint64_t state;
};

/// Fisher-Yates with SplitMix64, not std::shuffle, whose results differ
/// between standard libraries.
template <typename T> void shuffle(std::vector<T> &items, uint64_t seed) {
  SplitMix64 rng(seed);
  for (size_t i = items.size(); i > 1; --i)
    std::swap(items[i - 1], items[rng.next() % i]);
}

/// The seed of one use (`purpose`) of the data's randomness in `epoch`.
inline uint64_t epochSeed(uint32_t seed, uint64_t epoch, uint64_t purpose) {
  return (uint64_t{seed} << 32) ^ (epoch * 0x9e3779b97f4a7c15ull) ^
         (purpose * 0xbf58476d1ce4e5b9ull);
}

} // namespace tgc::runtime

#endif // TGC_RUNTIME_SPLITMIX64_H
