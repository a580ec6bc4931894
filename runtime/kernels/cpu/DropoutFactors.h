//===- DropoutFactors.h - dropout factors of a run of elements -*- C++ -*-===//
//
// Internal to the CPU kernels. Dropout::factor(i) runs a whole Philox call
// for one element although each call yields four lanes; kernels that need
// the factors of a contiguous run (a row, a block of keys) fill them here,
// one Philox call per four elements. Same stream as runtime::dropoutUniform.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CPU_DROPOUTFACTORS_H
#define TGC_RUNTIME_CPU_DROPOUTFACTORS_H

#include "runtime/kernels/cpu/Kernels.h"

namespace tgc::cpu {

/// factors[x] = dropout.factor(start + x) for x < count.
inline void dropoutFactors(const Dropout &dropout, uint64_t start,
                           int64_t count, float *factors) {
  if (dropout.rate <= 0.0f) {
    for (int64_t x = 0; x < count; ++x)
      factors[x] = 1.0f;
    return;
  }
  const float kept = 1.0f / (1.0f - dropout.rate);
  const runtime::PhiloxKey key{{dropout.seed, runtime::kDropoutKeyTag}};
  int64_t x = 0;
  while (x < count) {
    uint64_t index = start + dropout.indexOffset + static_cast<uint64_t>(x);
    uint64_t block = index / 4;
    runtime::PhiloxCounter counter{{static_cast<uint32_t>(block),
                                    static_cast<uint32_t>(block >> 32),
                                    dropout.opId, dropout.step}};
    runtime::PhiloxCounter bits = runtime::philox4x32_10(counter, key);
    for (uint64_t lane = index % 4; lane < 4 && x < count; ++lane, ++x)
      factors[x] = runtime::uniformFromBits(bits.v[lane]) >= dropout.rate
                       ? kept
                       : 0.0f;
  }
}

} // namespace tgc::cpu

#endif // TGC_RUNTIME_CPU_DROPOUTFACTORS_H
