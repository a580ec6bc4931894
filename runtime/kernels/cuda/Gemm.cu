//===- Gemm.cu - matmul on cuBLAS, linear on cuBLASLt ----------------===//
//
// f32 operands in full f32 (CUBLAS_COMPUTE_32F, no TF32); linear's bias and
// ReLU are cuBLASLt's fused epilogue: no second pass over the output. The
// other activations, and any pre-activation, run in one epilogue kernel over
// the f32 product, with the CPU's functions (Elementwise.h). Not cuBLASLt's
// tanh GELU: on an H200 its f32 results were several times further from
// the CPU's than the kernel's, and its bf16 ones not those rounded once
// (4% of a test's elements differed, 2% by more than one bf16 step). bf16
// operands (tg-mixed-precision) run on the tensor cores with f32
// accumulation (cublasGemmEx, cuBLASLt for linear), and write an f32 result
// or, where tg-fold-bf16-roundings made it bf16, that result rounded once as
// cuBLAS writes it (round to nearest even, as runtime::roundToBf16).
// matmulAdd (tg.matmul_add) is the same GEMM with beta = 1 over the summand:
// cuBLAS adds the f32 product to it in the epilogue, each sum rounded once.
//
// cuBLAS is column-major; a row-major [r, c] matrix is the column-major
// [c, r] one in the same memory. So row-major out = op(A) op(B) is computed
// as column-major out^T = op(B)^T op(A)^T: the operands swap, m and n
// swap, and each leading dimension is the operand's stored row length.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/cuda/Bf16Quads.cuh"
#include "runtime/kernels/cuda/Device.h"
#include "runtime/kernels/cuda/LinearEpilogue.cuh"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <tuple>
#include <type_traits>

namespace tgc::cuda {

namespace {
/// One row-major (batched) product: out[b] [m, n] = op(a[b]) op(b[b]).
struct Product {
  const float *a, *b;
  float *out;
  int64_t batch, m, n, k;
  bool transposeA, transposeB;
  int64_t strideA, strideB; ///< elements between batches; 0 = shared
  float beta = 0.0f;        ///< 1: add to out's values (gemmInto)
};
} // namespace

static void gemm(const Product &p) {
  if (p.batch == 0 || p.m == 0 || p.n == 0)
    return;
  if (p.k == 0) { // an empty sum; cuBLAS would reject the leading dimension
    if (p.beta == 0.0f)
      TGC_CUDA_CHECK(cudaMemsetAsync(
          p.out, 0, p.batch * p.m * p.n * sizeof(float), stream()));
    return;
  }
  const float one = 1.0f;
  int m = static_cast<int>(p.m), n = static_cast<int>(p.n),
      k = static_cast<int>(p.k);
  cublasOperation_t opA = p.transposeA ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = p.transposeB ? CUBLAS_OP_T : CUBLAS_OP_N;
  int lda = p.transposeA ? m : k, ldb = p.transposeB ? k : n;
  cublasHandle_t handle = cublas();
  if (!handle) // cuBLAS failed to start; its error is kept (firstError)
    return;
  if (p.batch == 1) {
    TGC_CUBLAS_CHECK(cublasSgemm(handle, opB, opA, n, m, k, &one, p.b, ldb, p.a,
                                 lda, &p.beta, p.out, n));
    return;
  }
  TGC_CUBLAS_CHECK(cublasSgemmStridedBatched(
      handle, opB, opA, n, m, k, &one, p.b, ldb, p.strideB, p.a, lda, p.strideA,
      &p.beta, p.out, n, p.m * p.n, static_cast<int>(p.batch)));
}

static void f32Matmul(const float *lhs, const float *rhs, float *out,
                      int64_t batch, int64_t m, int64_t n, int64_t k,
                      bool transposeLhs, bool transposeRhs, bool rhsShared,
                      float beta) {
  // Untransposed lhs batches are contiguous rows: one tall GEMM.
  if (rhsShared && !transposeLhs) {
    gemm({lhs, rhs, out, 1, batch * m, n, k, false, transposeRhs, 0, 0,
          beta});
    return;
  }
  gemm({lhs, rhs, out, batch, m, n, k, transposeLhs, transposeRhs, m * k,
        rhsShared ? 0 : k * n, beta});
}

void matmul(const float *lhs, const float *rhs, float *out, int64_t batch,
            int64_t m, int64_t n, int64_t k, bool transposeLhs,
            bool transposeRhs, bool rhsShared) {
  f32Matmul(lhs, rhs, out, batch, m, n, k, transposeLhs, transposeRhs,
            rhsShared, 0.0f);
}

/// cuBLASLt may use this much scratch per GEMM (what NVIDIA suggests for
/// Hopper); the stream-ordered pool reuses it from call to call.
constexpr size_t kLtWorkspaceBytes = 32u << 20;

void pickAlgorithm(LtPlan &plan, uint32_t alignment,
                   cudaDataType_t resultType) {
  cublasLtMatmulPreference_t preference = nullptr;
  TGC_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
  TGC_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &kLtWorkspaceBytes,
      sizeof(kLtWorkspaceBytes)));
  // A split sum whose partial sums are kept in the result's type (the
  // in-place and output-type reduction schemes, all allowed by default)
  // rounds a bf16 result more than once, its bias added after a rounding.
  // Unsplit algorithms (scheme none) pass any mask.
  if (resultType != CUDA_R_32F) {
    const uint32_t f32Partials = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    TGC_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        preference, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &f32Partials,
        sizeof(f32Partials)));
  }
  // The heuristic assumes 256-byte aligned matrices unless told otherwise;
  // tensors inside the arena may be less.
  for (cublasLtMatmulPreferenceAttributes_t attribute :
       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    TGC_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        preference, attribute, &alignment, sizeof(alignment)));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      cublasLt(), plan.desc, plan.a, plan.b, plan.d, plan.d, preference, 1,
      &result, &found);
  TGC_CUBLAS_CHECK(cublasLtMatmulPreferenceDestroy(preference));
  plan.usable = status == CUBLAS_STATUS_SUCCESS && found > 0;
  if (plan.usable) {
    plan.algo = result.algo;
    plan.workspaceBytes = result.workspaceSize;
  }
}

