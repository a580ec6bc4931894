//===- ParameterChecksum.h - one number for a model's state -----*- C++ -*-===//
//
// The processes of a data-parallel run update identical copies of the
// parameters; comparing a checksum of each copy now and then finds a
// process that went astray (main/RunTraining.cpp). Header-only.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_PROGRAM_PARAMETERCHECKSUM_H
#define TGC_RUNTIME_PROGRAM_PARAMETERCHECKSUM_H

#include "runtime/program/CompiledStep.h"

#include <cstdint>
#include <cstring>

namespace tgc::runtime {

/// FNV-1a over the bits of `count` floats, a word at a time: equal only
/// for bitwise-equal states (up to collisions).
inline uint64_t parameterChecksum(const float *values, int64_t count) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (int64_t i = 0; i < count; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], sizeof bits);
    hash = (hash ^ bits) * 0x100000001b3ull;
  }
  return hash;
}

/// The checksums of `model`'s trainable variables in `state`, combined: the
/// parameters without the optimizer's moments (the processes of a sharded
/// optimizer hold different parts of those).
inline uint64_t trainableChecksum(const CompiledModel &model,
                                  const float *state) {
  uint64_t sum = 0;
  for (int v = 0; v < model.numVariables; ++v)
    if (model.variables[v].trainable)
      sum = sum * 0x100000001b3ull ^
            parameterChecksum(state + model.variables[v].offset,
                              model.variables[v].size);
  return sum;
}

} // namespace tgc::runtime

#endif // TGC_RUNTIME_PROGRAM_PARAMETERCHECKSUM_H
