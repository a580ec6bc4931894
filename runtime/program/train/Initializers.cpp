//===- Initializers.cpp - deterministic parameter initialization ---------===//
#include "runtime/program/train/Initializers.h"
#include "runtime/kernels/Philox.h"

#include <cmath>
#include <numbers>

namespace tgc::runtime {

uint32_t fnv1a32(std::string_view text) {
  uint32_t hash = 0x811c9dc5u;
  for (char c : text) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 0x01000193u;
  }
  return hash;
}

float initUniform(uint32_t seed, uint32_t nameHash, uint64_t index) {
  uint64_t block = index / 4;
  PhiloxCounter counter{{static_cast<uint32_t>(block),
                         static_cast<uint32_t>(block >> 32), 0u, 0xffffffffu}};
  PhiloxCounter out = philox4x32_10(counter, PhiloxKey{{seed, nameHash}});
  return uniformFromBits(out.v[index % 4]);
}

/// The value of element `index`; kinds and shape were checked by the caller.
static double initValue(InitKind kind, double bound, uint32_t seed,
                        uint32_t nameHash, uint64_t index) {
  switch (kind) {
  case InitKind::Zeros:
    return 0.0;
  case InitKind::Ones:
    return 1.0;
  case InitKind::Normal: {
    // 1 - u is in (0, 1], so the logarithm is finite.
    double u1 = initUniform(seed, nameHash, 2 * index);
    double u2 = initUniform(seed, nameHash, 2 * index + 1);
    return bound * std::sqrt(-2.0 * std::log(1.0 - u1)) *
           std::cos(2.0 * std::numbers::pi * u2);
  }
  case InitKind::Uniform:
  case InitKind::XavierUniform:
    return bound * (2.0 * initUniform(seed, nameHash, index) - 1.0);
  }
  return 0.0;
}

template <typename T>
static bool fill(T *out, std::span<const int64_t> shape, InitKind kind,
                 double scale, uint32_t seed, std::string_view name) {
  uint64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      return false;
    count *= static_cast<uint64_t>(dim);
  }
  double bound = scale;
  if (kind == InitKind::XavierUniform) {
    if (shape.size() < 2)
      return false;
    double fanIn = static_cast<double>(shape[shape.size() - 2]);
    double fanOut = static_cast<double>(shape[shape.size() - 1]);
    bound = std::sqrt(6.0 / (fanIn + fanOut));
  }
  uint32_t nameHash = fnv1a32(name);
  for (uint64_t i = 0; i < count; ++i)
    out[i] = static_cast<T>(initValue(kind, bound, seed, nameHash, i));
  return true;
}

bool initializeTensor(double *out, std::span<const int64_t> shape,
                      InitKind kind, double scale, uint32_t seed,
                      std::string_view name) {
  return fill(out, shape, kind, scale, seed, name);
}

bool initializeTensor(float *out, std::span<const int64_t> shape, InitKind kind,
                      double scale, uint32_t seed, std::string_view name) {
  return fill(out, shape, kind, scale, seed, name);
}

} // namespace tgc::runtime
