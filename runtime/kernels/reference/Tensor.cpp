//===- Tensor.cpp - shapes, reductions, slices, gathers, masks, positions -===//
#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/reference/Indexing.h"
#include "runtime/kernels/reference/Kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tgc::reference {

HostTensor broadcast(const HostTensor &input, std::span<const int64_t> dims,
                     std::vector<int64_t> resultShape) {
  HostTensor result(std::move(resultShape), input.type);
  // Input dimension i is result dimension dims[i]; a size-1 one repeats.
  std::vector<int64_t> inStrides = stridesOf(input.shape);
  std::vector<int64_t> strides(result.shape.size(), 0);
  for (size_t i = 0; i < dims.size(); ++i)
    if (input.shape[i] != 1)
      strides[dims[i]] += inStrides[i];
  StridedOffset source(result.shape, std::move(strides));
  for (int64_t flat = 0; flat < result.numElements(); ++flat, source.next())
    result[flat] = input[source.offset()];
  return result;
}

HostTensor transpose(const HostTensor &input,
                     std::span<const int64_t> permutation) {
  std::vector<int64_t> shape;
  for (int64_t dim : permutation)
    shape.push_back(input.shape[dim]);
  HostTensor result(shape, input.type);
  std::vector<int64_t> inStrides = stridesOf(input.shape), strides;
  for (int64_t dim : permutation)
    strides.push_back(inStrides[dim]);
  StridedOffset source(result.shape, std::move(strides));
  for (int64_t flat = 0; flat < result.numElements(); ++flat, source.next())
    result[flat] = input[source.offset()];
  return result;
}

HostTensor reduce(const HostTensor &input, std::span<const int64_t> dims,
                  bool keepDims, Reduction kind) {
  // The kept-dims shape has the same layout as the dropped-dims one.
  std::vector<int64_t> kept = input.shape, dropped;
  for (int64_t dim : dims)
    kept[dim] = 1;
  for (int64_t i = 0; i < input.rank(); ++i)
    if (std::find(dims.begin(), dims.end(), i) == dims.end())
      dropped.push_back(input.shape[i]);
  HostTensor result(keepDims ? kept : dropped);
  double init =
      kind == Reduction::Max ? -std::numeric_limits<double>::infinity() : 0.0;
  std::fill(result.data.begin(), result.data.end(), init);
  std::vector<int64_t> strides = stridesOf(kept);
  for (int64_t i = 0; i < input.rank(); ++i)
    if (kept[i] == 1) // reduced (or of size 1): every entry adds to one
      strides[i] = 0;
  StridedOffset walk(input.shape, std::move(strides));
  for (int64_t flat = 0; flat < input.numElements(); ++flat, walk.next()) {
    int64_t target = walk.offset();
    if (kind == Reduction::Max) // a NaN element makes its maximum NaN
      result[target] = elementwise::maximum(result[target], input[flat]);
    else
      result[target] += input[flat];
  }
  if (kind == Reduction::Mean) {
    double count = static_cast<double>(input.numElements()) /
                   static_cast<double>(result.numElements());
    for (double &x : result.data)
      x /= count;
  }
  return result;
}

HostTensor embedding(const HostTensor &table, const HostTensor &ids) {
  return gather(table, ids, 0);
}

HostTensor embeddingGrad(const HostTensor &grad, const HostTensor &ids,
                         int64_t vocab) {
  return gatherGrad(grad, ids, 0, {vocab, grad.shape.back()});
}

void storeSlice(HostTensor &target, const HostTensor &value, int64_t axis,
                int64_t index) {
  int64_t length = value.shape[axis], extent = target.shape[axis];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= value.shape[d];
  for (int64_t d = axis + 1; d < value.rank(); ++d)
    inner *= value.shape[d];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < length * inner; ++i)
      target[(o * extent + index) * inner + i] = value[o * length * inner + i];
}

HostTensor slice(const HostTensor &input, int64_t dim, int64_t start,
                 int64_t size) {
  std::vector<int64_t> shape = input.shape;
  shape[dim] = size;
  HostTensor result(shape, input.type);
  AxisView in(input.shape, dim), out(shape, dim);
  for (int64_t o = 0; o < out.outer; ++o)
    for (int64_t j = 0; j < size; ++j)
      for (int64_t x = 0; x < out.inner; ++x)
        result[out.at(o, x, j)] = input[in.at(o, x, start + j)];
  return result;
}

