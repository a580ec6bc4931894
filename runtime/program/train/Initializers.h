//===- Initializers.h - deterministic parameter initialization -*- C++ -*-===//
//
// Fills a variable from (seed, its name, its init kind, scale, shape) so that
// every backend and every run starts from the same parameters, and renaming
// or adding one variable leaves the others unchanged.
//
// Stream: key = {seed, fnv1a32(name)}; element i of the uniform stream is
// lane i % 4 of philox4x32_10({uint32(i/4), uint32((i/4) >> 32), 0,
// 0xffffffff}, key) mapped to [0, 1) as in Philox.h. (Counter word 3 is
// 0xffffffff so it cannot meet a dropout counter of a real step.)
//   uniform(a):      a * (2 u_i - 1)
//   normal(s):       s * sqrt(-2 ln(1 - u_2i)) * cos(2 pi u_2i+1)  (Box-Muller)
//   xavier_uniform:  uniform(sqrt(6 / (fan_in + fan_out))) with
//                    fan_in = shape[rank-2], fan_out = shape[rank-1]
//   zeros, ones:     constant fill
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_INITIALIZERS_H
#define TGC_RUNTIME_INITIALIZERS_H

#include <cstdint>
#include <span>
#include <string_view>

namespace tgc::runtime {

/// Same values as tg::InitKind in ir/TgBase.td.
enum class InitKind : int32_t {
  Zeros = 0,
  Ones = 1,
  Normal = 2,
  Uniform = 3,
  XavierUniform = 4,
};

/// 32-bit FNV-1a of `text`.
uint32_t fnv1a32(std::string_view text);

/// Element `index` of the init stream of (seed, name hash), in [0, 1).
float initUniform(uint32_t seed, uint32_t nameHash, uint64_t index);

/// Fills `out`, which holds product(shape) elements. `scale` is the
/// normal's standard deviation or the uniform's bound; other kinds ignore it.
/// Returns false (and writes nothing) for xavier_uniform below rank 2 or a
/// negative dimension.
bool initializeTensor(double *out, std::span<const int64_t> shape,
                      InitKind kind, double scale, uint32_t seed,
                      std::string_view name);
/// The same values rounded to float.
bool initializeTensor(float *out, std::span<const int64_t> shape, InitKind kind,
                      double scale, uint32_t seed, std::string_view name);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_INITIALIZERS_H
