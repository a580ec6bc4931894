//===- Philox.h - Philox4x32-10 and the dropout stream ---------*- C++ -*-===//
//
// Counter-based random numbers shared by the interpreter, generated C++ and
// generated CUDA: header-only, no allocation, no MLIR.
//
// Dropout stream (the contract every backend follows). For a dropout site with
// key tensor (seed, step), attribute op_id and flat element index i:
//   block = i / 4, lane = i % 4
//   counter = {uint32(block), uint32(block >> 32), uint32(op_id), uint32(step)}
//   key     = {uint32(seed), 0x7467632e /* "tgc." */}
//   u = (philox4x32_10(counter, key)[lane] >> 8) * 2^-24        in [0, 1)
// The element is KEPT iff u >= rate; kept elements are scaled by 1/(1-rate).
// The index is the element's row-major index in the tensor the dropout
// applies to (for tg.attention: the [B, H, Sq, Sk] probabilities).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_PHILOX_H
#define TGC_RUNTIME_PHILOX_H

#include <cstdint>

#if defined(__CUDACC__)
#define TGC_HOST_DEVICE __host__ __device__
#else
#define TGC_HOST_DEVICE
#endif

namespace tgc::runtime {

struct PhiloxCounter {
  uint32_t v[4];
};
struct PhiloxKey {
  uint32_t v[2];
};

inline constexpr uint32_t kPhiloxM0 = 0xD2511F53u;
inline constexpr uint32_t kPhiloxM1 = 0xCD9E8D57u;
inline constexpr uint32_t kPhiloxW0 = 0x9E3779B9u;
inline constexpr uint32_t kPhiloxW1 = 0xBB67AE85u;
/// Second key word of the dropout stream: "tgc." in ASCII.
inline constexpr uint32_t kDropoutKeyTag = 0x7467632eu;

TGC_HOST_DEVICE inline PhiloxCounter philoxRound(PhiloxCounter c, PhiloxKey k) {
  uint64_t p0 = static_cast<uint64_t>(kPhiloxM0) * c.v[0];
  uint64_t p1 = static_cast<uint64_t>(kPhiloxM1) * c.v[2];
  uint32_t hi0 = static_cast<uint32_t>(p0 >> 32),
           lo0 = static_cast<uint32_t>(p0);
  uint32_t hi1 = static_cast<uint32_t>(p1 >> 32),
           lo1 = static_cast<uint32_t>(p1);
  return PhiloxCounter{
      {hi1 ^ c.v[1] ^ k.v[0], lo1, hi0 ^ c.v[3] ^ k.v[1], lo0}};
}

/// Philox4x32 with 10 rounds (Salmon et al., SC'11; Random123's philox4x32).
TGC_HOST_DEVICE inline PhiloxCounter philox4x32_10(PhiloxCounter counter,
                                                   PhiloxKey key) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key.v[0] += kPhiloxW0;
      key.v[1] += kPhiloxW1;
    }
    counter = philoxRound(counter, key);
  }
  return counter;
}

/// The top 24 bits of `bits` as a float in [0, 1); exact in float.
TGC_HOST_DEVICE inline float uniformFromBits(uint32_t bits) {
  return static_cast<float>(bits >> 8) * (1.0f / 16777216.0f);
}

/// The dropout stream's bits for elements 4 block .. 4 block + 3.
TGC_HOST_DEVICE inline PhiloxCounter dropoutBlock(uint32_t seed, uint32_t step,
                                                  uint32_t opId,
                                                  uint64_t block) {
  PhiloxCounter counter{{static_cast<uint32_t>(block),
                         static_cast<uint32_t>(block >> 32), opId, step}};
  return philox4x32_10(counter, PhiloxKey{{seed, kDropoutKeyTag}});
}

/// The dropout stream's uniform for element `index` (see the file comment).
TGC_HOST_DEVICE inline float dropoutUniform(uint32_t seed, uint32_t step,
                                            uint32_t opId, uint64_t index) {
  return uniformFromBits(dropoutBlock(seed, step, opId, index / 4).v[index % 4]);
}

/// Whether dropout keeps element `index`: u >= rate (rate 0 keeps all).
TGC_HOST_DEVICE inline bool dropoutKeep(uint32_t seed, uint32_t step,
                                        uint32_t opId, uint64_t index,
                                        float rate) {
  return dropoutUniform(seed, step, opId, index) >= rate;
}

} // namespace tgc::runtime

#endif // TGC_RUNTIME_PHILOX_H