bool runPlan(LtPlan &plan, const void *a, const void *b, void *d) {
  const float one = 1.0f, zero = 0.0f;
  Scratch workspace(plan.workspaceBytes);
  if (workspace.failed())
    return true; // not run: the error is kept (firstError), the step fails
  cublasStatus_t status = cublasLtMatmul(
      cublasLt(), plan.desc, &one, a, plan.a, b, plan.b, &zero, d, plan.d, d,
      plan.d, &plan.algo, workspace.as<void>(), plan.workspaceBytes, stream());
  // An algorithm the heuristic offered may still be refused for these
  // operands: they run unfused, not again through it (any other status of
  // the call would end the run where an unfused GEMM computes the same).
  if (status == CUBLAS_STATUS_NOT_SUPPORTED ||
      status == CUBLAS_STATUS_INVALID_VALUE ||
      status == CUBLAS_STATUS_ARCH_MISMATCH) {
    plan.usable = false;
    static bool told = false;
    if (status != CUBLAS_STATUS_NOT_SUPPORTED && !told) {
      told = true;
      std::fprintf(stderr,
                   "note: cuBLASLt refused an algorithm its heuristic offered "
                   "(%s): those GEMMs run unfused\n",
                   cublasGetStatusName(status));
    }
    return false;
  }
  TGC_CUBLAS_CHECK(status);
  return true;
}

namespace {
/// linear calls that ran cuBLASLt's fused epilogue (fusedLinearCalls).
int64_t fusedCalls = 0;

/// cuBLASLt's epilogue for the bias and activation; none where it has no
/// such epilogue (the tanh GELU too: see the top of the file).
std::optional<cublasLtEpilogue_t> epilogueFor(bool bias,
                                              Activation activation) {
  switch (activation) {
  case Activation::none:
    return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  case Activation::relu:
    return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
  default:
    return std::nullopt;
  }
}

/// cuBLAS's name for the element type T.
template <typename T> constexpr cudaDataType_t dataTypeOf() {
  return std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_16BF;
}

/// What a plan depends on: the shape, the element types (operands, result;
/// a bias is the result's), the epilogue, and how the matrices and the bias
/// are aligned.
struct PlanKey {
  int64_t rows, k, n;
  cudaDataType_t operands, result;
  cublasLtEpilogue_t epilogue;
  uint32_t matrixAlignment, biasAlignment;

