//===- LossKernels.cuh - cross-entropy's kernels ---------------*- CUDA -*-===//
//
// Per counted row, with lse = log sum_c exp(x_c) and q the smoothed target
// distribution (1 - s) onehot(t) + s / V:
//   loss_r = -((1 - s)(x_t - lse) + (s / V) sum_c (x_c - lse))
//   dx_c   = lossGrad (softmax_c - q_c) / tokens
// One block per row in both, the row sums and the total in double, as the
// CPU kernel's (rows are as wide as the vocabulary). The logits are the
// step's largest tensor (a base batch's are 3.6 GB): where a row fits a
// block's shared memory it is read from device memory once
// (lossAndGradRowKernel), else its log-sum-exp takes one pass over it
// (each thread's running maximum and sum, rescaled when the maximum grows)
// and its gradient another. The loss: the last block to finish adds the
// rows' losses in a fixed order, the same loss on every run. The gradient:
// the counted targets first, by one block, then the rows.
//
// tg.output_loss (outputLoss) does both per chunk of rows, between the
// chunk's GEMMs: logits = hidden W^T into the workspace, one kernel for the
// rows' losses and their logit gradient (over the logits in f32, or into a
// bf16 buffer for bf16 operands: the one rounding the CPU kernel does),
// then hiddenGrad = grad W and weightGrad += grad^T hidden. The [rows, V]
// logits never exist whole.
//
// Internal to TgcCudaKernels: Loss.cu launches these kernels (and is the
// one CUDA source that includes this header); LossEmulatedTest.cpp runs
// some of them on the host, a warp's 32 lanes emulated.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CUDA_LOSSKERNELS_CUH
#define TGC_RUNTIME_CUDA_LOSSKERNELS_CUH

#include "runtime/kernels/cuda/Bf16Quads.cuh"
#include "runtime/kernels/cuda/BlockReduce.cuh"
#include "runtime/kernels/cuda/Device.h"

