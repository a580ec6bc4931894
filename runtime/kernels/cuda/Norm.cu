//===- Norm.cu - softmax, LayerNorm, RMSNorm and their residual fusion ===//
//
// The launches of NormKernels.cuh's kernels (which says how they work):
// warp or block rows by width, the residual norms by quads where the
// tensors allow, and the gamma and beta column sums.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cuda/NormKernels.cuh"

#include <algorithm>
#include <cstdint>
#include <initializer_list>

namespace tgc::cuda {

void softmax(const float *input, float *out, int64_t rows, int64_t width) {
  if (rows * width == 0)
    return;
  softmaxKernel<<<rowBlocks(rows), kThreads, 0, stream()>>>(input, out, rows,
                                                             width);
  TGC_CUDA_CHECK_LAUNCH();
}

void softmaxGrad(const float *output, const float *grad, float *out,
                 int64_t rows, int64_t width) {
  if (rows * width == 0)
    return;
  softmaxGradKernel<<<rowBlocks(rows), kThreads, 0, stream()>>>(
      output, grad, out, rows, width);
  TGC_CUDA_CHECK_LAUNCH();
}

/// Launches kernel<WarpRows, centred> or kernel<BlockRows, centred> for rows
/// of `width`.
#define TGC_LAUNCH_ROWS(kernel, centred, rows, width, ...)                     \
  do {                                                                         \
    if ((width) <= kWarpRowWidth)                                              \
      kernel<WarpRows, centred>                                                \
          <<<warpRowBlocks(rows), kThreads, 0, stream()>>>(__VA_ARGS__);       \
    else                                                                       \
      kernel<BlockRows, centred>                                               \
          <<<rowBlocks(rows), kThreads, 0, stream()>>>(__VA_ARGS__);           \
    TGC_CUDA_CHECK_LAUNCH();                                                   \
  } while (0)

void layerNorm(const float *input, const float *gamma, const float *beta,
               float *out, float *mean, float *rstd, int64_t rows,
               int64_t width, float epsilon) {
  if (rows * width == 0)
    return;
  TGC_LAUNCH_ROWS(normKernel, true, rows, width, input, gamma, beta, out, mean,
                  rstd, rows, width, epsilon);
}

void rmsNorm(const float *input, const float *gamma, float *out, float *rstd,
             int64_t rows, int64_t width, float epsilon) {
  if (rows * width == 0)
    return;
  TGC_LAUNCH_ROWS(normKernel, false, rows, width, input, gamma, nullptr, out,
                  nullptr, rstd, rows, width, epsilon);
}

/// gammaGrad and betaGrad (null for RMSNorm) from `chunks` partials, each
/// 2 x width (the sums of dy xhat, then of dy).
static void finishColumnSums(const double *partial, int64_t chunks,
                             int64_t width, float *gammaGrad,
                             float *betaGrad) {
  auto blocks =
      static_cast<unsigned>((width + kNormColumns - 1) / kNormColumns);
  finishColumns<<<blocks, dim3(kNormColumns, kNormSlices), 0, stream()>>>(
      partial, chunks, width, gammaGrad, betaGrad);
  TGC_CUDA_CHECK_LAUNCH();
}

/// gammaGrad and betaGrad (null for RMSNorm) from the normalized rows.
template <typename Xhat>
static void columnSums(const float *grad, Xhat xhatOf, int64_t rows,
                       int64_t width, float *gammaGrad, float *betaGrad) {
  const int64_t chunkRows =
      std::max(kChunkRows, (rows + kMaxChunks - 1) / kMaxChunks);
  int64_t chunks = std::max<int64_t>(1, (rows + chunkRows - 1) / chunkRows);
  Scratch partial(2 * chunks * width * sizeof(double));
  if (partial.failed())
    return; // no scratch: the error is kept (firstError), nothing runs
  dim3 grid(static_cast<unsigned>((width + kNormColumns - 1) / kNormColumns),
            static_cast<unsigned>(chunks));
  columnPartials<Xhat><<<grid, dim3(kNormColumns, kNormSlices), 0, stream()>>>(
      grad, xhatOf, rows, width, chunkRows, partial.as<double>());
  TGC_CUDA_CHECK_LAUNCH();
  finishColumnSums(partial.as<double>(), chunks, width, gammaGrad, betaGrad);
}

template <bool kCentred>
static void normGrad(const float *grad, const float *input, const float *gamma,
                     float *inputGrad, float *gammaGrad, float *betaGrad,
                     int64_t rows, int64_t width, float epsilon) {
  if (width == 0)
    return;
  Scratch statistics(2 * rows * sizeof(float));
  if (statistics.failed())
    return; // no scratch: the error is kept (firstError), nothing runs
  float *mean = statistics.as<float>(), *rstd = mean + rows;
  if (rows > 0)
    TGC_LAUNCH_ROWS(normGradKernel, kCentred, rows, width, grad, input, gamma,
                    inputGrad, mean, rstd, rows, width, epsilon);
  columnSums(grad, NormalizedInput{input, mean, rstd}, rows, width,
             gammaGrad, betaGrad);
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

/// Whether the residual norm's rows can go by quads: a width that is a
/// multiple of 4 up to kWarpRowWidth, 16-byte aligned tensors (null ones
/// are absent), and a dropout index offset that keeps every quad in one
/// Philox block.
static bool byQuads(int64_t width, const Dropout &dropout,
             std::initializer_list<const void *> tensors) {
  if (width % 4 != 0 || width > kWarpRowWidth || dropout.indexOffset % 4 != 0)
    return false;
  return std::all_of(tensors.begin(), tensors.end(), [](const void *t) {
    return reinterpret_cast<uintptr_t>(t) % 16 == 0;
  });
}

template <bool kCentred>
static void residualNorm(const float *residual, const float *sublayer,
                         const float *gamma, const float *beta, float *out,
                         float *mean, float *rstd, int64_t rows, int64_t width,
                         const Dropout &dropout, float epsilon, Bf16 *rounded,
                         float *sum) {
  if (rows * width == 0)
    return;
  if (byQuads(width, dropout, {residual, sublayer, gamma, beta, out, sum})) {
    withQuadsPerLane(width, [&](auto perLane) {
      residualNormQuadKernel<decltype(perLane)::value, kCentred>
          <<<warpRowBlocks(rows), kThreads, 0, stream()>>>(
              residual, sublayer, gamma, beta, out, mean, rstd, rows, width,
              dropout, epsilon, rounded, sum);
    });
    TGC_CUDA_CHECK_LAUNCH();
    return;
  }
  TGC_LAUNCH_ROWS(residualNormKernel, kCentred, rows, width, residual,
                  sublayer, gamma, beta, out, mean, rstd, rows, width, dropout,
                  epsilon, rounded, sum);
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
  if (width == 0)
    return;
  NormalizedOutput xhatOf{out, gamma, beta};
  if (rows > 0 && byQuads(width, dropout,
                          {grad, out, gamma, beta, residualGrad, sublayerGrad,
                           sumGrad})) {
    // The column sums ride along: dy and xhat are read once.
    const unsigned blocks = std::min(warpRowBlocks(rows), kColumnSumBlocks);
    Scratch partial(2 * blocks * width * sizeof(double));
    if (partial.failed())
      return; // no scratch: the error is recorded (firstError), not a crash
    withQuadsPerLane(width, [&](auto perLane) {
      residualNormGradQuadKernel<decltype(perLane)::value, kCentred>
          <<<blocks, kThreads, 0, stream()>>>(
              grad, out, gamma, beta, rstd, residualGrad, sublayerGrad, rows,
              width, dropout, sublayerRounded, sumGrad, partial.as<double>());
    });
    TGC_CUDA_CHECK_LAUNCH();
    finishColumnSums(partial.as<double>(), blocks, width, gammaGrad, betaGrad);
    return;
  }
  if (rows > 0) {
    TGC_LAUNCH_ROWS(residualNormGradKernel, kCentred, rows, width, grad,
                    xhatOf, rstd, residualGrad, sublayerGrad, rows, width,
                    dropout, sublayerRounded, sumGrad);
  }
  columnSums(grad, xhatOf, rows, width, gammaGrad, betaGrad);
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

} // namespace tgc::cuda
