//===- Loss.cpp - label-smoothed cross-entropy and its gradient ------===//
//
// Per counted row, with lse = log sum_c exp(x_c) and q the smoothed target
// distribution (1 - s) onehot(t) + s / V:
//   loss_r = -((1 - s)(x_t - lse) + (s / V) sum_c (x_c - lse))
//   dx_c   = lossGrad (softmax_c - q_c) / tokens
// Rows are as wide as the vocabulary, so the row sums and the total
// accumulate in double.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cpu/Gemm.h"
#include "runtime/kernels/cpu/Kernels.h"
#include "runtime/kernels/cpu/ReusedBuffer.h"
#include "runtime/kernels/cpu/VectorMath.h"

#include <algorithm>
#include <cmath>
#include <omp.h>
#include <vector>

namespace tgc::cpu {

/// Below this many logits the loss stays serial.
static constexpr int64_t kParallelLossElements = 1 << 14;

/// log sum_c exp(x_c) of one row (vectorized expf, see VectorMath.h).
static double logSumExp(const float *x, int64_t classes) {
  float max = maxOf(x, classes);
  double sum = 0.0;
#pragma omp simd reduction(+ : sum)
  for (int64_t c = 0; c < classes; ++c)
    sum += std::exp(x[c] - max);
  return max + std::log(sum);
}

static int32_t countTokens(const int32_t *targets, int64_t rows,
                           int32_t ignoreIndex) {
  return static_cast<int32_t>(
      std::count_if(targets, targets + rows,
                    [&](int32_t t) { return t != ignoreIndex; }));
}

void crossEntropy(const float *logits, const int32_t *targets, float *loss,
                  int32_t *tokens, int64_t rows, int64_t classes,
                  float smoothing, int32_t ignoreIndex) {
  double s = smoothing, perClass = s / static_cast<double>(classes);
  bool parallel = rows * classes >= kParallelLossElements;
  // Per-thread partial totals added in thread order: the loss does not
  // change from run to run (an OpenMP reduction's order is unspecified).
  int threads = parallel ? omp_get_max_threads() : 1;
  struct LossPartials;
  std::vector<double> &partial = reusedBuffer<LossPartials>(threads, 0.0);
#pragma omp parallel num_threads(threads) if (parallel)
  {
    double total = 0.0;
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      if (targets[r] == ignoreIndex)
        continue;
      const float *x = logits + r * classes;
      double lse = logSumExp(x, classes), sum = 0.0;
#pragma omp simd reduction(+ : sum)
      for (int64_t c = 0; c < classes; ++c)
        sum += x[c];
      double sumLogP = sum - static_cast<double>(classes) * lse;
      total -= (1.0 - s) * (x[targets[r]] - lse) + perClass * sumLogP;
    }
    partial[omp_get_thread_num()] = total;
  }
  double total = 0.0;
  for (double p : partial)
    total += p;
  int32_t count = countTokens(targets, rows, ignoreIndex);
  *tokens = count;
  *loss = count > 0 ? static_cast<float>(total / count) : 0.0f;
}

void crossEntropyGrad(float lossGrad, const float *logits,
                      const int32_t *targets, float *out, int64_t rows,
                      int64_t classes, float smoothing, int32_t ignoreIndex) {
  int32_t count = countTokens(targets, rows, ignoreIndex);
  float perClass = smoothing / static_cast<float>(classes);
  float weight = count > 0 ? static_cast<float>(
                                 static_cast<double>(lossGrad) / count)
                           : 0.0f;
#pragma omp parallel for schedule(static) if (rows * classes >= kParallelLossElements)
  for (int64_t r = 0; r < rows; ++r) {
    float *o = out + r * classes;
    int32_t target = targets[r];
    if (target == ignoreIndex) {
      std::fill(o, o + classes, 0.0f);
      continue;
    }
    const float *x = logits + r * classes;
    float lse = static_cast<float>(logSumExp(x, classes));
#pragma omp simd
    for (int64_t c = 0; c < classes; ++c)
      o[c] = weight * (std::exp(x[c] - lse) - perClass);
    o[target] = weight * (std::exp(x[target] - lse) -
                          (1.0f - smoothing + perClass));
  }
}