HostTensor sliceGrad(const HostTensor &grad, int64_t dim, int64_t start,
                     std::vector<int64_t> inputShape) {
  HostTensor result(std::move(inputShape), grad.type);
  storeSlice(result, grad, dim, start);
  return result;
}

HostTensor concat(std::span<const HostTensor *const> inputs, int64_t dim) {
  std::vector<int64_t> shape = inputs.front()->shape;
  shape[dim] = 0;
  for (const HostTensor *input : inputs)
    shape[dim] += input->shape[dim];
  HostTensor result(shape, inputs.front()->type);
  int64_t offset = 0;
  for (const HostTensor *input : inputs) {
    storeSlice(result, *input, dim, offset);
    offset += input->shape[dim];
  }
  return result;
}

/// input[:dim] ++ indices ++ input[dim+1:].
static std::vector<int64_t> gatheredShape(const std::vector<int64_t> &input,
                                          const HostTensor &indices,
                                          int64_t dim) {
  std::vector<int64_t> shape(input.begin(), input.begin() + dim);
  shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
  shape.insert(shape.end(), input.begin() + dim + 1, input.end());
  return shape;
}

HostTensor gather(const HostTensor &input, const HostTensor &indices,
                  int64_t dim) {
  HostTensor result(gatheredShape(input.shape, indices, dim), input.type);
  AxisView in(input.shape, dim);
  int64_t count = indices.numElements();
  for (int64_t o = 0; o < in.outer; ++o)
    for (int64_t i = 0; i < count; ++i)
      for (int64_t x = 0; x < in.inner; ++x)
        result[(o * count + i) * in.inner + x] =
            input[in.at(o, x, static_cast<int64_t>(indices[i]))];
  return result;
}

HostTensor gatherGrad(const HostTensor &grad, const HostTensor &indices,
                      int64_t dim, std::vector<int64_t> inputShape) {
  HostTensor result(std::move(inputShape), grad.type);
  AxisView out(result.shape, dim);
  int64_t count = indices.numElements();
  for (int64_t o = 0; o < out.outer; ++o)
    for (int64_t i = 0; i < count; ++i)
      for (int64_t x = 0; x < out.inner; ++x)
        result[out.at(o, x, static_cast<int64_t>(indices[i]))] +=
            grad[(o * count + i) * out.inner + x];
  return result;
}

HostTensor causalMask(int64_t size) {
  HostTensor result({size, size});
  for (int64_t i = 0; i < size; ++i)
    for (int64_t j = i + 1; j < size; ++j)
      result[i * size + j] = kMaskedScore;
  return result;
}

HostTensor paddingMask(const HostTensor &ids, int64_t padId) {
  HostTensor result(ids.shape);
  for (int64_t i = 0; i < ids.numElements(); ++i)
    result[i] = static_cast<int64_t>(ids[i]) == padId ? kMaskedScore : 0.0;
  return result;
}

HostTensor positionalEncoding(int64_t positions, int64_t width,
                              int64_t first) {
  HostTensor result({positions, width});
  for (int64_t pos = 0; pos < positions; ++pos)
    for (int64_t i = 0; 2 * i < width; ++i) {
      double angle = static_cast<double>(first + pos) /
                     std::pow(10000.0, static_cast<double>(2 * i) /
                                           static_cast<double>(width));
      result[pos * width + 2 * i] = std::sin(angle);
      result[pos * width + 2 * i + 1] = std::cos(angle);
    }
  return result;
}

HostTensor rotary(const HostTensor &input, double base, bool inverse,
                  int64_t first) {
  HostTensor result(input.shape);
  int64_t width = input.shape.back(), half = width / 2;
  int64_t positions = input.shape[input.shape.size() - 2];
  int64_t rows = input.numElements() / width;
  for (int64_t row = 0; row < rows; ++row) {
    double pos = static_cast<double>(first + row % positions);
    const double *x = input.data.data() + row * width;
    double *out = result.data.data() + row * width;
    for (int64_t i = 0; i < half; ++i) {
      double angle = pos * std::pow(base, -2.0 * static_cast<double>(i) /
                                              static_cast<double>(width));
      double c = std::cos(angle);
      double s = inverse ? -std::sin(angle) : std::sin(angle);
      out[i] = x[i] * c - x[i + half] * s;
      out[i + half] = x[i + half] * c + x[i] * s;
    }
  }
  return result;
}

} // namespace tgc::reference
