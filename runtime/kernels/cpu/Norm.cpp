//===- Norm.cpp - softmax, LayerNorm, RMSNorm and their residual fusion ===//
//
// One row per iteration, rows spread over OpenMP threads. Row statistics
// accumulate in float (rows are at most a few thousand wide); the gamma and
// beta gradients, sums over every row, accumulate in double.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cpu/Kernels.h"
#include "runtime/kernels/cpu/ReusedBuffer.h"
#include "runtime/kernels/cpu/VectorMath.h"

#include <algorithm>
#include <cmath>
#include <omp.h>
#include <vector>

namespace tgc::cpu {

/// Below this many elements a kernel stays serial.
static constexpr int64_t kParallelNormElements = 1 << 14;

void softmax(const float *input, float *out, int64_t rows, int64_t width) {
#pragma omp parallel for schedule(static) if (rows * width >= kParallelNormElements)
  for (int64_t r = 0; r < rows; ++r) {
    const float *x = input + r * width;
    float *y = out + r * width;
    float max = maxOf(x, width);
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int64_t c = 0; c < width; ++c) {
      y[c] = std::exp(x[c] - max);
      sum += y[c];
    }
    float inverse = 1.0f / sum;
    for (int64_t c = 0; c < width; ++c)
      y[c] *= inverse;
  }
}

void softmaxGrad(const float *output, const float *grad, float *out,
                 int64_t rows, int64_t width) {
#pragma omp parallel for schedule(static) if (rows * width >= kParallelNormElements)
  for (int64_t r = 0; r < rows; ++r) {
    const float *y = output + r * width, *dy = grad + r * width;
    float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
    for (int64_t c = 0; c < width; ++c)
      dot += dy[c] * y[c];
    float *o = out + r * width;
    for (int64_t c = 0; c < width; ++c)
      o[c] = y[c] * (dy[c] - dot);
  }
}

// LayerNorm centres each row on its mean and adds beta; RMSNorm divides it
// by its root mean square alone. The row steps below are templates on
// kCentred (LayerNorm) so that both kinds share them and RMSNorm's
// instances compute no mean and read no beta.

/// The mean (0 for RMSNorm) and 1/sqrt(mean squared deviation from it +
/// epsilon) of one row: two passes for LayerNorm, as the reference (no
/// cancellation in the variance).
template <bool kCentred>
static void rowStatistics(const float *x, int64_t width, float epsilon,
                          float &mean, float &rstd) {
  float m = 0.0f;
  if constexpr (kCentred) {
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (int64_t c = 0; c < width; ++c)
      sum += x[c];
    m = sum / static_cast<float>(width);
  }
  float squares = 0.0f;
#pragma omp simd reduction(+ : squares)
  for (int64_t c = 0; c < width; ++c)
    squares += (x[c] - m) * (x[c] - m);
  mean = m;
  rstd = 1.0f / std::sqrt(squares / static_cast<float>(width) + epsilon);
}

/// y = gamma (x - mean) rstd + beta (RMSNorm: gamma x rstd); y may be x.
template <bool kCentred>
static void normalizeRow(const float *x, const float *gamma,
                         const float *beta, float *y, int64_t width,
                         float mean, float rstd) {
  for (int64_t c = 0; c < width; ++c) {
    float v = gamma[c] * ((x[c] - mean) * rstd);
    if constexpr (kCentred)
      v += beta[c];
    y[c] = v;
  }
}

template <bool kCentred>
static void normRows(const float *input, const float *gamma,
                     const float *beta, float *out, float *mean, float *rstd,
                     int64_t rows, int64_t width, float epsilon) {
#pragma omp parallel for schedule(static) if (rows * width >= kParallelNormElements)
  for (int64_t r = 0; r < rows; ++r) {
    float m, s;
    rowStatistics<kCentred>(input + r * width, width, epsilon, m, s);
    normalizeRow<kCentred>(input + r * width, gamma, beta, out + r * width,
                           width, m, s);
    if (mean)
      mean[r] = m;
    if (rstd)
      rstd[r] = s;
  }
}

void layerNorm(const float *input, const float *gamma, const float *beta,
               float *out, float *mean, float *rstd, int64_t rows,
               int64_t width, float epsilon) {
  normRows<true>(input, gamma, beta, out, mean, rstd, rows, width, epsilon);
}

void rmsNorm(const float *input, const float *gamma, float *out, float *rstd,
             int64_t rows, int64_t width, float epsilon) {
  normRows<false>(input, gamma, nullptr, out, nullptr, rstd, rows, width,
                  epsilon);
}