/// One counted row's loss, with its gradient written over the logits x:
/// x_c = weight (softmax_c - q_c). Reads the row for its maximum, then
/// writes exp(x_c - max) over it while it sums, then scales it: one expf per
/// logit (the row of a chunk is still in cache). Its own function on
/// 512-bit vectors (GCC prefers 256 on this -march): libmvec's 16-wide expf,
/// the row's main cost, took the 3+3 bf16 step's output loss from 36.2-37.9
/// to 34.1-36.0 ms (Intel Xeon with AMX), the same losses bit for bit.
[[gnu::noinline, gnu::target("prefer-vector-width=512")]] static double
lossAndGradRow(float *x, int32_t target, int64_t classes, double smoothing,
               float weight) {
  const float max = maxOf(x, classes), targetLogit = x[target];
  double sumExp = 0.0, sum = 0.0;
#pragma omp simd reduction(+ : sumExp, sum)
  for (int64_t c = 0; c < classes; ++c) {
    float e = std::exp(x[c] - max);
    sum += x[c];
    sumExp += e;
    x[c] = e;
  }
  double lse = max + std::log(sumExp);
  double perClass = smoothing / static_cast<double>(classes);
  double loss = -((1.0 - smoothing) * (targetLogit - lse) +
                  perClass * (sum - static_cast<double>(classes) * lse));
  const float scale = static_cast<float>(weight / sumExp),
              offset = static_cast<float>(weight * perClass);
#pragma omp simd
  for (int64_t c = 0; c < classes; ++c)
    x[c] = x[c] * scale - offset;
  x[target] -= weight * static_cast<float>(1.0 - smoothing);
  return loss;
}

namespace {

/// A finished row of the logit gradient dl as the gradient products read
/// it: as it is for f32 operands; for bf16 ones rounded over its own first
/// half (roundRowInPlace) while it is still in cache, so the rounded copy
/// takes no memory outside the planned workspace and no pass of its own.
void finishGradientRow(float *, int64_t, const float *) {}
void finishGradientRow(float *row, int64_t classes, const Bf16 *) {
  roundRowInPlace(row, classes);
}

/// The chunk's two gradient products, dh = dl W and dW (+)= dl^T h, from
/// its logit gradient dl in the workspace (finishGradientRow's rows).
void gradientProducts(const float *logitGrad, const float *hidden,
                      const float *weight, float *hiddenGrad,
                      float *weightGrad, int64_t rows, int64_t width,
                      int64_t classes, float beta) {
  gemm(logitGrad, weight, hiddenGrad, rows, width, classes, false, false,
       0.0f);
  gemm(logitGrad, hidden, weightGrad, classes, width, rows, true, false, beta);
}
void gradientProducts(const float *logitGrad, const Bf16 *hidden,
                      const Bf16 *weight, float *hiddenGrad,
                      float *weightGrad, int64_t rows, int64_t width,
                      int64_t classes, float beta) {
  const Bf16 *rounded = reinterpret_cast<const Bf16 *>(logitGrad);
  gemm(rounded, weight, hiddenGrad, rows, width, classes, false, false, 0.0f,
       2 * classes);
  gemm(rounded, hidden, weightGrad, classes, width, rows, true, false, beta,
       2 * classes);
}

template <typename T>
void outputLossOf(const T *hidden, const T *weight, const int32_t *targets,
                  float lossGrad, float *loss, int32_t *tokens,
                  float *hiddenGrad, float *weightGrad, float *workspace,
                  int64_t rows, int64_t width, int64_t classes,
                  int64_t chunkRows, float smoothing, int32_t ignoreIndex) {
  int32_t count = countTokens(targets, rows, ignoreIndex);
  float rowWeight = count > 0 ? static_cast<float>(
                                    static_cast<double>(lossGrad) / count)
                              : 0.0f;
  // Per-thread partial sums added in thread order, chunk after chunk: the
  // loss does not change from run to run.
  int threads = omp_get_max_threads();
  struct OutputLossPartials;
  std::vector<double> &partial = reusedBuffer<OutputLossPartials>(threads, 0.0);
  double total = 0.0;
  for (int64_t r0 = 0; r0 < rows; r0 += chunkRows) {
    int64_t n = std::min(chunkRows, rows - r0);
    gemm(hidden + r0 * width, weight, workspace, n, classes, width, false,
         true, 0.0f);
    std::fill(partial.begin(), partial.end(), 0.0);
#pragma omp parallel num_threads(threads) if (n * classes >= kParallelLossElements)
    {
      double sum = 0.0;
#pragma omp for schedule(static)
      for (int64_t r = 0; r < n; ++r) {
        float *x = workspace + r * classes;
        int32_t target = targets[r0 + r];
        if (target == ignoreIndex) {
          std::fill(x, x + classes, 0.0f); // zeros in bf16 too
        } else {
          sum += lossAndGradRow(x, target, classes, smoothing, rowWeight);
          finishGradientRow(x, classes, weight);
        }
      }
      partial[omp_get_thread_num()] = sum;
    }
    for (double p : partial)
      total += p;
    gradientProducts(workspace, hidden + r0 * width, weight,
                     hiddenGrad + r0 * width, weightGrad, n, width, classes,
                     r0 == 0 ? 0.0f : 1.0f);
  }
  *tokens = count;
  *loss = count > 0 ? static_cast<float>(total / count) : 0.0f;
}

} // namespace

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

} // namespace tgc::cpu
