//===- NormKernels.cu - softmax, LayerNorm and its residual fusion ---===//
//
// One block per row (rows are at most a few thousand wide), statistics
// reduced across the block in float as the CPU kernels do. The gamma and
// beta gradients sum over every row: a second kernel sums chunks of rows
// per column into double partials, a third adds the partials in chunk
// order (deterministic, unlike atomics).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cuda/BlockReduce.cuh"
#include "runtime/kernels/cuda/Device.h"

namespace tgc::cuda {

__global__ void softmaxKernel(const float *input, float *out, int64_t rows,
                              int64_t width) {
  TGC_FOR_ROW(r, rows) {
    const float *x = input + r * width;
    float *y = out + r * width;
    float max = -INFINITY;
    TGC_FOR_COLUMN(c, width) { max = fmaxf(max, x[c]); }
    max = blockMax(max);
    float sum = 0.0f;
    TGC_FOR_COLUMN(c, width) {
      y[c] = expf(x[c] - max);
      sum += y[c];
    }
    float inverse = 1.0f / blockSum(sum);
    TGC_FOR_COLUMN(c, width) { y[c] *= inverse; }
  }
}

void softmax(const float *input, float *out, int64_t rows, int64_t width) {
  if (rows * width == 0)
    return;
  softmaxKernel<<<rowBlocks(rows), kThreads, 0, stream()>>>(input, out, rows,
                                                             width);
  TGC_CUDA_CHECK_LAUNCH();
}

__global__ void softmaxGradKernel(const float *output, const float *grad,
                                  float *out, int64_t rows, int64_t width) {
  TGC_FOR_ROW(r, rows) {
    const float *y = output + r * width, *dy = grad + r * width;
    float dot = 0.0f;
    TGC_FOR_COLUMN(c, width) { dot += dy[c] * y[c]; }
    dot = blockSum(dot);
    TGC_FOR_COLUMN(c, width) { out[r * width + c] = y[c] * (dy[c] - dot); }
  }
}

void softmaxGrad(const float *output, const float *grad, float *out,
                 int64_t rows, int64_t width) {
  if (rows * width == 0)
    return;
  softmaxGradKernel<<<rowBlocks(rows), kThreads, 0, stream()>>>(
      output, grad, out, rows, width);
  TGC_CUDA_CHECK_LAUNCH();
}

/// residual + dropout(sublayer) as the CPU rounds it (product, then sum:
/// no fused multiply-add), so that h is the same in every kernel.
__device__ float residualSum(float residual, float sublayer, float factor) {
  return __fadd_rn(residual, __fmul_rn(sublayer, factor));
}

/// Mean and 1/sqrt(biased variance + epsilon) of one row, two passes as
/// the reference (no cancellation in the variance). The whole block calls.
__device__ void rowStatistics(const float *x, int64_t width, float epsilon,
                              float &mean, float &rstd) {
  float sum = 0.0f;
  TGC_FOR_COLUMN(c, width) { sum += x[c]; }
  float m = blockSum(sum) / static_cast<float>(width);
  float squares = 0.0f;
  TGC_FOR_COLUMN(c, width) { squares += (x[c] - m) * (x[c] - m); }
  squares = blockSum(squares);
  mean = m;
  rstd = 1.0f / sqrtf(squares / static_cast<float>(width) + epsilon);
}

__global__ void layerNormKernel(const float *input, const float *gamma,
                                const float *beta, float *out, float *mean,
                                float *rstd, int64_t rows, int64_t width,
                                float epsilon) {
  TGC_FOR_ROW(r, rows) {
    const float *x = input + r * width;
    float m, s;
    rowStatistics(x, width, epsilon, m, s);
    TGC_FOR_COLUMN(c, width) {
      out[r * width + c] = gamma[c] * ((x[c] - m) * s) + beta[c];
    }
    if (threadIdx.x == 0 && mean)
      mean[r] = m;
    if (threadIdx.x == 0 && rstd)
      rstd[r] = s;
  }
}

void layerNorm(const float *input, const float *gamma, const float *beta,
               float *out, float *mean, float *rstd, int64_t rows,
               int64_t width, float epsilon) {
  if (rows * width == 0)
    return;
  layerNormKernel<<<rowBlocks(rows), kThreads, 0, stream()>>>(
      input, gamma, beta, out, mean, rstd, rows, width, epsilon);
  TGC_CUDA_CHECK_LAUNCH();
}

namespace {
/// The normalized rows xhat of a LayerNorm's backward: from its input and
/// statistics...
struct NormalizedInput {
  const float *input, *mean, *rstd;
  __device__ float operator()(int64_t r, int64_t c, int64_t width) const {
    return (input[r * width + c] - mean[r]) * rstd[r];
  }
};
/// ...or from its output: (out - beta) / gamma.
struct NormalizedOutput {
  const float *out, *gamma, *beta;
  __device__ float operator()(int64_t r, int64_t c, int64_t width) const {
    return (out[r * width + c] - beta[c]) / gamma[c];
  }
};

/// Rows per chunk of the column sums, and the block: 32 columns x 8 row
/// slices.
constexpr int64_t kChunkRows = 64;
constexpr int kColumns = 32, kSlices = 8;
} // namespace

/// partial[chunk][0][c] = sum of dy xhat and partial[chunk][1][c] = sum of
/// dy over the chunk's rows.
template <typename Xhat>
__global__ void columnPartials(const float *grad, Xhat xhatOf, int64_t rows,
                               int64_t width, double *partial) {
  __shared__ double sums[2][kSlices][kColumns + 1];
  int64_t c = blockIdx.x * int64_t(kColumns) + threadIdx.x;
  int64_t first = blockIdx.y * kChunkRows;
  int64_t last = min(rows, first + kChunkRows);
  double gammaSum = 0.0, betaSum = 0.0;
  if (c < width)
    for (int64_t r = first + threadIdx.y; r < last; r += kSlices) {
      float dy = grad[r * width + c];
      float xhat = xhatOf(r, c, width);
      gammaSum += static_cast<double>(dy) * xhat;
      betaSum += dy;
    }
  sums[0][threadIdx.y][threadIdx.x] = gammaSum;
  sums[1][threadIdx.y][threadIdx.x] = betaSum;
  __syncthreads();
  if (threadIdx.y != 0 || c >= width)
    return;
  for (int y = 1; y < kSlices; ++y) {
    gammaSum += sums[0][y][threadIdx.x];
    betaSum += sums[1][y][threadIdx.x];
  }
  double *chunk = partial + 2 * blockIdx.y * width;
  chunk[c] = gammaSum;
  chunk[width + c] = betaSum;
}

__global__ void finishColumns(const double *partial, int64_t chunks,
                              int64_t width, float *gammaGrad,
                              float *betaGrad) {
  TGC_GRID_STRIDE(c, width) {
    double gamma = 0.0, beta = 0.0;
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      gamma += partial[2 * chunk * width + c];
      beta += partial[(2 * chunk + 1) * width + c];
    }
    gammaGrad[c] = static_cast<float>(gamma);
    betaGrad[c] = static_cast<float>(beta);
  }
}