/// One row of the norm's backward from its normalized row xhat (which dh
/// may alias): with g = dy * gamma,
///   dh = rstd (g - mean(g) - xhat mean(g xhat))   (RMSNorm: no mean(g))
/// and adds dy xhat (and for LayerNorm dy) to the row's gamma (and beta)
/// partial sums.
template <bool kCentred>
static void normalizeGradRow(const float *dy, const float *xhat,
                             const float *gamma, float rstd, float *dh,
                             double *gammaSum, double *betaSum,
                             int64_t width) {
  float sumG = 0.0f, sumGX = 0.0f;
#pragma omp simd reduction(+ : sumG, sumGX)
  for (int64_t c = 0; c < width; ++c) {
    float g = dy[c] * gamma[c];
    sumG += g;
    sumGX += g * xhat[c];
  }
  float meanG = kCentred ? sumG / static_cast<float>(width) : 0.0f;
  float meanGX = sumGX / static_cast<float>(width);
  for (int64_t c = 0; c < width; ++c) {
    float x = xhat[c];
    dh[c] = rstd * (dy[c] * gamma[c] - meanG - x * meanGX);
    gammaSum[c] += static_cast<double>(dy[c]) * x;
    if constexpr (kCentred)
      betaSum[c] += dy[c];
  }
}

/// Runs rowFn(r, gammaSum, betaSum) on every row in parallel, each thread
/// adding into its own double partial sums, then adds the partials in
/// thread order into gammaGrad and betaGrad (deterministic for a given
/// thread count, unlike atomics). An RMSNorm's betaGrad is null.
template <typename RowFn>
static void rowsWithColumnSums(int64_t rows, int64_t width, float *gammaGrad,
                               float *betaGrad, RowFn rowFn) {
  bool parallel = rows * width >= kParallelNormElements;
  int threads = parallel ? omp_get_max_threads() : 1;
  struct ThreadPartials;
  std::vector<double *> &partials =
      reusedBuffer<ThreadPartials, double *>(threads, nullptr);
#pragma omp parallel num_threads(threads) if (parallel)
  {
    // Each thread's partials in its own thread's buffer: adjacent in one
    // shared allocation, the kernel ran no faster on two threads than on
    // one (2048 x 256, warm caches: 370 against 192 us on two threads).
    struct ColumnPartials;
    double *gammaSum =
        reusedBuffer<ColumnPartials>(2 * static_cast<size_t>(width), 0.0)
            .data();
    double *betaSum = gammaSum + width;
    partials[omp_get_thread_num()] = gammaSum;
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r)
      rowFn(r, gammaSum, betaSum);
  }
  for (int64_t c = 0; c < width; ++c) {
    double gamma = 0.0, beta = 0.0;
    for (int t = 0; t < threads; ++t) {
      if (!partials[t]) // a team smaller than asked for
        continue;
      gamma += partials[t][c];
      beta += partials[t][width + c];
    }
    gammaGrad[c] = static_cast<float>(gamma);
    if (betaGrad)
      betaGrad[c] = static_cast<float>(beta);
  }
}

template <bool kCentred>
static void normGrad(const float *grad, const float *input, const float *gamma,
                     float *inputGrad, float *gammaGrad, float *betaGrad,
                     int64_t rows, int64_t width, float epsilon) {
  rowsWithColumnSums(
      rows, width, gammaGrad, betaGrad,
      [&](int64_t r, double *gammaSum, double *betaSum) {
        const float *x = input + r * width;
        float mean, rstd;
        rowStatistics<kCentred>(x, width, epsilon, mean, rstd);
        float *xhat = inputGrad + r * width; // until dh overwrites it
        for (int64_t c = 0; c < width; ++c)
          xhat[c] = (x[c] - mean) * rstd;
        normalizeGradRow<kCentred>(grad + r * width, xhat, gamma, rstd, xhat,
                                   gammaSum, betaSum, width);
      });
}

void layerNormGrad(const float *grad, const float *input, const float *gamma,
                   float *inputGrad, float *gammaGrad, float *betaGrad,
                   int64_t rows, int64_t width, float epsilon) {
  normGrad<true>(grad, input, gamma, inputGrad, gammaGrad, betaGrad, rows,
                 width, epsilon);
}

void rmsNormGrad(const float *grad, const float *input, const float *gamma,
                 float *inputGrad, float *gammaGrad, int64_t rows,
                 int64_t width, float epsilon) {
  normGrad<false>(grad, input, gamma, inputGrad, gammaGrad, nullptr, rows,
                  width, epsilon);
}

template <bool kCentred>
static void residualNorm(const float *residual, const float *sublayer,
                         const float *gamma, const float *beta, float *out,
                         float *mean, float *rstd, int64_t rows, int64_t width,
                         const Dropout &dropout, float epsilon, Bf16 *rounded,
                         float *sum) {
#pragma omp parallel for schedule(static) if (rows * width >= kParallelNormElements)
  for (int64_t r = 0; r < rows; ++r) {
    // The output row holds the factors, then h = residual + dropout(sub),
    // then the result: the inputs are read once.
    float *h = out + r * width;
    dropoutFactors(dropout, static_cast<uint64_t>(r * width), width, h);
    const float *x = residual + r * width, *s = sublayer + r * width;
    for (int64_t c = 0; c < width; ++c)
      h[c] = x[c] + s[c] * h[c];
    if (sum)
      std::copy_n(h, width, sum + r * width);
    float m, sd;
    rowStatistics<kCentred>(h, width, epsilon, m, sd);
    if (mean)
      mean[r] = m;
    rstd[r] = sd;
    normalizeRow<kCentred>(h, gamma, beta, h, width, m, sd);
    if (rounded) { // the row is still in L1
      Bf16 *b = rounded + r * width;
#pragma omp simd
      for (int64_t c = 0; c < width; ++c)
        b[c] = runtime::roundToBf16(h[c]);
    }
  }
}

