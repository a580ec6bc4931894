//===- NormKernels.cuh - softmax and the norms' kernels --------*- CUDA -*-===//
//
// Softmax: one block per row. The norms: one warp per row where rows are at
// most kWarpRowWidth wide (a model's d: a block per 512-wide row spent its
// time in the block reductions' barriers), else one block per row. The
// residual norms and their gradients, a training step's most frequent row
// kernels, go four adjacent columns a lane where the tensors allow (the
// quad kernels): 16-byte loads and stores, the row in registers (each input
// read once), and one Philox block for the four dropout factors (factor()
// per element computes all four and keeps one: those kernels were bound by
// it). LayerNorm and RMSNorm share every kernel, templates on kCentred:
// LayerNorm centres each row on its mean and adds beta, RMSNorm divides it
// by its root mean square alone (no mean, no beta).
// Statistics are reduced in float as the CPU kernels do. The gamma and
// beta gradients sum over every row: the residual norms' quad kernels add
// them up as they go (each warp's rows in f32 in its registers, the
// block's warps in double, one partial a block), the others leave it to a
// second kernel that sums chunks of rows per column into double partials;
// a last kernel adds the partials in order (deterministic, unlike
// atomics).
//
// Internal to TgcCudaKernels: Norm.cu launches these kernels (and is the
// one CUDA source that includes this header); NormEmulatedTest.cpp runs
// them on the host, a warp's 32 lanes emulated.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CUDA_NORMKERNELS_CUH
#define TGC_RUNTIME_CUDA_NORMKERNELS_CUH

#include "runtime/kernels/cuda/BlockReduce.cuh"
#include "runtime/kernels/cuda/Device.h"

#include <cstdint>
#include <type_traits>

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

/// residual + dropout(sublayer), the product and the sum rounded apart (no
/// fused multiply-add), so that h is the same in every CUDA kernel that
/// computes it. (The CPU kernel's compiler may contract the two into one
/// FMA, GCC's default: the targets' h can differ by an ulp.)
__device__ float residualSum(float residual, float sublayer, float factor) {
  return __fadd_rn(residual, __fmul_rn(sublayer, factor));
}

/// The threads that share a row of the LayerNorm kernels: a warp...
struct WarpRows {
  __device__ static int64_t firstRow() {
    return (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) / 32;
  }
  __device__ static int64_t rowStep() {
    return int64_t(gridDim.x) * (blockDim.x / 32);
  }
  __device__ static int firstColumn() { return threadIdx.x % 32; }
  __device__ static int columnStep() { return 32; }
  __device__ static bool leader() { return threadIdx.x % 32 == 0; }
  __device__ static float sum(float value) {
    return warpReduce(value, SumOp{});
  }
};
/// ...or the block.
struct BlockRows {
  __device__ static int64_t firstRow() { return blockIdx.x; }
  __device__ static int64_t rowStep() { return gridDim.x; }
  __device__ static int firstColumn() { return threadIdx.x; }
  __device__ static int columnStep() { return blockDim.x; }
  __device__ static bool leader() { return threadIdx.x == 0; }
  __device__ static float sum(float value) { return blockSum(value); }
};
/// Rows this wide or narrower get a warp each.
constexpr int64_t kWarpRowWidth = 1024;

#define TGC_FOR_ROW_OF(Rows, r, rows)                                          \
  for (int64_t r = Rows::firstRow(); r < (rows); r += Rows::rowStep())
#define TGC_FOR_COLUMN_OF(Rows, c, width)                                      \
  for (int64_t c = Rows::firstColumn(); c < (width); c += Rows::columnStep())

/// Blocks for `rows` rows a warp each.
inline unsigned warpRowBlocks(int64_t rows) {
  return rowBlocks((rows + kThreads / 32 - 1) / (kThreads / 32));
}

/// The mean (0 for RMSNorm) and 1/sqrt(mean squared deviation from it +
/// epsilon) of one row, two passes for LayerNorm as the reference (no
/// cancellation in the variance). The row's threads call.
template <typename Rows, bool kCentred>
__device__ void rowStatistics(const float *x, int64_t width, float epsilon,
                              float &mean, float &rstd) {
  float m = 0.0f;
  if constexpr (kCentred) {
    float sum = 0.0f;
    TGC_FOR_COLUMN_OF(Rows, c, width) { sum += x[c]; }
    m = Rows::sum(sum) / static_cast<float>(width);
  }
  float squares = 0.0f;
  TGC_FOR_COLUMN_OF(Rows, c, width) { squares += (x[c] - m) * (x[c] - m); }
  squares = Rows::sum(squares);
  mean = m;
  rstd = 1.0f / sqrtf(squares / static_cast<float>(width) + epsilon);
}

