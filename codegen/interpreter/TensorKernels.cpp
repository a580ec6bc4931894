//===- TensorKernels.cpp - matmul, shape ops, reductions, embeddings ----===//
#include "codegen/interpreter/Indexing.h"
#include "codegen/interpreter/Kernels.h"

#include <algorithm>
#include <limits>

namespace tgc::interp {

HostTensor matmul(const HostTensor &lhs, const HostTensor &rhs,
                  bool transposeLhs, bool transposeRhs) {
  int64_t lRows = lhs.shape[lhs.rank() - 2], lCols = lhs.shape[lhs.rank() - 1];
  int64_t rRows = rhs.shape[rhs.rank() - 2], rCols = rhs.shape[rhs.rank() - 1];
  int64_t m = transposeLhs ? lCols : lRows;
  int64_t k = transposeLhs ? lRows : lCols;
  int64_t n = transposeRhs ? rRows : rCols;
  // A rank-2 rhs is one matrix shared by every batch (a projection weight).
  bool sharedRhs = rhs.rank() == 2;
  std::vector<int64_t> shape(lhs.shape.begin(), lhs.shape.end() - 2);
  shape.push_back(m);
  shape.push_back(n);
  HostTensor result(shape);
  int64_t batches = lhs.numElements() / (lRows * lCols);
  for (int64_t b = 0; b < batches; ++b) {
    const double *a = lhs.data.data() + b * lRows * lCols;
    const double *w = rhs.data.data() + (sharedRhs ? 0 : b * rRows * rCols);
    double *out = result.data.data() + b * m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (int64_t p = 0; p < k; ++p) {
          double x = transposeLhs ? a[p * lCols + i] : a[i * lCols + p];
          double y = transposeRhs ? w[j * rCols + p] : w[p * rCols + j];
          sum += x * y;
        }
        out[i * n + j] = sum;
      }
  }
  return result;
}

HostTensor broadcast(const HostTensor &input, std::span<const int64_t> dims,
                     std::vector<int64_t> resultShape) {
  HostTensor result(std::move(resultShape), input.type);
  std::vector<int64_t> inStrides = stridesOf(input.shape);
  for (int64_t flat = 0; flat < result.numElements(); ++flat) {
    std::vector<int64_t> coords = coordsOf(flat, result.shape);
    int64_t source = 0;
    for (size_t i = 0; i < dims.size(); ++i)
      if (input.shape[i] != 1)
        source += coords[dims[i]] * inStrides[i];
    result[flat] = input[source];
  }
  return result;
}

HostTensor transpose(const HostTensor &input,
                     std::span<const int64_t> permutation) {
  std::vector<int64_t> shape;
  for (int64_t dim : permutation)
    shape.push_back(input.shape[dim]);
  HostTensor result(shape, input.type);
  std::vector<int64_t> inStrides = stridesOf(input.shape);
  for (int64_t flat = 0; flat < result.numElements(); ++flat) {
    std::vector<int64_t> coords = coordsOf(flat, result.shape);
    int64_t source = 0;
    for (size_t i = 0; i < permutation.size(); ++i)
      source += coords[i] * inStrides[permutation[i]];
    result[flat] = input[source];
  }
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
  std::vector<int64_t> keptStrides = stridesOf(kept);
  for (int64_t flat = 0; flat < input.numElements(); ++flat) {
    std::vector<int64_t> coords = coordsOf(flat, input.shape);
    int64_t target = 0;
    for (int64_t i = 0; i < input.rank(); ++i)
      if (kept[i] != 1)
        target += coords[i] * keptStrides[i];
    if (kind == Reduction::Max)
      result[target] = std::max(result[target], input[flat]);
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
  int64_t width = table.shape[1];
  std::vector<int64_t> shape = ids.shape;
  shape.push_back(width);
  HostTensor result(shape);
  for (int64_t t = 0; t < ids.numElements(); ++t) {
    int64_t row = static_cast<int64_t>(ids[t]);
    for (int64_t d = 0; d < width; ++d)
      result[t * width + d] = table[row * width + d];
  }
  return result;
}

HostTensor embeddingGrad(const HostTensor &grad, const HostTensor &ids,
                         int64_t vocab) {
  int64_t width = grad.shape.back();
  HostTensor result({vocab, width});
  for (int64_t t = 0; t < ids.numElements(); ++t) {
    int64_t row = static_cast<int64_t>(ids[t]);
    for (int64_t d = 0; d < width; ++d)
      result[row * width + d] += grad[t * width + d];
  }
  return result;
}

} // namespace tgc::interp
