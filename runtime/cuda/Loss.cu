//===- Loss.cu - label-smoothed cross-entropy and its gradient -------===//
//
// Per counted row, with lse = log sum_c exp(x_c) and q the smoothed target
// distribution (1 - s) onehot(t) + s / V:
//   loss_r = -((1 - s)(x_t - lse) + (s / V) sum_c (x_c - lse))
//   dx_c   = lossGrad (softmax_c - q_c) / tokens
// One block per row; the row sums and the total accumulate in double, as
// the CPU kernel's (rows are as wide as the vocabulary). The total is
// added by one block in a fixed order: the same loss on every run.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/BlockReduce.cuh"
#include "runtime/cuda/Device.h"

namespace tgc::cuda {

/// log sum_c exp(x_c) of one row; the whole block calls.
__device__ double logSumExp(const float *x, int64_t classes) {
  float max = -INFINITY;
  TGC_FOR_COLUMN(c, classes) { max = fmaxf(max, x[c]); }
  max = blockMax(max);
  double sum = 0.0;
  TGC_FOR_COLUMN(c, classes) { sum += expf(x[c] - max); }
  return max + log(blockSum(sum));
}

/// rowLoss[r] = loss_r, 0 for ignored rows.
__global__ void rowLossKernel(const float *logits, const int32_t *targets,
                              double *rowLoss, int64_t rows, int64_t classes,
                              double smoothing, int32_t ignoreIndex) {
  TGC_FOR_ROW(r, rows) {
    int32_t target = targets[r];
    if (target == ignoreIndex) {
      if (threadIdx.x == 0)
        rowLoss[r] = 0.0;
      continue;
    }
    const float *x = logits + r * classes;
    double lse = logSumExp(x, classes), sum = 0.0;
    TGC_FOR_COLUMN(c, classes) { sum += x[c]; }
    sum = blockSum(sum);
    double sumLogP = sum - static_cast<double>(classes) * lse;
    double perClass = smoothing / static_cast<double>(classes);
    if (threadIdx.x == 0)
      rowLoss[r] = -((1.0 - smoothing) * (x[target] - lse) +
                     perClass * sumLogP);
  }
}

/// The number of targets that are not ignoreIndex; one block.
__device__ int32_t countTokens(const int32_t *targets, int64_t rows,
                               int32_t ignoreIndex) {
  int32_t count = 0;
  TGC_FOR_COLUMN(r, rows) { count += targets[r] != ignoreIndex; }
  return blockSum(count);
}

/// *loss = the mean of rowLoss over the counted rows; one block.
__global__ void meanLossKernel(const double *rowLoss, const int32_t *targets,
                               float *loss, int32_t *tokens, int64_t rows,
                               int32_t ignoreIndex) {
  double total = 0.0;
  TGC_FOR_COLUMN(r, rows) { total += rowLoss[r]; }
  total = blockSum(total);
  int32_t count = countTokens(targets, rows, ignoreIndex);
  if (threadIdx.x == 0) {
    *tokens = count;
    *loss = count > 0 ? static_cast<float>(total / count) : 0.0f;
  }
}

void crossEntropy(const float *logits, const int32_t *targets, float *loss,
                  int32_t *tokens, int64_t rows, int64_t classes,
                  float smoothing, int32_t ignoreIndex) {
  Scratch rowLoss(rows * sizeof(double));
  if (rows > 0) {
    rowLossKernel<<<rowBlocks(rows), kThreads, 0, stream()>>>(
        logits, targets, rowLoss.as<double>(), rows, classes, smoothing,
        ignoreIndex);
    TGC_CUDA_CHECK_LAUNCH();
  }
  meanLossKernel<<<1, kThreads, 0, stream()>>>(
      rowLoss.as<double>(), targets, loss, tokens, rows, ignoreIndex);
  TGC_CUDA_CHECK_LAUNCH();
}

__global__ void countTokensKernel(const int32_t *targets, int32_t *count,
                                  int64_t rows, int32_t ignoreIndex) {
  int32_t total = countTokens(targets, rows, ignoreIndex);
  if (threadIdx.x == 0)
    *count = total;
}

__global__ void crossEntropyGradKernel(float lossGrad, const float *logits,
                                       const int32_t *targets,
                                       const int32_t *count, float *out,
                                       int64_t rows, int64_t classes,
                                       float smoothing, int32_t ignoreIndex) {
  float perClass = smoothing / static_cast<float>(classes);
  float weight = *count > 0 ? static_cast<float>(
                                  static_cast<double>(lossGrad) / *count)
                            : 0.0f;
  TGC_FOR_ROW(r, rows) {
    float *o = out + r * classes;
    int32_t target = targets[r];
    if (target == ignoreIndex) {
      TGC_FOR_COLUMN(c, classes) { o[c] = 0.0f; }
      continue;
    }
    const float *x = logits + r * classes;
    float lse = static_cast<float>(logSumExp(x, classes));
    TGC_FOR_COLUMN(c, classes) {
      float q = c == target ? 1.0f - smoothing + perClass : perClass;
      o[c] = weight * (expf(x[c] - lse) - q);
    }
  }
}

void crossEntropyGrad(float lossGrad, const float *logits,
                      const int32_t *targets, float *out, int64_t rows,
                      int64_t classes, float smoothing, int32_t ignoreIndex) {
  if (rows * classes == 0)
    return;
  Scratch count(sizeof(int32_t));
  countTokensKernel<<<1, kThreads, 0, stream()>>>(targets, count.as<int32_t>(),
                                                  rows, ignoreIndex);
  TGC_CUDA_CHECK_LAUNCH();
  crossEntropyGradKernel<<<rowBlocks(rows), kThreads, 0, stream()>>>(
      lossGrad, logits, targets, count.as<int32_t>(), out, rows, classes,
      smoothing, ignoreIndex);
  TGC_CUDA_CHECK_LAUNCH();
}

} // namespace tgc::cuda