/// gamma (x - mean) rstd + beta (RMSNorm: gamma x rstd) at column c.
template <bool kCentred>
__device__ float normalized(float x, const float *gamma, const float *beta,
                            int64_t c, float mean, float rstd) {
  float y = gamma[c] * ((x - mean) * rstd);
  if constexpr (kCentred)
    y += beta[c];
  return y;
}

template <typename Rows, bool kCentred>
__global__ void normKernel(const float *input, const float *gamma,
                           const float *beta, float *out, float *mean,
                           float *rstd, int64_t rows, int64_t width,
                           float epsilon) {
  TGC_FOR_ROW_OF(Rows, r, rows) {
    const float *x = input + r * width;
    float m, s;
    rowStatistics<Rows, kCentred>(x, width, epsilon, m, s);
    TGC_FOR_COLUMN_OF(Rows, c, width) {
      out[r * width + c] = normalized<kCentred>(x[c], gamma, beta, c, m, s);
    }
    if (Rows::leader() && mean)
      mean[r] = m;
    if (Rows::leader() && rstd)
      rstd[r] = s;
  }
}

namespace {
/// The normalized rows xhat of a norm's backward: from its input and
/// statistics (an RMSNorm's mean is 0)...
struct NormalizedInput {
  const float *input, *mean, *rstd;
  __device__ float operator()(int64_t r, int64_t c, int64_t width) const {
    return (input[r * width + c] - mean[r]) * rstd[r];
  }
};
/// ...or from its output: (out - beta) / gamma, out / gamma without beta
/// (RMSNorm).
struct NormalizedOutput {
  const float *out, *gamma, *beta;
  __device__ float operator()(int64_t r, int64_t c, int64_t width) const {
    return (out[r * width + c] - (beta ? beta[c] : 0.0f)) / gamma[c];
  }
};

/// Rows per chunk of the column sums (more where the chunks would outnumber
/// a grid's 65535 blocks along y: above 4 million rows), and the block: 32
/// columns x 8 row slices.
constexpr int64_t kChunkRows = 64;
constexpr int64_t kMaxChunks = 65535;
constexpr int kNormColumns = 32, kNormSlices = 8;
} // namespace

