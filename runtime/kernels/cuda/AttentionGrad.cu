//===- AttentionGrad.cu - attention's gradient, recomputing tiles ----===//
//
// With p = exp(s - lse) recomputed from the forward's lse, f the dropout
// factor, dp = f (dO_i . v_j), D_i = dO_i . O_i (= sum_j p dp, the
// softmax's row term) and ds = scale p (dp - D_i):
//   dq_i = sum_j ds k_j,   dk_j = sum_i ds q_i,   dv_j = sum_i p f dO_i.
// Two kernels recompute the tiles, so that every output row has one owner
// and no atomics are needed: one per block of queries (dq, looping over key
// tiles) and one per block of keys (dk and dv, looping over query tiles).
// Both visit exactly the (query, key) pairs the forward and the CPU kernel
// visit.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cuda/AttentionTile.cuh"

namespace tgc::cuda {

/// D_i = dO_i . O_i for every row of [B, H, Sq]; a warp per row.
__global__ void rowDotKernel(const float *grad, const float *output,
                             float *rowDot, int64_t rows, int valueDim) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = int64_t(gridDim.x) * (blockDim.x / 32);
  for (int64_t r = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) / 32;
       r < rows; r += warps) {
    float sum = 0.0f;
    for (int c = lane; c < valueDim; c += 32)
      sum += grad[r * valueDim + c] * output[r * valueDim + c];
    sum = warpReduce(sum, SumOp{});
    if (lane == 0)
      rowDot[r] = sum;
  }
}

namespace {
/// The saved forward values and the gradients of one attention.
template <typename T> struct GradArgs {
  const float *grad;
  const T *q, *k, *v;
  const float *lse, *rowDot;
  float *dq, *dk, *dv;
};

/// Shared memory of the dq kernel, in floats.
struct QueryLayout {
  int keyStride, valueStride; ///< k and v rows padded: lanes read columns
  int64_t query, outGrad, key, value, scoreGrad, acc, floats;

  TGC_HOST_DEVICE QueryLayout(int keyDim, int valueDim)
      : keyStride(keyDim + 1), valueStride(valueDim + 1) {
    query = 0;
    outGrad = query + kQueryBlock * keyDim;
    key = outGrad + kQueryBlock * valueDim;
    value = key + kKeyBlock * keyStride;
    scoreGrad = value + kKeyBlock * valueStride;
    acc = scoreGrad + kQueryBlock * kKeyBlock;
    floats = acc + kQueryBlock * keyDim;
  }
};

/// Shared memory of the dk/dv kernel, in floats.
struct KeyLayout {
  int keyStride, valueStride;
  int64_t key, value, query, outGrad, probs, scoreGrad, keyAcc, valueAcc,
      floats;

  TGC_HOST_DEVICE KeyLayout(int keyDim, int valueDim)
      : keyStride(keyDim + 1), valueStride(valueDim + 1) {
    key = 0;
    value = key + kKeyBlock * keyStride;
    query = value + kKeyBlock * valueStride;
    outGrad = query + kQueryBlock * keyDim;
    probs = outGrad + kQueryBlock * valueDim;
    scoreGrad = probs + kQueryBlock * kKeyBlock;
    keyAcc = scoreGrad + kQueryBlock * kKeyBlock;
    valueAcc = keyAcc + kKeyBlock * keyDim;
    floats = valueAcc + kKeyBlock * valueDim;
  }
};

/// One recomputed (query, key) pair: p f and ds.
struct PairGrad {
  float pf, ds;
};
} // namespace

/// p f and ds of query row i of the tile (qRow, dORow in shared memory)
/// and key `key` (kRow, vRow), given the row's lse and D.
template <typename T>
__device__ PairGrad pairGrad(const AttentionShape &s,
                             const AttentionConfig &config, const Head<T> &head,
                             const float *qRow, const float *dORow,
                             const float *kRow, const float *vRow,
                             int64_t query, int64_t key, float rowLse,
                             float rowDot) {
  int dk = static_cast<int>(s.keyDim), dv = static_cast<int>(s.valueDim);
  float p = expf(score(qRow, kRow, dk, config, head, query, key) - rowLse);
  float f = probabilityFactor(s, config, head, query, key);
  float dp = f * dot(dORow, vRow, dv);
  return {p * f, config.scale * p * (dp - rowDot)};
}