/// gammaGrad and betaGrad from the normalized rows.
template <typename Xhat>
static void columnSums(const float *grad, Xhat xhatOf, int64_t rows,
                       int64_t width, float *gammaGrad, float *betaGrad) {
  int64_t chunks = std::max<int64_t>(1, (rows + kChunkRows - 1) / kChunkRows);
  Scratch partial(2 * chunks * width * sizeof(double));
  dim3 grid(static_cast<unsigned>((width + kColumns - 1) / kColumns),
            static_cast<unsigned>(chunks));
  columnPartials<Xhat><<<grid, dim3(kColumns, kSlices), 0, stream()>>>(
      grad, xhatOf, rows, width, partial.as<double>());
  TGC_CUDA_CHECK_LAUNCH();
  finishColumns<<<blocksFor(width), kThreads, 0, stream()>>>(
      partial.as<double>(), chunks, width, gammaGrad, betaGrad);
  TGC_CUDA_CHECK_LAUNCH();
}

/// dh = rstd (g - mean(g) - xhat mean(g xhat)) for one row, g = dy gamma;
/// xhat(c) gives the normalized row's values. Writes dh[c] through
/// put(c, dh).
template <typename H, typename Put>
__device__ void normalizeGradRow(const float *dy, H xhat, const float *gamma,
                                 float rstd, int64_t width, Put put) {
  float sumG = 0.0f, sumGX = 0.0f;
  TGC_FOR_COLUMN(c, width) {
    float g = dy[c] * gamma[c];
    sumG += g;
    sumGX += g * xhat(c);
  }
  float meanG = blockSum(sumG) / static_cast<float>(width);
  float meanGX = blockSum(sumGX) / static_cast<float>(width);
  TGC_FOR_COLUMN(c, width) {
    put(c, rstd * (dy[c] * gamma[c] - meanG - xhat(c) * meanGX));
  }
}

