//===- HostTensor.h - the interpreter's host tensor -------*- C++ -*-===//
//
// The interpreter's value type: a row-major shape and its elements as
// doubles. i32 tensors (token ids, counts) hold their integers exactly in the
// doubles, so one container serves every tg element type; bf16 tensors hold
// values already rounded to bf16.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_KERNELS_REFERENCE_HOSTTENSOR_H
#define TGC_RUNTIME_KERNELS_REFERENCE_HOSTTENSOR_H

#include <cstdint>
#include <utility>
#include <vector>

namespace tgc {

enum class ElementType { F32, I32, BF16 };

struct HostTensor {
  std::vector<int64_t> shape;
  ElementType type = ElementType::F32;
  std::vector<double> data;

  HostTensor() = default;
  /// A zero tensor of `shape`.
  explicit HostTensor(std::vector<int64_t> shape,
                      ElementType type = ElementType::F32)
      : shape(std::move(shape)), type(type), data(countOf(this->shape), 0.0) {}
  HostTensor(std::vector<int64_t> shape, std::vector<double> data,
             ElementType type = ElementType::F32)
      : shape(std::move(shape)), type(type), data(std::move(data)) {}

  static HostTensor f32(std::vector<int64_t> shape, std::vector<double> data) {
    return HostTensor(std::move(shape), std::move(data), ElementType::F32);
  }
  static HostTensor i32(std::vector<int64_t> shape, std::vector<double> data) {
    return HostTensor(std::move(shape), std::move(data), ElementType::I32);
  }
  static HostTensor scalar(double value, ElementType type = ElementType::F32) {
    return HostTensor({}, {value}, type);
  }

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numElements() const { return countOf(shape); }
  double &operator[](int64_t i) { return data[i]; }
  double operator[](int64_t i) const { return data[i]; }

  static int64_t countOf(const std::vector<int64_t> &shape) {
    int64_t count = 1;
    for (int64_t dim : shape)
      count *= dim;
    return count;
  }
};

} // namespace tgc

#endif // TGC_RUNTIME_KERNELS_REFERENCE_HOSTTENSOR_H