void residualLayerNorm(const float *residual, const float *sublayer,
                       const float *gamma, const float *beta, float *out,
                       float *mean, float *rstd, int64_t rows, int64_t width,
                       const Dropout &dropout, float epsilon, Bf16 *rounded,
                       float *sum) {
  residualNorm<true>(residual, sublayer, gamma, beta, out, mean, rstd, rows,
                     width, dropout, epsilon, rounded, sum);
}

void residualRmsNorm(const float *residual, const float *sublayer,
                     const float *gamma, float *out, float *rstd, int64_t rows,
                     int64_t width, const Dropout &dropout, float epsilon,
                     Bf16 *rounded, float *sum) {
  residualNorm<false>(residual, sublayer, gamma, nullptr, out, nullptr, rstd,
                      rows, width, dropout, epsilon, rounded, sum);
}

template <bool kCentred>
static void residualNormGrad(const float *grad, const float *out,
                             const float *gamma, const float *beta,
                             const float *rstd, float *residualGrad,
                             float *sublayerGrad, float *gammaGrad,
                             float *betaGrad, int64_t rows, int64_t width,
                             const Dropout &dropout, Bf16 *sublayerRounded,
                             const float *sumGrad) {
  struct InverseGamma;
  std::vector<float> &inverseGamma = reusedBuffer<InverseGamma>(width, 0.0f);
  for (int64_t c = 0; c < width; ++c)
    inverseGamma[c] = 1.0f / gamma[c];
  const float *invGamma = inverseGamma.data();
  rowsWithColumnSums(
      rows, width, gammaGrad, betaGrad,
      [&](int64_t r, double *gammaSum, double *betaSum) {
        // The residual gradient's row holds xhat until dh overwrites it.
        float *xhat = residualGrad + r * width;
        const float *y = out + r * width;
#pragma omp simd
        for (int64_t c = 0; c < width; ++c) {
          float centred = y[c];
          if constexpr (kCentred)
            centred -= beta[c];
          xhat[c] = centred * invGamma[c];
        }
        normalizeGradRow<kCentred>(grad + r * width, xhat, gamma, rstd[r],
                                   xhat, gammaSum, betaSum, width);
        if (sumGrad) {
          const float *ds = sumGrad + r * width;
#pragma omp simd
          for (int64_t c = 0; c < width; ++c)
            xhat[c] += ds[c];
        }
        // Without sublayerGrad (nothing reads it but its rounding) the
        // row is computed in the thread's own scratch row.
        struct SublayerGradRow;
        float *factors = sublayerGrad
                             ? sublayerGrad + r * width
                             : reusedScratch<SublayerGradRow, float>(width);
        dropoutFactors(dropout, static_cast<uint64_t>(r * width), width,
                       factors);
        for (int64_t c = 0; c < width; ++c)
          factors[c] *= xhat[c];
        if (sublayerRounded) {
          Bf16 *b = sublayerRounded + r * width;
#pragma omp simd
          for (int64_t c = 0; c < width; ++c)
            b[c] = runtime::roundToBf16(factors[c]);
        }
      });
}

void residualLayerNormGrad(const float *grad, const float *out,
                           const float *gamma, const float *beta,
                           const float *rstd, float *residualGrad,
                           float *sublayerGrad, float *gammaGrad,
                           float *betaGrad, int64_t rows, int64_t width,
                           const Dropout &dropout, Bf16 *sublayerRounded,
                           const float *sumGrad) {
  residualNormGrad<true>(grad, out, gamma, beta, rstd, residualGrad,
                         sublayerGrad, gammaGrad, betaGrad, rows, width,
                         dropout, sublayerRounded, sumGrad);
}

void residualRmsNormGrad(const float *grad, const float *out,
                         const float *gamma, const float *rstd,
                         float *residualGrad, float *sublayerGrad,
                         float *gammaGrad, int64_t rows, int64_t width,
                         const Dropout &dropout, Bf16 *sublayerRounded,
                         const float *sumGrad) {
  residualNormGrad<false>(grad, out, gamma, nullptr, rstd, residualGrad,
                          sublayerGrad, gammaGrad, nullptr, rows, width,
                          dropout, sublayerRounded, sumGrad);
}

} // namespace tgc::cpu