template <typename T>
__global__ void __launch_bounds__(kAttentionThreads)
    queryGradKernel(GradArgs<T> a, AttentionShape s, AttentionConfig config) {
  extern __shared__ float shared[];
  __shared__ float rowLse[kQueryBlock], rowDot[kQueryBlock];
  const int dk = static_cast<int>(s.keyDim), dv = static_cast<int>(s.valueDim);
  const QueryLayout at(dk, dv);
  float *qTile = shared + at.query, *dOTile = shared + at.outGrad,
        *kTile = shared + at.key, *vTile = shared + at.value,
        *dsTile = shared + at.scoreGrad, *acc = shared + at.acc;
  const Head<T> head = headOf(a.q, a.k, a.v, s, config, blockIdx.x);
  const int64_t i0 = static_cast<int64_t>(blockIdx.y) * kQueryBlock;
  const int nq = static_cast<int>(min(int64_t(kQueryBlock), s.queries - i0));
  const int64_t firstRow = head.bh * s.queries + i0;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  loadRows(qTile, dk, head.q + i0 * dk, dk, nq);
  loadRows(dOTile, dv, a.grad + firstRow * dv, dv, nq);
  for (int e = threadIdx.x; e < nq * dk; e += blockDim.x)
    acc[e] = 0.0f;
  if (threadIdx.x < nq) {
    rowLse[threadIdx.x] = a.lse[firstRow + threadIdx.x];
    rowDot[threadIdx.x] = a.rowDot[firstRow + threadIdx.x];
  }
  const int64_t end = keyEnd(s, config, i0, nq);
  for (int64_t j0 = 0; j0 < end; j0 += kKeyBlock) {
    const int nk = static_cast<int>(min(int64_t(kKeyBlock), end - j0));
    __syncthreads();
    loadRows(kTile, at.keyStride, head.k + j0 * dk, dk, nk);
    loadRows(vTile, at.valueStride, head.v + j0 * dv, dv, nk);
    __syncthreads();
    for (int i = warp; i < nq; i += kAttentionWarps) {
      float ds = 0.0f;
      if (lane < nk)
        ds = pairGrad(s, config, head, qTile + i * dk, dOTile + i * dv,
                      kTile + lane * at.keyStride,
                      vTile + lane * at.valueStride, i0 + i, j0 + lane,
                      rowLse[i], rowDot[i])
                 .ds;
      dsTile[i * kKeyBlock + lane] = ds;
    }
    __syncthreads();
    for (int e = threadIdx.x; e < nq * dk; e += blockDim.x) {
      int i = e / dk, c = e % dk;
      float sum = acc[e];
      for (int j = 0; j < nk; ++j)
        sum += dsTile[i * kKeyBlock + j] * kTile[j * at.keyStride + c];
      acc[e] = sum;
    }
  }
  __syncthreads();
  for (int e = threadIdx.x; e < nq * dk; e += blockDim.x)
    a.dq[firstRow * dk + e] = acc[e];
}

template <typename T>
__global__ void __launch_bounds__(kAttentionThreads)
    keyGradKernel(GradArgs<T> a, AttentionShape s, AttentionConfig config) {
  extern __shared__ float shared[];
  __shared__ float rowLse[kQueryBlock], rowDot[kQueryBlock];
  const int dk = static_cast<int>(s.keyDim), dv = static_cast<int>(s.valueDim);
  const KeyLayout at(dk, dv);
  float *kTile = shared + at.key, *vTile = shared + at.value,
        *qTile = shared + at.query, *dOTile = shared + at.outGrad,
        *pTile = shared + at.probs, *dsTile = shared + at.scoreGrad,
        *dkAcc = shared + at.keyAcc, *dvAcc = shared + at.valueAcc;
  const Head<T> head = headOf(a.q, a.k, a.v, s, config, blockIdx.x);
  const int64_t j0 = static_cast<int64_t>(blockIdx.y) * kKeyBlock;
  const int nk = static_cast<int>(min(int64_t(kKeyBlock), s.keys - j0));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  loadRows(kTile, at.keyStride, head.k + j0 * dk, dk, nk);
  loadRows(vTile, at.valueStride, head.v + j0 * dv, dv, nk);
  for (int e = threadIdx.x; e < nk * dk; e += blockDim.x)
    dkAcc[e] = 0.0f;
  for (int e = threadIdx.x; e < nk * dv; e += blockDim.x)
    dvAcc[e] = 0.0f;
  // Causal: query blocks ending before j0 never see these keys.
  const int64_t firstQuery =
      config.causal ? j0 / kQueryBlock * kQueryBlock : 0;
  for (int64_t i0 = firstQuery; i0 < s.queries; i0 += kQueryBlock) {
    const int nq = static_cast<int>(min(int64_t(kQueryBlock), s.queries - i0));
    const int64_t firstRow = head.bh * s.queries + i0;
    const int64_t end = keyEnd(s, config, i0, nq);
    __syncthreads();
    loadRows(qTile, dk, head.q + i0 * dk, dk, nq);
    loadRows(dOTile, dv, a.grad + firstRow * dv, dv, nq);
    if (threadIdx.x < nq) {
      rowLse[threadIdx.x] = a.lse[firstRow + threadIdx.x];
      rowDot[threadIdx.x] = a.rowDot[firstRow + threadIdx.x];
    }
    __syncthreads();
    for (int i = warp; i < nq; i += kAttentionWarps) {
      PairGrad g{0.0f, 0.0f};
      if (lane < nk && j0 + lane < end)
        g = pairGrad(s, config, head, qTile + i * dk, dOTile + i * dv,
                     kTile + lane * at.keyStride,
                     vTile + lane * at.valueStride, i0 + i, j0 + lane,
                     rowLse[i], rowDot[i]);
      pTile[i * kKeyBlock + lane] = g.pf;
      dsTile[i * kKeyBlock + lane] = g.ds;
    }
    __syncthreads();
    for (int e = threadIdx.x; e < nk * dv; e += blockDim.x) {
      int j = e / dv, c = e % dv;
      float sum = dvAcc[e];
      for (int i = 0; i < nq; ++i)
        sum += pTile[i * kKeyBlock + j] * dOTile[i * dv + c];
      dvAcc[e] = sum;
    }
    for (int e = threadIdx.x; e < nk * dk; e += blockDim.x) {
      int j = e / dk, c = e % dk;
      float sum = dkAcc[e];
      for (int i = 0; i < nq; ++i)
        sum += dsTile[i * kKeyBlock + j] * qTile[i * dk + c];
      dkAcc[e] = sum;
    }
  }
  __syncthreads();
  const int64_t firstKey = head.bh * s.keys + j0;
  for (int e = threadIdx.x; e < nk * dk; e += blockDim.x)
    a.dk[firstKey * dk + e] = dkAcc[e];
  for (int e = threadIdx.x; e < nk * dv; e += blockDim.x)
    a.dv[firstKey * dv + e] = dvAcc[e];
}

