//===- Loss.cu - label-smoothed cross-entropy and its gradient -------===//
//
// The launches of LossKernels.cuh's kernels (which says how they work),
// and tg.output_loss's chunks: each chunk's logits GEMM, its loss and
// gradient kernel, and its two gradient GEMMs.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cuda/LossKernels.cuh"

#include <algorithm>
#include <type_traits>

namespace tgc::cuda {

void crossEntropy(const float *logits, const int32_t *targets, float *loss,
                  int32_t *tokens, int64_t rows, int64_t classes,
                  float smoothing, int32_t ignoreIndex) {
  Scratch rowLoss(rows * sizeof(double));
  if (rowLoss.failed())
    return; // no scratch: the error is kept (firstError), nothing runs
  crossEntropyKernel<<<rowBlocks(rows), kThreads, 0, stream()>>>(
      logits, targets, rowLoss.as<double>(), loss, tokens, rows, classes,
      smoothing, ignoreIndex);
  TGC_CUDA_CHECK_LAUNCH();
}

void crossEntropyGrad(float lossGrad, const float *logits,
                      const int32_t *targets, float *out, int64_t rows,
                      int64_t classes, float smoothing, int32_t ignoreIndex) {
  if (rows * classes == 0)
    return;
  Scratch count(sizeof(int32_t));
  if (count.failed())
    return; // no scratch: the error is kept (firstError), nothing runs
  countTokensKernel<<<1, kThreads, 0, stream()>>>(targets, rows, ignoreIndex,
                                                 count.as<int32_t>());
  TGC_CUDA_CHECK_LAUNCH();
  crossEntropyGradKernel<<<rowBlocks(rows), kThreads, 0, stream()>>>(
      lossGrad, logits, targets, count.as<int32_t>(), out, rows, classes,
      smoothing, ignoreIndex);
  TGC_CUDA_CHECK_LAUNCH();
}

/// The loss and logit gradient of a chunk's rows: a row in shared memory
/// where it fits (lossAndGradRowKernel), else lossAndGradKernel.
template <typename G>
static void lossAndGrad(const float *logits, G *grad, const int32_t *targets,
                        const int32_t *count, double *rowLoss, float lossGrad,
                        int64_t rows, int64_t classes, float smoothing,
                        int32_t ignoreIndex) {
  static bool allowed = false;
  const size_t rowBytes = classes * sizeof(float);
  // Narrow rows stay in L2 between the reads anyway. The block reductions'
  // own shared memory comes on top of the row's.
  constexpr int64_t kNarrowRow = 8192;
  constexpr size_t kReductionBytes = 1024;
  const size_t limit = sharedMemoryLimit();
  if (classes > kNarrowRow && rowBytes + kReductionBytes <= limit) {
    allowSharedMemory(lossAndGradRowKernel<G>, limit - kReductionBytes,
                      allowed);
    if (allowed) {
      lossAndGradRowKernel<G>
          <<<rowBlocks(rows), kRowThreads, rowBytes, stream()>>>(
              logits, grad, targets, count, rowLoss, lossGrad, rows, classes,
              smoothing, ignoreIndex);
      TGC_CUDA_CHECK_LAUNCH();
      return;
    }
  }
  lossAndGradKernel<<<rowBlocks(rows), kThreads, 0, stream()>>>(
      logits, grad, targets, count, rowLoss, lossGrad, rows, classes, smoothing,
      ignoreIndex);
  TGC_CUDA_CHECK_LAUNCH();
}

/// The chunk's logit gradient as the gradient GEMMs read it: the f32
/// workspace itself, or the bf16 buffer for bf16 operands.
static float *gradientOperand(float *workspace, Bf16 *, const float *) {
  return workspace;
}
static Bf16 *gradientOperand(float *, Bf16 *rounded, const Bf16 *) {
  return rounded;
}

template <typename T>
static void outputLossOf(const T *hidden, const T *weight,
                         const int32_t *targets, float lossGrad, float *loss,
                         int32_t *tokens, float *hiddenGrad, float *weightGrad,
                         float *workspace, int64_t rows, int64_t width,
                         int64_t classes, int64_t chunkRows, float smoothing,
                         int32_t ignoreIndex) {
  constexpr bool bf16 = std::is_same_v<T, Bf16>;
  chunkRows = std::clamp<int64_t>(chunkRows, 1, std::max<int64_t>(rows, 1));
  Scratch count(sizeof(int32_t)), rowLoss(rows * sizeof(double)),
      rounded(bf16 ? chunkRows * classes * sizeof(Bf16) : 0);
  if (count.failed() || rowLoss.failed() || rounded.failed())
    return; // no scratch: the error is kept (firstError), nothing runs
  countTokensKernel<<<1, kThreads, 0, stream()>>>(targets, rows, ignoreIndex,
                                                 count.as<int32_t>());
  TGC_CUDA_CHECK_LAUNCH();
  if (rows == 0 && classes * width > 0) // a sum over no rows
    TGC_CUDA_CHECK(cudaMemsetAsync(weightGrad, 0,
                                   classes * width * sizeof(float), stream()));
  for (int64_t r0 = 0; r0 < rows; r0 += chunkRows) {
    const int64_t n = std::min(chunkRows, rows - r0);
    const T *h = hidden + r0 * width;
    gemmInto(h, weight, workspace, n, classes, width, false, true, false);
    T *grad = gradientOperand(workspace, rounded.as<Bf16>(), hidden);
    if (classes > 0) {
      lossAndGrad(workspace, grad, targets + r0, count.as<int32_t>(),
                  rowLoss.as<double>() + r0, lossGrad, n, classes, smoothing,
                  ignoreIndex);
    }
    gemmInto(grad, weight, hiddenGrad + r0 * width, n, width, classes, false,
             false, false);
    gemmInto(grad, h, weightGrad, classes, width, n, true, false, r0 > 0);
  }
  meanLossKernel<<<1, kThreads, 0, stream()>>>(
      rowLoss.as<double>(), count.as<int32_t>(), rows, loss, tokens);
  TGC_CUDA_CHECK_LAUNCH();
}

void outputLoss(const float *hidden, const float *weight,
                const int32_t *targets, float lossGrad, float *loss,
                int32_t *tokens, float *hiddenGrad, float *weightGrad,
                float *workspace, int64_t rows, int64_t width,
                int64_t classes, int64_t chunkRows, float smoothing,
                int32_t ignoreIndex) {
  outputLossOf(hidden, weight, targets, lossGrad, loss, tokens, hiddenGrad,
               weightGrad, workspace, rows, width, classes, chunkRows,
               smoothing, ignoreIndex);
}

void outputLoss(const Bf16 *hidden, const Bf16 *weight,
                const int32_t *targets, float lossGrad, float *loss,
                int32_t *tokens, float *hiddenGrad, float *weightGrad,
                float *workspace, int64_t rows, int64_t width,
                int64_t classes, int64_t chunkRows, float smoothing,
                int32_t ignoreIndex) {
  outputLossOf(hidden, weight, targets, lossGrad, loss, tokens, hiddenGrad,
               weightGrad, workspace, rows, width, classes, chunkRows,
               smoothing, ignoreIndex);
}

} // namespace tgc::cuda