  bool operator<(const PlanKey &o) const {
    return std::tie(rows, k, n, operands, result, epilogue, matrixAlignment,
                    biasAlignment) <
           std::tie(o.rows, o.k, o.n, o.operands, o.result, o.epilogue,
                    o.matrixAlignment, o.biasAlignment);
  }
};

/// The plan for out [rows, n] = input [rows, k] weight [k, n] with the
/// epilogue. In cuBLASLt's column-major terms out^T [n, rows] = weight^T
/// [n, k] input^T [k, rows], and the bias runs along out^T's rows (n).
LtPlan makePlan(const PlanKey &key, const void *bias) {
  LtPlan plan;
  TGC_CUBLAS_CHECK(
      cublasLtMatmulDescCreate(&plan.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  TGC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
      plan.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &key.epilogue,
      sizeof(key.epilogue)));
  // The heuristic reads the bias's alignment from the pointer itself (there
  // is no preference for it); later calls with the same key have a bias
  // aligned alike.
  TGC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
      plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  auto layout = [](cublasLtMatrixLayout_t &l, cudaDataType_t type, int64_t r,
                   int64_t c) {
    TGC_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, type, r, c, r));
  };
  // cuBLASLt's A is the weight, B the input (see the top of the file).
  layout(plan.a, key.operands, key.n, key.k);
  layout(plan.b, key.operands, key.k, key.rows);
  layout(plan.d, key.result, key.n, key.rows);
  pickAlgorithm(plan, key.matrixAlignment, key.result);
  return plan;
}

/// The plan of `key`, made on first use. A model has a handful of linear
/// shapes; their plans live as long as the process.
LtPlan &planFor(const PlanKey &key, const void *bias) {
  static std::map<PlanKey, LtPlan> plans;
  auto it = plans.find(key);
  if (it == plans.end())
    it = plans.emplace(key, makePlan(key, bias)).first;
  return it->second;
}

/// out = act(input weight + bias) with cuBLASLt's epilogue; false where it
/// has none for these operands (the caller computes it otherwise).
template <typename In, typename Bias, typename Out>
bool fusedLinear(const In *input, const In *weight, const Bias *bias, Out *out,
                 int64_t rows, int64_t k, int64_t n, Activation activation) {
  if (k == 0) // cuBLASLt rejects an empty sum; gemm() writes the zeros
    return false;
  std::optional<cublasLtEpilogue_t> epilogue = epilogueFor(bias, activation);
  if (!epilogue)
    return false;
  // cuBLASLt adds a bias of the result's type only (another type it
  // documents for integer and fp8 kernels alone, and may not reject): an
  // f32 bias with a bf16 result (no algorithm on an H200 either) or a bf16
  // one with an f32 result takes the epilogue kernel. Hence
  // tg-mixed-precision's bf16 bias for a linear with a bf16 result.
  if (bias && !std::is_same_v<Bias, Out>)
    return false;
  if (!cublasLt()) // cuBLASLt failed to start; its error is kept
    return false;
  // cuBLASLt's heuristic need not check the bias's alignment and its kernels
  // may load it in vectors: a misaligned bias goes to the unfused path.
  if (bias && alignmentOf(bias) < 16)
    return false;
  uint32_t matrices = std::min(
      {alignmentOf(input), alignmentOf(weight), alignmentOf(out)});
  LtPlan &plan = planFor({rows, k, n, dataTypeOf<In>(), dataTypeOf<Out>(),
                          *epilogue, matrices, alignmentOf(bias)},
                         bias);
  if (!plan.usable)
    return false;
  // The bias pointer is per call: set on the shared descriptor just before
  // its use (calls are enqueued from one host thread).
  TGC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
      plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  if (!runPlan(plan, weight, input, out))
    return false;
  ++fusedCalls;
  return true;
}

/// linear's epilogue over a result the GEMM wrote in f32 (`product`), in
/// place when Out is f32.
template <typename Out, typename Pre, typename Bias>
void applyBiasActivation(const float *product, Out *out, Pre *pre,
                         const Bias *bias, int64_t rows, int64_t n,
                         Activation activation) {
  const int64_t quads = (rows * n + 3) / 4;
  biasActivation<<<blocksFor(quads), kThreads, 0, stream()>>>(
      product, out, pre, bias, rows, n, activation);
  TGC_CUDA_CHECK_LAUNCH();
}
} // namespace

int64_t fusedLinearCalls() { return fusedCalls; }

