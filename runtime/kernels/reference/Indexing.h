//===- Indexing.h - row-major index arithmetic for the kernels -*- C++ -*-===//
#ifndef TGC_RUNTIME_KERNELS_REFERENCE_INDEXING_H
#define TGC_RUNTIME_KERNELS_REFERENCE_INDEXING_H

#include <cstdint>
#include <utility>
#include <vector>

namespace tgc::reference {

/// Row-major strides of `shape`.
inline std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// Walks the elements of a tensor of `shape` in row-major order, keeping
/// the flat offset of the same coordinates in another tensor in which
/// dimension i steps by strides[i] (0 where that tensor does not vary):
/// how a transpose, a broadcast or a reduction finds its other element. An
/// odometer: no division and no allocation per element.
class StridedOffset {
public:
  StridedOffset(const std::vector<int64_t> &shape,
                std::vector<int64_t> strides)
      : shape(shape), strides(std::move(strides)), coords(shape.size(), 0) {}
  /// `shape` is held, not copied: it must outlive the walk.
  StridedOffset(std::vector<int64_t> &&, std::vector<int64_t>) = delete;

  int64_t offset() const { return current; }

  /// Moves to the next element.
  void next() {
    for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
      current += strides[i];
      if (++coords[i] < shape[i])
        return;
      current -= strides[i] * shape[i];
      coords[i] = 0;
    }
  }

private:
  const std::vector<int64_t> &shape;
  std::vector<int64_t> strides, coords;
  int64_t current = 0;
};

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