/// inputGrad rows; each row's statistics also go to mean/rstd for the
/// column sums.
__global__ void layerNormGradKernel(const float *grad, const float *input,
                                    const float *gamma, float *inputGrad,
                                    float *mean, float *rstd, int64_t rows,
                                    int64_t width, float epsilon) {
  TGC_FOR_ROW(r, rows) {
    const float *x = input + r * width;
    float m, s;
    rowStatistics(x, width, epsilon, m, s);
    if (threadIdx.x == 0) {
      mean[r] = m;
      rstd[r] = s;
    }
    float *dx = inputGrad + r * width;
    normalizeGradRow(
        grad + r * width, [=](int64_t c) { return (x[c] - m) * s; }, gamma, s,
        width, [=](int64_t c, float d) { dx[c] = d; });
  }
}

void layerNormGrad(const float *grad, const float *input, const float *gamma,
                   float *inputGrad, float *gammaGrad, float *betaGrad,
                   int64_t rows, int64_t width, float epsilon) {
  if (width == 0)
    return;
  Scratch statistics(2 * rows * sizeof(float));
  float *mean = statistics.as<float>(), *rstd = mean + rows;
  if (rows > 0) {
    layerNormGradKernel<<<rowBlocks(rows), kThreads, 0, stream()>>>(
        grad, input, gamma, inputGrad, mean, rstd, rows, width, epsilon);
    TGC_CUDA_CHECK_LAUNCH();
  }
  columnSums(grad, NormalizedInput{input, mean, rstd}, rows, width,
             gammaGrad, betaGrad);
}

__global__ void residualLayerNormKernel(const float *residual,
                                        const float *sublayer,
                                        const float *gamma, const float *beta,
                                        float *out, float *mean, float *rstd,
                                        int64_t rows, int64_t width,
                                        Dropout dropout, float epsilon) {
  TGC_FOR_ROW(r, rows) {
    // The output row holds h, then the result (each thread rewrites only
    // its own columns).
    float *h = out + r * width;
    TGC_FOR_COLUMN(c, width) {
      int64_t i = r * width + c;
      h[c] = residualSum(residual[i], sublayer[i], dropout.factor(i));
    }
    float m, s;
    rowStatistics(h, width, epsilon, m, s);
    TGC_FOR_COLUMN(c, width) { h[c] = gamma[c] * ((h[c] - m) * s) + beta[c]; }
    if (threadIdx.x == 0) {
      mean[r] = m;
      rstd[r] = s;
    }
  }
}

void residualLayerNorm(const float *residual, const float *sublayer,
                       const float *gamma, const float *beta, float *out,
                       float *mean, float *rstd, int64_t rows, int64_t width,
                       const Dropout &dropout, float epsilon) {
  if (rows * width == 0)
    return;
  residualLayerNormKernel<<<rowBlocks(rows), kThreads, 0, stream()>>>(
      residual, sublayer, gamma, beta, out, mean, rstd, rows, width, dropout,
      epsilon);
  TGC_CUDA_CHECK_LAUNCH();
}

__global__ void residualLayerNormGradKernel(
    const float *grad, NormalizedOutput xhatOf, const float *rstd,
    float *residualGrad, float *sublayerGrad, int64_t rows, int64_t width,
    Dropout dropout) {
  TGC_FOR_ROW(r, rows) {
    float *dh = residualGrad + r * width, *dsub = sublayerGrad + r * width;
    normalizeGradRow(
        grad + r * width, [=](int64_t c) { return xhatOf(r, c, width); },
        xhatOf.gamma, rstd[r], width, [=](int64_t c, float d) {
          dh[c] = d;
          dsub[c] = d * dropout.factor(r * width + c);
        });
  }
}

void residualLayerNormGrad(const float *grad, const float *out,
                           const float *gamma, const float *beta,
                           const float *rstd, float *residualGrad,
                           float *sublayerGrad, float *gammaGrad,
                           float *betaGrad, int64_t rows, int64_t width,
                           const Dropout &dropout) {
  if (width == 0)
    return;
  NormalizedOutput xhatOf{out, gamma, beta};
  if (rows > 0) {
    residualLayerNormGradKernel<<<rowBlocks(rows), kThreads, 0, stream()>>>(
        grad, xhatOf, rstd, residualGrad, sublayerGrad, rows, width, dropout);
    TGC_CUDA_CHECK_LAUNCH();
  }
  columnSums(grad, xhatOf, rows, width, gammaGrad, betaGrad);
}

} // namespace tgc::cuda
