//===- WeightBiasGrad.cu - a layer's weight and bias gradients ------------===//
//
// tg.weight_bias_grad: weightGrad = input^T grad and biasGrad = grad's
// column sums. cuBLASLt's BGRADA epilogue adds up the bias gradient as the
// GEMM reads grad, so grad (a feed-forward layer's largest backward value)
// is read once; its sums are f32, in cuBLASLt's order (the CPU's reduce
// adds in double, in row order: the GPU checks' tolerances cover the
// difference). Where cuBLASLt has no algorithm for the operands, matmul
// and reduce, as the unfused ops.
//
// In cuBLASLt's column-major terms the product is weightGrad^T [n, k] =
// grad^T [n, rows] input [rows, k]: A is grad as stored (row-major [rows,
// n] is column-major [n, rows]), not transposed, and B is input, whose
// stored column-major [k, rows] is transposed. BGRADA reduces A over the
// GEMM's k (rows): one sum per row of the result, per column of grad.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cuda/Device.h"

#include <map>
#include <tuple>
#include <type_traits>

namespace tgc::cuda {

namespace {

/// weightBiasGrad calls whose GEMM added up the bias gradient.
int64_t fusedCalls = 0;

/// What a plan depends on: the shape, the operands' type and alignments.
struct PlanKey {
  int64_t rows, k, n;
  cudaDataType_t operands;
  uint32_t matrixAlignment, biasAlignment;

  bool operator<(const PlanKey &o) const {
    return std::tie(rows, k, n, operands, matrixAlignment, biasAlignment) <
           std::tie(o.rows, o.k, o.n, o.operands, o.matrixAlignment,
                    o.biasAlignment);
  }
};

LtPlan makePlan(const PlanKey &key, float *biasGrad) {
  LtPlan plan;
  TGC_CUBLAS_CHECK(
      cublasLtMatmulDescCreate(&plan.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t opA = CUBLAS_OP_N, opB = CUBLAS_OP_T;
  const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BGRADA;
  TGC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
      plan.desc, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof(opA)));
  TGC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
      plan.desc, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof(opB)));
  TGC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
      plan.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
  // The heuristic reads the bias gradient's alignment from the pointer.
  TGC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
      plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &biasGrad,
      sizeof(biasGrad)));
  TGC_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan.a, key.operands, key.n,
                                              key.rows, key.n));
  TGC_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan.b, key.operands, key.k,
                                              key.rows, key.k));
  TGC_CUBLAS_CHECK(
      cublasLtMatrixLayoutCreate(&plan.d, CUDA_R_32F, key.n, key.k, key.n));
  pickAlgorithm(plan, key.matrixAlignment, CUDA_R_32F);
  return plan;
}

/// One GEMM with the BGRADA epilogue; false where cuBLASLt has none.
template <typename T>
bool fusedWeightBiasGrad(const T *input, const T *grad, float *weightGrad,
                         float *biasGrad, int64_t rows, int64_t k, int64_t n) {
  // cuBLASLt rejects empty matrices; the fallback writes the zeros.
  if (rows == 0 || k == 0 || n == 0 || !cublasLt())
    return false;
  // Its kernels may load the bias gradient in vectors: a misaligned one
  // goes to the fallback.
  if (alignmentOf(biasGrad) < 16)
    return false;
  constexpr cudaDataType_t operands =
      std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_16BF;
  const PlanKey key{rows,
                    k,
                    n,
                    operands,
                    std::min({alignmentOf(input), alignmentOf(grad),
                              alignmentOf(weightGrad)}),
                    alignmentOf(biasGrad)};
  // A model has a handful of layer shapes; their plans live as long as the
  // process.
  static std::map<PlanKey, LtPlan> plans;
  auto it = plans.find(key);
  if (it == plans.end())
    it = plans.emplace(key, makePlan(key, biasGrad)).first;
  LtPlan &plan = it->second;
  if (!plan.usable)
    return false;
  TGC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
      plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &biasGrad,
      sizeof(biasGrad)));
  if (!runPlan(plan, grad, input, weightGrad))
    return false;
  ++fusedCalls;
  return true;
}

template <typename T>
void weightBiasGradOf(const T *input, const T *grad, float *weightGrad,
                      float *biasGrad, int64_t rows, int64_t k, int64_t n) {
  if (fusedWeightBiasGrad(input, grad, weightGrad, biasGrad, rows, k, n))
    return;
  matmul(input, grad, weightGrad, 1, k, n, rows, true, false, false);
  const int64_t shape[] = {rows, n};
  const bool reduced[] = {true, false};
  reduce(grad, biasGrad, shape, 2, reduced, Reduction::Sum);
}

} // namespace

int64_t fusedWeightBiasGradCalls() { return fusedCalls; }

void weightBiasGrad(const float *input, const float *grad, float *weightGrad,
                    float *biasGrad, int64_t rows, int64_t k, int64_t n) {
  weightBiasGradOf(input, grad, weightGrad, biasGrad, rows, k, n);
}

void weightBiasGrad(const Bf16 *input, const Bf16 *grad, float *weightGrad,
                    float *biasGrad, int64_t rows, int64_t k, int64_t n) {
  weightBiasGradOf(input, grad, weightGrad, biasGrad, rows, k, n);
}

} // namespace tgc::cuda
