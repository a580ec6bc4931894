//===- Attention.cu - tiled attention with an online softmax ---------===//
//
// One block per (b, h) and block of kQueryBlock queries. For each tile of
// keys, the scores go through a running max m and sum l per row; the output
// rows accumulate sum_j e^(s_ij - m) f_ij v_j in shared memory, rescaled by
// e^(m_old - m) when m grows (FlashAttention). The normalizer l is the
// undropped sum, as in the CPU kernel: dropout multiplies the probabilities
// after the softmax. Nothing of size [Sq, Sk] exists.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cuda/AttentionTile.cuh"

namespace tgc::cuda {

namespace {
/// Floats of dynamic shared memory, and where each tile starts.
struct ForwardLayout {
  int keyStride; ///< k rows padded by one: lanes read a column each
  int64_t query, key, value, probs, acc, floats;

  TGC_HOST_DEVICE ForwardLayout(int keyDim, int valueDim)
      : keyStride(keyDim + 1) {
    query = 0;
    key = query + kQueryBlock * keyDim;
    value = key + kKeyBlock * keyStride;
    probs = value + kKeyBlock * valueDim;
    acc = probs + kQueryBlock * kKeyBlock;
    floats = acc + kQueryBlock * valueDim;
  }
};
} // namespace

template <typename T>
__global__ void __launch_bounds__(kAttentionThreads)
    attentionKernel(const T *q, const T *k, const T *v, float *out, float *lse,
                    AttentionShape s, AttentionConfig config) {
  extern __shared__ float shared[];
  __shared__ float rowMax[kQueryBlock], rowSum[kQueryBlock],
      rowScale[kQueryBlock];
  const int dk = static_cast<int>(s.keyDim), dv = static_cast<int>(s.valueDim);
  const ForwardLayout at(dk, dv);
  float *qTile = shared + at.query, *kTile = shared + at.key,
        *vTile = shared + at.value, *probs = shared + at.probs,
        *acc = shared + at.acc;
  const Head<T> head = headOf(q, k, v, s, config, blockIdx.x);
  const int64_t i0 = static_cast<int64_t>(blockIdx.y) * kQueryBlock;
  const int nq = static_cast<int>(min(int64_t(kQueryBlock), s.queries - i0));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  loadRows(qTile, dk, head.q + i0 * dk, dk, nq);
  for (int e = threadIdx.x; e < nq * dv; e += blockDim.x)
    acc[e] = 0.0f;
  if (threadIdx.x < kQueryBlock) {
    rowMax[threadIdx.x] = -INFINITY;
    rowSum[threadIdx.x] = 0.0f;
  }
  const int64_t end = keyEnd(s, config, i0, nq);
  for (int64_t j0 = 0; j0 < end; j0 += kKeyBlock) {
    const int nk = static_cast<int>(min(int64_t(kKeyBlock), end - j0));
    __syncthreads(); // the last tile's readers (or the setup) are done
    loadRows(kTile, at.keyStride, head.k + j0 * dk, dk, nk);
    loadRows(vTile, dv, head.v + j0 * dv, dv, nk);
    __syncthreads();
    for (int i = warp; i < nq; i += kAttentionWarps) {
      const int64_t query = i0 + i, key = j0 + lane;
      const bool live = lane < nk;
      float sc = live ? score(qTile + i * dk, kTile + lane * at.keyStride, dk,
                              config, head, query, key)
                      : -INFINITY;
      float oldMax = rowMax[i];
      float max = warpReduce(fmaxf(oldMax, sc), MaxOp{});
      float p = live ? expf(sc - max) : 0.0f;
      float sum = warpReduce(p, SumOp{});
      probs[i * kKeyBlock + lane] =
          live ? p * probabilityFactor(s, config, head, query, key) : 0.0f;
      __syncwarp(); // every lane has read rowMax[i]
      if (lane == 0) {
        float alpha = expf(oldMax - max);
        rowScale[i] = alpha;
        rowSum[i] = rowSum[i] * alpha + sum;
        rowMax[i] = max;
      }
    }
    __syncthreads();
    for (int e = threadIdx.x; e < nq * dv; e += blockDim.x) {
      int i = e / dv, c = e % dv;
      float o = acc[e] * rowScale[i];
      for (int j = 0; j < nk; ++j)
        o += probs[i * kKeyBlock + j] * vTile[j * dv + c];
      acc[e] = o;
    }
  }
  __syncthreads();
  float *outRows = out + (head.bh * s.queries + i0) * dv;
  for (int e = threadIdx.x; e < nq * dv; e += blockDim.x)
    outRows[e] = acc[e] * (1.0f / rowSum[e / dv]);
  if (threadIdx.x < nq)
    lse[head.bh * s.queries + i0 + threadIdx.x] =
        rowMax[threadIdx.x] + logf(rowSum[threadIdx.x]);
}

template <typename T>
static void attentionOf(const T *q, const T *k, const T *v, float *out,
                        float *lse, const AttentionShape &shape,
                        const AttentionConfig &config) {
  int64_t heads = shape.batch * shape.heads;
  if (heads == 0 || shape.queries == 0)
    return;
  size_t bytes = ForwardLayout(static_cast<int>(shape.keyDim),
                               static_cast<int>(shape.valueDim))
                     .floats *
                 sizeof(float);
  allowSharedMemory(attentionKernel<T>, bytes);
  dim3 grid(static_cast<unsigned>(heads),
            static_cast<unsigned>((shape.queries + kQueryBlock - 1) /
                                  kQueryBlock));
  attentionKernel<T><<<grid, kAttentionThreads, bytes, stream()>>>(
      q, k, v, out, lse, shape, config);
  TGC_CUDA_CHECK_LAUNCH();
}

void attention(const float *q, const float *k, const float *v, float *out,
               float *lse, const AttentionShape &shape,
               const AttentionConfig &config) {
  attentionOf(q, k, v, out, lse, shape, config);
}

void attention(const Bf16 *q, const Bf16 *k, const Bf16 *v, float *out,
               float *lse, const AttentionShape &shape,
               const AttentionConfig &config) {
  attentionOf(q, k, v, out, lse, shape, config);
}

} // namespace tgc::cuda