namespace tgc::cuda {

/// One thread's part of a row's log-sum-exp: the largest value it saw and
/// the sum of exp(x - max) over its values.
struct RunningLse {
  float max = -INFINITY;
  double sum = 0.0;
  __device__ void add(float x) {
    if (x > max) {
      sum = sum * exp(static_cast<double>(max - x)) + 1.0;
      max = x;
    } else if (x != -INFINITY) { // exp(-inf - -inf) would be NaN; a NaN x
      sum += expf(x - max);       // still makes the sum NaN
    }
  }
  /// log sum_c exp(x_c) over the whole block's values; the whole block calls.
  __device__ double finish() const {
    float rowMax = blockMax(max);
    double scaled = max == -INFINITY ? 0.0 : sum * exp(double(max - rowMax));
    return rowMax + log(blockSum(scaled));
  }
};

/// log sum_c exp(x_c) of one row, one pass over it; the whole block calls.
__device__ double logSumExp(const float *x, int64_t classes) {
  RunningLse lse;
  TGC_FOR_COLUMN(c, classes) { lse.add(x[c]); }
  return lse.finish();
}

/// The number of targets that are not ignoreIndex; the whole block calls.
__device__ int32_t countTokens(const int32_t *targets, int64_t rows,
                               int32_t ignoreIndex) {
  int32_t count = 0;
  TGC_FOR_COLUMN(r, rows) { count += targets[r] != ignoreIndex; }
  return blockSum(count);
}

/// Blocks of crossEntropyKernel done with their rows. The last to arrive
/// sets it back to 0; calls are enqueued on one stream, so no two of these
/// kernels run at once.
__device__ unsigned int finishedLossBlocks = 0;

/// rowLoss[r] = loss_r (0 for ignored rows); then the last block to finish
/// writes *loss, their mean over the counted rows, and *tokens, that count.
__global__ void crossEntropyKernel(const float *logits, const int32_t *targets,
                                   double *rowLoss, float *loss,
                                   int32_t *tokens, int64_t rows,
                                   int64_t classes, double smoothing,
                                   int32_t ignoreIndex) {
  TGC_FOR_ROW(r, rows) {
    int32_t target = targets[r];
    if (target == ignoreIndex) {
      if (threadIdx.x == 0)
        rowLoss[r] = 0.0;
      continue;
    }
    const float *x = logits + r * classes;
    RunningLse running;
    double sum = 0.0;
    TGC_FOR_COLUMN(c, classes) {
      running.add(x[c]);
      sum += x[c];
    }
    double lse = running.finish();
    sum = blockSum(sum);
    double sumLogP = sum - static_cast<double>(classes) * lse;
    double perClass = smoothing / static_cast<double>(classes);
    if (threadIdx.x == 0)
      rowLoss[r] = -((1.0 - smoothing) * (x[target] - lse) +
                     perClass * sumLogP);
  }
  // This block's row losses are visible to every block before it counts
  // itself done (CUDA's threadfence reduction).
  __threadfence();
  __shared__ bool last;
  __syncthreads();
  if (threadIdx.x == 0)
    last = atomicAdd(&finishedLossBlocks, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last)
    return;
  __threadfence(); // acquire: the other blocks' row losses, seen as done
  // Strided over the threads in row order, then the block sum: the same
  // total on every run. __ldcg reads past L1, which may hold no stale copy.
  double total = 0.0;
  TGC_FOR_COLUMN(r, rows) { total += __ldcg(rowLoss + r); }
  total = blockSum(total);
  int32_t count = countTokens(targets, rows, ignoreIndex);
  if (threadIdx.x == 0) {
    *tokens = count;
    *loss = count > 0 ? static_cast<float>(total / count) : 0.0f;
    finishedLossBlocks = 0;
  }
}

/// *count = the targets that are not ignoreIndex; one block.
__global__ void countTokensKernel(const int32_t *targets, int64_t rows,
                                  int32_t ignoreIndex, int32_t *count) {
  int32_t n = countTokens(targets, rows, ignoreIndex);
  if (threadIdx.x == 0)
    *count = n;
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

/// The logit gradient's weight: lossGrad over the counted rows (0 where
/// there are none).
__device__ inline float gradientWeight(float lossGrad, const int32_t *count) {
  return *count > 0
             ? static_cast<float>(static_cast<double>(lossGrad) / *count)
             : 0.0f;
}

/// Whether row r's target is ignored; if so, its gradient and loss are
/// zeros. The whole block calls.
template <typename G>
__device__ bool ignoredRow(G *g, double *rowLoss, int64_t r, int32_t target,
                           int32_t ignoreIndex, int64_t classes) {
  if (target != ignoreIndex)
    return false;
  TGC_FOR_COLUMN(c, classes) { g[c] = convertedTo<G>(0.0f); }
  if (threadIdx.x == 0)
    rowLoss[r] = 0.0;
  return true;
}

/// Row r's loss (by thread 0) from lse, x_t and sum_c x_c, and its logit
/// gradient from its values x. The whole block calls.
template <typename G>
__device__ void finishRow(const float *x, G *g, double *rowLoss, int64_t r,
                          int32_t target, float xt, double lse, double sum,
                          int64_t classes, float smoothing, float weight) {
  const double s = smoothing, sumLogP = sum - double(classes) * lse;
  if (threadIdx.x == 0)
    rowLoss[r] = -((1.0 - s) * (xt - lse) + s / double(classes) * sumLogP);
  const float perClass = smoothing / static_cast<float>(classes);
  const float shift = static_cast<float>(lse);
  TGC_FOR_COLUMN(c, classes) {
    float q = c == target ? 1.0f - smoothing + perClass : perClass;
    g[c] = convertedTo<G>(weight * (expf(x[c] - shift) - q));
  }
}

/// One chunk's rows, a block each: rowLoss[r] = loss_r (0 for ignored rows)
/// and grad[r, c] = weight (softmax_c - q_c) as G (0 for ignored rows),
/// weight = lossGrad / *count. grad may be the logits themselves (f32): each
/// thread reads its columns before it writes them, and x_t is read before
/// the row's reductions, whose barriers come before any write.
template <typename G>
__global__ void lossAndGradKernel(const float *logits, G *grad,
                                  const int32_t *targets, const int32_t *count,
                                  double *rowLoss, float lossGrad, int64_t rows,
                                  int64_t classes, float smoothing,
                                  int32_t ignoreIndex) {
  const float weight = gradientWeight(lossGrad, count);
  TGC_FOR_ROW(r, rows) {
    G *g = grad + r * classes;
    const int32_t target = targets[r];
    if (ignoredRow(g, rowLoss, r, target, ignoreIndex, classes))
      continue;
    const float *x = logits + r * classes;
    const float xt = x[target];
    RunningLse running;
    double sum = 0.0;
    TGC_FOR_COLUMN(c, classes) {
      running.add(x[c]);
      sum += x[c];
    }
    const double lse = running.finish();
    sum = blockSum(sum);
    finishRow(x, g, rowLoss, r, target, xt, lse, sum, classes, smoothing,
              weight);
  }
}

/// Threads of lossAndGradRowKernel's blocks: a row is one block's, and its
/// loads in flight keep the memory busy with one block an SM.
constexpr int kRowThreads = 1024;

/// lossAndGradKernel with the row in shared memory (`classes` floats,
/// dynamic), where the GPU gives a block that much: the logits are read
/// from device memory once, where lossAndGradKernel reads them once for the
/// loss and again for the gradient (a base batch's rows, in flight together
/// by the thousand, do not stay in L2 between the two). Its log-sum-exp is
/// the CPU kernel's: the row's maximum first, then sum exp(x - max) in
/// double.
template <typename G>
__global__ void __launch_bounds__(kRowThreads)
    lossAndGradRowKernel(const float *logits, G *grad, const int32_t *targets,
                         const int32_t *count, double *rowLoss, float lossGrad,
                         int64_t rows, int64_t classes, float smoothing,
                         int32_t ignoreIndex) {
  TGC_DYNAMIC_SHARED_MEMORY(rowBytes);
  float *row = reinterpret_cast<float *>(rowBytes);
  const float weight = gradientWeight(lossGrad, count);
  TGC_FOR_ROW(r, rows) {
    G *g = grad + r * classes;
    const int32_t target = targets[r];
    if (ignoredRow(g, rowLoss, r, target, ignoreIndex, classes))
      continue;
    const float *x = logits + r * classes;
    float max = -INFINITY;
    double sum = 0.0;
    TGC_FOR_COLUMN(c, classes) {
      const float value = x[c];
      row[c] = value;
      max = fmaxf(max, value);
      sum += value;
    }
    const float rowMax = blockMax(max); // its barrier: `row` is whole
    double sumExp = 0.0;
    TGC_FOR_COLUMN(c, classes) {
      if (row[c] != -INFINITY) // exp(-inf - -inf) would be NaN
        sumExp += expf(row[c] - rowMax);
    }
    const double lse = rowMax + log(blockSum(sumExp));
    sum = blockSum(sum);
    finishRow(row, g, rowLoss, r, target, row[target], lse, sum, classes,
              smoothing, weight);
    __syncthreads(); // every thread is done with `row`
  }
}

/// *loss = the mean of rowLoss over the *count counted rows, added in row
/// order (the same loss on every run), *tokens = *count; one block.
__global__ void meanLossKernel(const double *rowLoss, const int32_t *count,
                               int64_t rows, float *loss, int32_t *tokens) {
  double total = 0.0;
  TGC_FOR_COLUMN(r, rows) { total += rowLoss[r]; }
  total = blockSum(total);
  if (threadIdx.x == 0) {
    *tokens = *count;
    *loss = *count > 0 ? static_cast<float>(total / *count) : 0.0f;
  }
}

} // namespace tgc::cuda

#endif // TGC_RUNTIME_CUDA_LOSSKERNELS_CUH