void gemmInto(const float *a, const float *b, float *out, int64_t m,
              int64_t n, int64_t k, bool transposeA, bool transposeB,
              bool accumulate) {
  gemm({a, b, out, 1, m, n, k, transposeA, transposeB, 0, 0,
        accumulate ? 1.0f : 0.0f});
}

//===--- bf16 operands ------------------------------------------------------===//

/// The bf16 counterpart of gemm(Product): CUDA_R_16BF operands, f32
/// accumulation (CUBLAS_COMPUTE_32F), an f32 or bf16 (Out) result; beta 1
/// adds to out's values.
template <typename Out>
static void gemmBf16(const Bf16 *a, const Bf16 *b, Out *out, int64_t batch,
                     int64_t rows, int64_t cols, int64_t depth,
                     bool transposeA, bool transposeB, int64_t strideA,
                     int64_t strideB, float beta = 0.0f) {
  if (batch == 0 || rows == 0 || cols == 0)
    return;
  if (depth == 0) { // zeros in either type are all-zero bits
    if (beta == 0.0f)
      TGC_CUDA_CHECK(cudaMemsetAsync(
          out, 0, batch * rows * cols * sizeof(Out), stream()));
    return;
  }
  const float one = 1.0f;
  int m = static_cast<int>(rows), n = static_cast<int>(cols),
      k = static_cast<int>(depth);
  cublasOperation_t opA = transposeA ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = transposeB ? CUBLAS_OP_T : CUBLAS_OP_N;
  int lda = transposeA ? m : k, ldb = transposeB ? k : n;
  cublasHandle_t handle = cublas();
  if (!handle)
    return;
  // Column-major out^T = op(B)^T op(A)^T, as gemm(Product) does.
  TGC_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      handle, opB, opA, n, m, k, &one, b, CUDA_R_16BF, ldb, strideB, a,
      CUDA_R_16BF, lda, strideA, &beta, out, dataTypeOf<Out>(), n,
      rows * cols, static_cast<int>(batch), CUBLAS_COMPUTE_32F,
      CUBLAS_GEMM_DEFAULT));
}

template <typename Out>
static void bf16Matmul(const Bf16 *lhs, const Bf16 *rhs, Out *out,
                       int64_t batch, int64_t m, int64_t n, int64_t k,
                       bool transposeLhs, bool transposeRhs, bool rhsShared,
                       float beta = 0.0f) {
  if (rhsShared && !transposeLhs) {
    gemmBf16(lhs, rhs, out, 1, batch * m, n, k, false, transposeRhs, 0, 0,
             beta);
    return;
  }
  gemmBf16(lhs, rhs, out, batch, m, n, k, transposeLhs, transposeRhs, m * k,
           rhsShared ? 0 : k * n, beta);
}

void gemmInto(const Bf16 *a, const Bf16 *b, float *out, int64_t m, int64_t n,
              int64_t k, bool transposeA, bool transposeB, bool accumulate) {
  gemmBf16(a, b, out, 1, m, n, k, transposeA, transposeB, 0, 0,
           accumulate ? 1.0f : 0.0f);
}

template <typename T, typename Out>
void pointerMatmul(const T *const *a, int64_t lda, const T *const *b,
                   int64_t ldb, Out *const *out, int64_t ldc, int64_t batch,
                   int64_t rows, int64_t cols, int64_t depth, bool transposeA,
                   bool transposeB) {
  if (batch == 0 || rows == 0 || cols == 0)
    return;
  if (depth == 0) { // no empty sums over pointers (attention has none)
    TGC_CUDA_FAIL("internal error: an empty sum reached the per-head GEMMs");
    return;
  }
  const float one = 1.0f, zero = 0.0f;
  cublasHandle_t handle = cublas();
  if (!handle)
    return;
  // Column-major out^T = op(B)^T op(A)^T, as gemm(Product) does.
  TGC_CUBLAS_CHECK(cublasGemmBatchedEx(
      handle, transposeB ? CUBLAS_OP_T : CUBLAS_OP_N,
      transposeA ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(cols),
      static_cast<int>(rows), static_cast<int>(depth), &one,
      reinterpret_cast<const void *const *>(b), dataTypeOf<T>(),
      static_cast<int>(ldb), reinterpret_cast<const void *const *>(a),
      dataTypeOf<T>(), static_cast<int>(lda), &zero,
      reinterpret_cast<void *const *>(out), dataTypeOf<Out>(),
      static_cast<int>(ldc), static_cast<int>(batch), CUBLAS_COMPUTE_32F,
      CUBLAS_GEMM_DEFAULT));
}