template <typename T>
static void attentionGradOf(const float *grad, const T *q, const T *k,
                            const T *v, const float *output, const float *lse,
                            float *dq, float *dk, float *dv,
                            const AttentionShape &shape,
                            const AttentionConfig &config) {
  int64_t heads = shape.batch * shape.heads;
  int64_t rows = heads * shape.queries;
  if (heads == 0)
    return;
  int dkInt = static_cast<int>(shape.keyDim),
      dvInt = static_cast<int>(shape.valueDim);
  Scratch rowDot(rows * sizeof(float));
  if (rows > 0) {
    rowDotKernel<<<blocksFor(rows * 32), kThreads, 0, stream()>>>(
        grad, output, rowDot.as<float>(), rows, dvInt);
    TGC_CUDA_CHECK_LAUNCH();
  }
  GradArgs<T> args{grad, q, k, v, lse, rowDot.as<float>(), dq, dk, dv};
  if (shape.queries > 0) {
    size_t bytes = QueryLayout(dkInt, dvInt).floats * sizeof(float);
    allowSharedMemory(queryGradKernel<T>, bytes);
    dim3 grid(static_cast<unsigned>(heads),
              static_cast<unsigned>((shape.queries + kQueryBlock - 1) /
                                    kQueryBlock));
    queryGradKernel<T><<<grid, kAttentionThreads, bytes, stream()>>>(args, shape,
                                                                  config);
    TGC_CUDA_CHECK_LAUNCH();
  }
  if (shape.keys > 0) {
    size_t bytes = KeyLayout(dkInt, dvInt).floats * sizeof(float);
    allowSharedMemory(keyGradKernel<T>, bytes);
    dim3 grid(static_cast<unsigned>(heads),
              static_cast<unsigned>((shape.keys + kKeyBlock - 1) / kKeyBlock));
    keyGradKernel<T><<<grid, kAttentionThreads, bytes, stream()>>>(args, shape,
                                                                config);
    TGC_CUDA_CHECK_LAUNCH();
  }
}

void attentionGrad(const float *grad, const float *q, const float *k,
                   const float *v, const float *output, const float *lse,
                   float *dq, float *dk, float *dv, const AttentionShape &shape,
                   const AttentionConfig &config) {
  attentionGradOf(grad, q, k, v, output, lse, dq, dk, dv, shape, config);
}

void attentionGrad(const float *grad, const Bf16 *q, const Bf16 *k,
                   const Bf16 *v, const float *output, const float *lse,
                   float *dq, float *dk, float *dv, const AttentionShape &shape,
                   const AttentionConfig &config) {
  attentionGradOf(grad, q, k, v, output, lse, dq, dk, dv, shape, config);
}

} // namespace tgc::cuda