/// partial[chunk][0][c] = sum of dy xhat and partial[chunk][1][c] = sum of
/// dy over the chunk's `chunkRows` rows.
template <typename Xhat>
__global__ void columnPartials(const float *grad, Xhat xhatOf, int64_t rows,
                               int64_t width, int64_t chunkRows,
                               double *partial) {
  __shared__ double sums[2][kNormSlices][kNormColumns + 1];
  int64_t c = blockIdx.x * int64_t(kNormColumns) + threadIdx.x;
  int64_t first = blockIdx.y * chunkRows;
  int64_t last = min(rows, first + chunkRows);
  double gammaSum = 0.0, betaSum = 0.0;
  if (c < width)
    for (int64_t r = first + threadIdx.y; r < last; r += kNormSlices) {
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
  for (int y = 1; y < kNormSlices; ++y) {
    gammaSum += sums[0][y][threadIdx.x];
    betaSum += sums[1][y][threadIdx.x];
  }
  double *chunk = partial + 2 * blockIdx.y * width;
  chunk[c] = gammaSum;
  chunk[width + c] = betaSum;
}

/// The chunks' partial sums, blocked as columnPartials is (kNormColumns columns
/// by kNormSlices interleaved slices of the chunks, combined in slice order): a
/// base batch has 384 chunks, which one thread per column summed in 160 us.
/// An RMSNorm's betaGrad is null.
__global__ void finishColumns(const double *partial, int64_t chunks,
                              int64_t width, float *gammaGrad,
                              float *betaGrad) {
  __shared__ double sums[2][kNormSlices][kNormColumns + 1];
  int64_t c = blockIdx.x * int64_t(kNormColumns) + threadIdx.x;
  double gamma = 0.0, beta = 0.0;
  if (c < width)
    for (int64_t chunk = threadIdx.y; chunk < chunks; chunk += kNormSlices) {
      gamma += partial[2 * chunk * width + c];
      beta += partial[(2 * chunk + 1) * width + c];
    }
  sums[0][threadIdx.y][threadIdx.x] = gamma;
  sums[1][threadIdx.y][threadIdx.x] = beta;
  __syncthreads();
  if (threadIdx.y != 0 || c >= width)
    return;
  for (int y = 1; y < kNormSlices; ++y) {
    gamma += sums[0][y][threadIdx.x];
    beta += sums[1][y][threadIdx.x];
  }
  gammaGrad[c] = static_cast<float>(gamma);
  if (betaGrad)
    betaGrad[c] = static_cast<float>(beta);
}

/// dh = rstd (g - mean(g) - xhat mean(g xhat)) for one row, g = dy gamma
/// (RMSNorm: without mean(g)); xhat(c) gives the normalized row's values.
/// Writes dh[c] through put(c, dh).
template <typename Rows, bool kCentred, typename H, typename Put>
__device__ void normalizeGradRow(const float *dy, H xhat, const float *gamma,
                                 float rstd, int64_t width, Put put) {
  float sumG = 0.0f, sumGX = 0.0f;
  TGC_FOR_COLUMN_OF(Rows, c, width) {
    float g = dy[c] * gamma[c];
    sumG += g;
    sumGX += g * xhat(c);
  }
  float meanG = 0.0f;
  if constexpr (kCentred)
    meanG = Rows::sum(sumG) / static_cast<float>(width);
  float meanGX = Rows::sum(sumGX) / static_cast<float>(width);
  TGC_FOR_COLUMN_OF(Rows, c, width) {
    put(c, rstd * (dy[c] * gamma[c] - meanG - xhat(c) * meanGX));
  }
}

/// inputGrad rows; each row's statistics also go to mean/rstd for the
/// column sums.
template <typename Rows, bool kCentred>
__global__ void normGradKernel(const float *grad, const float *input,
                               const float *gamma, float *inputGrad,
                               float *mean, float *rstd, int64_t rows,
                               int64_t width, float epsilon) {
  TGC_FOR_ROW_OF(Rows, r, rows) {
    const float *x = input + r * width;
    float m, s;
    rowStatistics<Rows, kCentred>(x, width, epsilon, m, s);
    if (Rows::leader()) {
      mean[r] = m;
      rstd[r] = s;
    }
    float *dx = inputGrad + r * width;
    normalizeGradRow<Rows, kCentred>(
        grad + r * width, [=](int64_t c) { return (x[c] - m) * s; }, gamma, s,
        width, [=](int64_t c, float d) { dx[c] = d; });
  }
}

/// Four adjacent values of a row, as a quad kernel loads and stores them.
struct Quad {
  float v[4];
};
__device__ inline Quad loadQuad(const float *p, int64_t quad) {
  float4 x = reinterpret_cast<const float4 *>(p)[quad];
  return {{x.x, x.y, x.z, x.w}};
}
__device__ inline void storeQuad(float *p, int64_t quad, const Quad &x) {
  reinterpret_cast<float4 *>(p)[quad] =
      make_float4(x.v[0], x.v[1], x.v[2], x.v[3]);
}

/// Lane l of a warp's row takes quads l, l + 32, ... (of `quads`), each in
/// its own registers (a loop of fixed trip count, unrolled).
#define TGC_FOR_LANE_QUAD(g, q, perLane, quads)                                \
  _Pragma("unroll") for (int g = 0; g < (perLane); ++g)                        \
    if (const int64_t q = threadIdx.x % 32 + 32 * int64_t(g); q < (quads))

/// residualNormKernel<WarpRows> by quads, h in registers.
template <int kQuads, bool kCentred>
__global__ void residualNormQuadKernel(
    const float *residual, const float *sublayer, const float *gamma,
    const float *beta, float *out, float *mean, float *rstd, int64_t rows,
    int64_t width, Dropout dropout, float epsilon, Bf16 *rounded, float *sum) {
  const int64_t quads = width / 4;
  TGC_FOR_ROW_OF(WarpRows, r, rows) {
    Quad h[kQuads] = {}; // zeros only for the host compiler's warnings
    float total = 0.0f;
    TGC_FOR_LANE_QUAD(g, q, kQuads, quads) {
      const int64_t i = r * quads + q;
      const Quad a = loadQuad(residual, i), b = loadQuad(sublayer, i);
      float f[4];
      dropout.factors4(4 * i, f);
      for (int k = 0; k < 4; ++k) {
        h[g].v[k] = residualSum(a.v[k], b.v[k], f[k]);
        total += h[g].v[k];
      }
      if (sum)
        storeQuad(sum, i, h[g]);
    }
    float m = 0.0f;
    if constexpr (kCentred)
      m = WarpRows::sum(total) / static_cast<float>(width);
    float squares = 0.0f;
    TGC_FOR_LANE_QUAD(g, q, kQuads, quads) {
      for (int k = 0; k < 4; ++k)
        squares += (h[g].v[k] - m) * (h[g].v[k] - m);
    }
    squares = WarpRows::sum(squares);
    const float s = 1.0f / sqrtf(squares / static_cast<float>(width) + epsilon);
    TGC_FOR_LANE_QUAD(g, q, kQuads, quads) {
      const Quad gm = loadQuad(gamma, q);
      Quad y;
      for (int k = 0; k < 4; ++k)
        y.v[k] = gm.v[k] * ((h[g].v[k] - m) * s);
      if constexpr (kCentred) {
        const Quad bt = loadQuad(beta, q);
        for (int k = 0; k < 4; ++k)
          y.v[k] += bt.v[k];
      }
      storeQuad(out, r * quads + q, y);
      if (rounded)
        for (int k = 0; k < 4; ++k)
          rounded[4 * (r * quads + q) + k] = runtime::roundToBf16(y.v[k]);
    }
    if (WarpRows::leader()) {
      if constexpr (kCentred)
        mean[r] = m;
      rstd[r] = s;
    }
  }
}

template <typename Rows, bool kCentred>
__global__ void residualNormKernel(const float *residual,
                                   const float *sublayer, const float *gamma,
                                   const float *beta, float *out, float *mean,
                                   float *rstd, int64_t rows, int64_t width,
                                   Dropout dropout, float epsilon,
                                   Bf16 *rounded, float *sum) {
  TGC_FOR_ROW_OF(Rows, r, rows) {
    // The output row holds h, then the result (each thread rewrites only
    // its own columns).
    float *h = out + r * width;
    TGC_FOR_COLUMN_OF(Rows, c, width) {
      int64_t i = r * width + c;
      h[c] = residualSum(residual[i], sublayer[i], dropout.factor(i));
      if (sum)
        sum[i] = h[c];
    }
    float m, s;
    rowStatistics<Rows, kCentred>(h, width, epsilon, m, s);
    TGC_FOR_COLUMN_OF(Rows, c, width) {
      const float y = normalized<kCentred>(h[c], gamma, beta, c, m, s);
      h[c] = y;
      if (rounded)
        rounded[r * width + c] = runtime::roundToBf16(y);
    }
    if (Rows::leader()) {
      if constexpr (kCentred)
        mean[r] = m;
      rstd[r] = s;
    }
  }
}

/// Calls launch(std::integral_constant<int, Q>{}) with Q the quads a lane
/// takes of a row of `width` (at most kWarpRowWidth): 1, 2, 4 or 8.
template <typename Launch>
void withQuadsPerLane(int64_t width, Launch launch) {
  if (width <= 128)
    launch(std::integral_constant<int, 1>{});
  else if (width <= 256)
    launch(std::integral_constant<int, 2>{});
  else if (width <= 512)
    launch(std::integral_constant<int, 4>{});
  else
    launch(std::integral_constant<int, 8>{});
}

/// Blocks of residualNormGradQuadKernel, each warp going down rows many
/// apart with its lanes' column sums in registers; one partial of the gamma
/// and beta gradients a block. Two an SM of an H100 or H200 (132 SMs): as
/// many as fit there at a model width of 512 (118 registers a thread).
constexpr unsigned kColumnSumBlocks = 264;

/// Adds the block's warps' column sums (lane l of a warp: quads l, l + 32,
/// ... of the columns, as TGC_FOR_LANE_QUAD) in warp order, in double, and
/// writes them as partial[c] (dy xhat) and partial[width + c] (dy).
template <int kQuads>
__device__ void writeBlockColumnSums(const Quad (&gammaPart)[kQuads],
                                     const Quad (&betaPart)[kQuads],
                                     int64_t width, double *partial) {
  __shared__ double sums[2 * kWarpRowWidth];
  const int64_t quads = width / 4;
  const int warp = threadIdx.x / 32;
  for (int w = 0; w < kThreads / 32; ++w) {
    if (warp == w) {
      TGC_FOR_LANE_QUAD(g, q, kQuads, quads) {
        for (int k = 0; k < 4; ++k) {
          const int64_t c = 4 * q + k;
          sums[c] = (w == 0 ? 0.0 : sums[c]) + gammaPart[g].v[k];
          sums[width + c] =
              (w == 0 ? 0.0 : sums[width + c]) + betaPart[g].v[k];
        }
      }
    }
    __syncthreads();
  }
  for (int64_t c = threadIdx.x; c < 2 * width; c += blockDim.x)
    partial[c] = sums[c];
}

/// residualNormGradKernel<WarpRows> by quads, dy and xhat in registers;
/// the block's partial of the gamma and beta gradients (the column sums of
/// dy xhat and dy over its rows) into partial[2 width blockIdx.x, ...).
template <int kQuads, bool kCentred>
__global__ void residualNormGradQuadKernel(
    const float *grad, const float *out, const float *gamma,
    const float *beta, const float *rstd, float *residualGrad,
    float *sublayerGrad, int64_t rows, int64_t width, Dropout dropout,
    Bf16 *sublayerRounded, const float *sumGrad, double *partial) {
  const int64_t quads = width / 4;
  Quad gammaPart[kQuads] = {}, betaPart[kQuads] = {};
  TGC_FOR_ROW_OF(WarpRows, r, rows) {
    Quad dy[kQuads], xhat[kQuads];
    float sumG = 0.0f, sumGX = 0.0f;
    TGC_FOR_LANE_QUAD(g, q, kQuads, quads) {
      const int64_t i = r * quads + q;
      dy[g] = loadQuad(grad, i);
      const Quad y = loadQuad(out, i), gm = loadQuad(gamma, q);
      Quad centred = y;
      if constexpr (kCentred) {
        const Quad bt = loadQuad(beta, q);
        for (int k = 0; k < 4; ++k)
          centred.v[k] = y.v[k] - bt.v[k];
      }
      for (int k = 0; k < 4; ++k) {
        xhat[g].v[k] = centred.v[k] / gm.v[k];
        const float gk = dy[g].v[k] * gm.v[k];
        sumG += gk;
        sumGX += gk * xhat[g].v[k];
        gammaPart[g].v[k] += dy[g].v[k] * xhat[g].v[k];
        betaPart[g].v[k] += dy[g].v[k];
      }
    }
    float meanG = 0.0f;
    if constexpr (kCentred)
      meanG = WarpRows::sum(sumG) / static_cast<float>(width);
    const float meanGX = WarpRows::sum(sumGX) / static_cast<float>(width);
    const float s = rstd[r];
    TGC_FOR_LANE_QUAD(g, q, kQuads, quads) {
      const int64_t i = r * quads + q;
      const Quad gm = loadQuad(gamma, q);
      float f[4];
      dropout.factors4(4 * i, f);
      Quad d, dsub;
      for (int k = 0; k < 4; ++k)
        d.v[k] = s * (dy[g].v[k] * gm.v[k] - meanG - xhat[g].v[k] * meanGX);
      if (sumGrad) {
        const Quad extra = loadQuad(sumGrad, i);
        for (int k = 0; k < 4; ++k)
          d.v[k] += extra.v[k];
      }
      for (int k = 0; k < 4; ++k)
        dsub.v[k] = d.v[k] * f[k];
      storeQuad(residualGrad, i, d);
      if (sublayerGrad) // null where only its rounding is read
        storeQuad(sublayerGrad, i, dsub);
      if (sublayerRounded)
        for (int k = 0; k < 4; ++k)
          sublayerRounded[4 * i + k] = runtime::roundToBf16(dsub.v[k]);
    }
  }
  writeBlockColumnSums<kQuads>(gammaPart, betaPart, width,
                               partial + 2 * blockIdx.x * width);
}

template <typename Rows, bool kCentred>
__global__ void residualNormGradKernel(
    const float *grad, NormalizedOutput xhatOf, const float *rstd,
    float *residualGrad, float *sublayerGrad, int64_t rows, int64_t width,
    Dropout dropout, Bf16 *sublayerRounded, const float *sumGrad) {
  TGC_FOR_ROW_OF(Rows, r, rows) {
    float *dh = residualGrad + r * width;
    float *dsub = sublayerGrad ? sublayerGrad + r * width : nullptr;
    Bf16 *rounded = sublayerRounded ? sublayerRounded + r * width : nullptr;
    const float *extra = sumGrad ? sumGrad + r * width : nullptr;
    normalizeGradRow<Rows, kCentred>(
        grad + r * width, [=](int64_t c) { return xhatOf(r, c, width); },
        xhatOf.gamma, rstd[r], width, [=](int64_t c, float d) {
          if (extra)
            d += extra[c];
          const float s = d * dropout.factor(r * width + c);
          dh[c] = d;
          if (dsub)
            dsub[c] = s;
          if (rounded)
            rounded[c] = runtime::roundToBf16(s);
        });
  }
}

} // namespace tgc::cuda

#endif // TGC_RUNTIME_CUDA_NORMKERNELS_CUH
