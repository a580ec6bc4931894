//===- Gemm.cpp - matmul, linear and its activations -----------------------===//
#include "runtime/kernels/reference/Kernels.h"

#include "runtime/kernels/Elementwise.h"

namespace tgc::reference {

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
    // Each output adds its products from 0 in the order p = 0..k-1. With
    // rhs transposed, w's rows are contiguous in p: one dot product each;
    // else the inner loop runs along rows of w and out, in the same order.
    for (int64_t i = 0; i < m; ++i) {
      double *outRow = out + i * n;
      if (transposeRhs) {
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0.0;
          for (int64_t p = 0; p < k; ++p)
            sum += (transposeLhs ? a[p * lCols + i] : a[i * lCols + p]) *
                   w[j * rCols + p];
          outRow[j] = sum;
        }
        continue;
      }
      for (int64_t p = 0; p < k; ++p) {
        double x = transposeLhs ? a[p * lCols + i] : a[i * lCols + p];
        const double *wRow = w + p * rCols;
        for (int64_t j = 0; j < n; ++j)
          outRow[j] += x * wRow[j];
      }
    }
  }
  return result;
}

HostTensor linear(const HostTensor &input, const HostTensor &weight,
                  const HostTensor &bias) {
  HostTensor result = matmul(input, weight, /*transposeLhs=*/false,
                             /*transposeRhs=*/false);
  int64_t n = bias.numElements();
  for (int64_t i = 0; i < result.numElements(); ++i)
    result[i] += bias[i % n];
  return result;
}

HostTensor activated(HostTensor values, runtime::Activation activation) {
  for (int64_t i = 0; i < values.numElements(); ++i)
    values[i] = elementwise::activate(activation, values[i]);
  return values;
}

} // namespace tgc::reference