template void pointerMatmul(const float *const *, int64_t,
                            const float *const *, int64_t, float *const *,
                            int64_t, int64_t, int64_t, int64_t, int64_t, bool,
                            bool);
template void pointerMatmul(const Bf16 *const *, int64_t, const Bf16 *const *,
                            int64_t, float *const *, int64_t, int64_t, int64_t,
                            int64_t, int64_t, bool, bool);
template void pointerMatmul(const Bf16 *const *, int64_t, const Bf16 *const *,
                            int64_t, Bf16 *const *, int64_t, int64_t, int64_t,
                            int64_t, int64_t, bool, bool);

void matmul(const Bf16 *lhs, const Bf16 *rhs, float *out, int64_t batch,
            int64_t m, int64_t n, int64_t k, bool transposeLhs,
            bool transposeRhs, bool rhsShared) {
  bf16Matmul(lhs, rhs, out, batch, m, n, k, transposeLhs, transposeRhs,
             rhsShared);
}

void matmul(const Bf16 *lhs, const Bf16 *rhs, Bf16 *out, int64_t batch,
            int64_t m, int64_t n, int64_t k, bool transposeLhs,
            bool transposeRhs, bool rhsShared) {
  bf16Matmul(lhs, rhs, out, batch, m, n, k, transposeLhs, transposeRhs,
             rhsShared);
}

/// The summand where the sum goes (a device-to-device copy unless the
/// plan put them in the same bytes), for the GEMM to add to with beta 1.
static void placeAddend(const float *addend, float *out, int64_t count) {
  if (out != addend && count > 0)
    TGC_CUDA_CHECK(cudaMemcpyAsync(out, addend, count * sizeof(float),
                                   cudaMemcpyDeviceToDevice, stream()));
}

void matmulAdd(const float *lhs, const float *rhs, const float *addend,
               float *out, int64_t batch, int64_t m, int64_t n, int64_t k,
               bool transposeLhs, bool transposeRhs, bool rhsShared) {
  placeAddend(addend, out, batch * m * n);
  f32Matmul(lhs, rhs, out, batch, m, n, k, transposeLhs, transposeRhs,
            rhsShared, 1.0f);
}

void matmulAdd(const Bf16 *lhs, const Bf16 *rhs, const float *addend,
               float *out, int64_t batch, int64_t m, int64_t n, int64_t k,
               bool transposeLhs, bool transposeRhs, bool rhsShared) {
  placeAddend(addend, out, batch * m * n);
  bf16Matmul(lhs, rhs, out, batch, m, n, k, transposeLhs, transposeRhs,
             rhsShared, 1.0f);
}

/// linear's GEMM into f32 (the epilogue's input) or straight into a result
/// without an epilogue.
static void linearProduct(const float *input, const float *weight, float *out,
                          int64_t rows, int64_t k, int64_t n) {
  gemm({input, weight, out, 1, rows, n, k, false, false, 0, 0});
}
template <typename Out>
static void linearProduct(const Bf16 *input, const Bf16 *weight, Out *out,
                          int64_t rows, int64_t k, int64_t n) {
  gemmBf16(input, weight, out, 1, rows, n, k, false, false, 0, 0);
}

/// Every linear: cuBLASLt's epilogue, else the GEMM and the epilogue kernel
/// (which alone writes a pre-activation).
template <typename In, typename Bias, typename Out, typename Pre>
static void linearOf(const In *input, const In *weight, const Bias *bias,
                     Out *out, Pre *pre, int64_t rows, int64_t k, int64_t n,
                     Activation activation) {
  if (rows * n == 0 ||
      (!pre && fusedLinear(input, weight, bias, out, rows, k, n, activation)))
    return;
  if (!bias && activation == Activation::none && !pre) {
    linearProduct(input, weight, out, rows, k, n);
    return;
  }
  if constexpr (std::is_same_v<Out, float>) {
    linearProduct(input, weight, out, rows, k, n);
    applyBiasActivation(out, out, pre, bias, rows, n, activation);
  } else {
    // The epilogue needs the f32 sums: rounding them first would round
    // twice.
    Scratch product(rows * n * sizeof(float));
    if (product.failed())
      return; // no scratch: the error is kept (firstError), nothing runs
    linearProduct(input, weight, product.as<float>(), rows, k, n);
    applyBiasActivation(product.as<float>(), out, pre, bias, rows, n,
                        activation);
  }
}

