//===- Indexing.h - row-major index arithmetic for the kernels -*- C++ -*-===//
#ifndef TGC_RUNTIME_KERNELS_REFERENCE_INDEXING_H
#define TGC_RUNTIME_KERNELS_REFERENCE_INDEXING_H

#include <cstdint>
#include <vector>

namespace tgc::reference {

/// Row-major strides of `shape`.
inline std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// The coordinates of flat index `flat` in a tensor of `shape`.
inline std::vector<int64_t> coordsOf(int64_t flat,
                                     const std::vector<int64_t> &shape) {
  std::vector<int64_t> coords(shape.size(), 0);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    coords[i] = flat % shape[i];
    flat /= shape[i];
  }
  return coords;
}

/// A tensor seen as [outer, size, inner] around dimension `axis`.
struct AxisView {
  int64_t outer = 1, size = 1, inner = 1;

  AxisView(const std::vector<int64_t> &shape, int64_t axis) {
    for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) {
      if (i < axis)
        outer *= shape[i];
      else if (i == axis)
        size = shape[i];
      else
        inner *= shape[i];
    }
  }
  /// Flat index of element `j` along the axis in line (o, in).
  int64_t at(int64_t o, int64_t in, int64_t j) const {
    return (o * size + j) * inner + in;
  }
};

} // namespace tgc::reference

#endif // TGC_RUNTIME_KERNELS_REFERENCE_INDEXING_H
