//===- Gemm.cu - matmul and linear on cuBLAS -------------------------===//
//
// cuBLAS is column-major; a row-major [r, c] matrix is the column-major
// [c, r] one in the same memory. So row-major out = op(A) op(B) is computed
// as column-major out^T = op(B)^T op(A)^T: the operands swap, m and n
// swap, and each leading dimension is the operand's stored row length.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Device.h"

namespace tgc::cuda {

namespace {
/// One row-major (batched) product: out[b] [m, n] = op(a[b]) op(b[b]).
struct Product {
  const float *a, *b;
  float *out;
  int64_t batch, m, n, k;
  bool transposeA, transposeB;
  int64_t strideA, strideB; ///< elements between batches; 0 = shared
};
} // namespace

static void gemm(const Product &p) {
  if (p.batch == 0 || p.m == 0 || p.n == 0)
    return;
  if (p.k == 0) { // an empty sum; cuBLAS would reject the leading dimension
    TGC_CUDA_CHECK(cudaMemsetAsync(
        p.out, 0, p.batch * p.m * p.n * sizeof(float), stream()));
    return;
  }
  const float one = 1.0f, zero = 0.0f;
  int m = static_cast<int>(p.m), n = static_cast<int>(p.n),
      k = static_cast<int>(p.k);
  cublasOperation_t opA = p.transposeA ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = p.transposeB ? CUBLAS_OP_T : CUBLAS_OP_N;
  int lda = p.transposeA ? m : k, ldb = p.transposeB ? k : n;
  if (p.batch == 1) {
    TGC_CUBLAS_CHECK(cublasSgemm(cublas(), opB, opA, n, m, k, &one, p.b, ldb,
                                 p.a, lda, &zero, p.out, n));
    return;
  }
  TGC_CUBLAS_CHECK(cublasSgemmStridedBatched(
      cublas(), opB, opA, n, m, k, &one, p.b, ldb, p.strideB, p.a, lda,
      p.strideA, &zero, p.out, n, p.m * p.n, static_cast<int>(p.batch)));
}

void matmul(const float *lhs, const float *rhs, float *out, int64_t batch,
            int64_t m, int64_t n, int64_t k, bool transposeLhs,
            bool transposeRhs, bool rhsShared) {
  // Untransposed lhs batches are contiguous rows: one tall GEMM.
  if (rhsShared && !transposeLhs) {
    gemm({lhs, rhs, out, 1, batch * m, n, k, false, transposeRhs, 0, 0});
    return;
  }
  gemm({lhs, rhs, out, batch, m, n, k, transposeLhs, transposeRhs, m * k,
        rhsShared ? 0 : k * n});
}

/// out[r, c] = act(out[r, c] + bias[c]) in place.
__global__ void biasActivation(float *out, const float *bias, int64_t rows,
                               int64_t n, bool relu) {
  TGC_GRID_STRIDE(i, rows * n) {
    float y = out[i];
    if (bias)
      y += bias[i % n];
    out[i] = relu && y < 0.0f ? 0.0f : y; // as std::max(y, 0.0f)
  }
}

void linear(const float *input, const float *weight, const float *bias,
            float *out, int64_t rows, int64_t k, int64_t n, bool relu) {
  gemm({input, weight, out, 1, rows, n, k, false, false, 0, 0});
  // The epilogue is a separate kernel, not a cuBLASLt fused epilogue: one
  // GEMM path for matmul and linear, at the cost of one more pass over out.
  if (rows * n == 0 || (!bias && !relu))
    return;
  biasActivation<<<blocksFor(rows * n), kThreads, 0, stream()>>>(
      out, bias, rows, n, relu);
  TGC_CUDA_CHECK_LAUNCH();
}

} // namespace tgc::cuda