void linear(const float *input, const float *weight, const float *bias,
            float *out, int64_t rows, int64_t k, int64_t n,
            Activation activation) {
  linearOf(input, weight, bias, out, static_cast<float *>(nullptr), rows, k,
           n, activation);
}

void linear(const Bf16 *input, const Bf16 *weight, const float *bias,
            float *out, int64_t rows, int64_t k, int64_t n,
            Activation activation) {
  linearOf(input, weight, bias, out, static_cast<float *>(nullptr), rows, k,
           n, activation);
}

void linear(const Bf16 *input, const Bf16 *weight, const float *bias,
            Bf16 *out, int64_t rows, int64_t k, int64_t n,
            Activation activation) {
  linearOf(input, weight, bias, out, static_cast<float *>(nullptr), rows, k,
           n, activation);
}

void linear(const float *input, const float *weight, const float *bias,
            float *out, float *pre, int64_t rows, int64_t k, int64_t n,
            Activation activation) {
  linearOf(input, weight, bias, out, pre, rows, k, n, activation);
}

void linear(const Bf16 *input, const Bf16 *weight, const float *bias,
            float *out, float *pre, int64_t rows, int64_t k, int64_t n,
            Activation activation) {
  linearOf(input, weight, bias, out, pre, rows, k, n, activation);
}

void linear(const Bf16 *input, const Bf16 *weight, const float *bias,
            float *out, Bf16 *pre, int64_t rows, int64_t k, int64_t n,
            Activation activation) {
  linearOf(input, weight, bias, out, pre, rows, k, n, activation);
}

void linear(const Bf16 *input, const Bf16 *weight, const float *bias,
            Bf16 *out, float *pre, int64_t rows, int64_t k, int64_t n,
            Activation activation) {
  linearOf(input, weight, bias, out, pre, rows, k, n, activation);
}

void linear(const Bf16 *input, const Bf16 *weight, const float *bias,
            Bf16 *out, Bf16 *pre, int64_t rows, int64_t k, int64_t n,
            Activation activation) {
  linearOf(input, weight, bias, out, pre, rows, k, n, activation);
}

void linear(const Bf16 *input, const Bf16 *weight, const Bf16 *bias, float *out,
            int64_t rows, int64_t k, int64_t n, Activation activation) {
  linearOf(input, weight, bias, out, static_cast<float *>(nullptr), rows, k, n,
           activation);
}

void linear(const Bf16 *input, const Bf16 *weight, const Bf16 *bias, Bf16 *out,
            int64_t rows, int64_t k, int64_t n, Activation activation) {
  linearOf(input, weight, bias, out, static_cast<float *>(nullptr), rows, k, n,
           activation);
}

__global__ void roundToBf16Kernel(const float *input, Bf16 *out,
                                  int64_t count) {
  TGC_GRID_STRIDE(i, count) { out[i] = runtime::roundToBf16(input[i]); }
}

/// Four values a thread: one 16-byte load and one 8-byte store.
__global__ void roundQuadsToBf16Kernel(const float4 *input, uint2 *out,
                                       int64_t quads) {
  TGC_GRID_STRIDE(i, quads) { out[i] = roundedQuad(input[i]); }
}

void toBf16(const float *input, Bf16 *out, int64_t count) {
  if (count == 0)
    return;
  int64_t quads = 0;
  if (reinterpret_cast<uintptr_t>(input) % sizeof(float4) == 0 &&
      reinterpret_cast<uintptr_t>(out) % sizeof(uint2) == 0) {
    quads = count / 4;
    if (quads > 0) {
      roundQuadsToBf16Kernel<<<blocksFor(quads), kThreads, 0, stream()>>>(
          reinterpret_cast<const float4 *>(input),
          reinterpret_cast<uint2 *>(out), quads);
      TGC_CUDA_CHECK_LAUNCH();
    }
  }
  int64_t rest = count - 4 * quads;
  if (rest > 0) {
    roundToBf16Kernel<<<blocksFor(rest), kThreads, 0, stream()>>>(
        input + 4 * quads, out + 4 * quads, rest);
    TGC_CUDA_CHECK_LAUNCH();
  }
}

} // namespace tgc::cuda
