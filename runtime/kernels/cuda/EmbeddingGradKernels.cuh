//===- EmbeddingGradKernels.cuh - the embedding gradient -------*- CUDA -*-===//
//
// The two passes of cuda::embeddingGrad over rows sorted by id (Tensor.cu
// sorts them with CUB's radix sort and fills the output with its base
// first). Each id's sum is added into its row exactly once, so the output
// may start as zeros, as another tensor's copy or as the tensor the sum is
// made in. Internal to TgcCudaKernels: Tensor.cu launches these kernels;
// EmbeddingGradEmulatedTest.cpp runs them on the host as it launches them.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CUDA_EMBEDDINGGRADKERNELS_CUH
#define TGC_RUNTIME_CUDA_EMBEDDINGGRADKERNELS_CUH

#include "runtime/kernels/cuda/Device.h"

namespace tgc::cuda {

/// Sorted rows per chunk of the embedding gradient's first pass: a frequent
/// id (padding, punctuation) has thousands of rows, which one block summing
/// alone took milliseconds over.
constexpr int64_t kEmbeddingChunk = 128;

/// Pass 1, one block per chunk of kEmbeddingChunk sorted rows, a thread per
/// column: each run of one id is summed, in row order, piece by piece (a
/// piece: the run's rows inside the chunk). A run wholly inside the chunk is
/// added to that id's row. The chunk's first piece, when its run began in
/// an earlier chunk, goes to head[chunk]; its last piece, when its run
/// begins in this chunk and goes on past it, to tail[chunk]; pass 2 adds
/// those up.
__global__ void embeddingGradChunks(const float *grad, const int32_t *ids,
                                    const int32_t *rowOf, float *out,
                                    float *head, float *tail, int64_t rows,
                                    int64_t width, int64_t vocab) {
  const int64_t chunk = blockIdx.x, first = chunk * kEmbeddingChunk,
                end = min(rows, first + kEmbeddingChunk);
  const bool firstContinued = first > 0 && ids[first - 1] == ids[first];
  const bool lastContinues = end < rows && ids[end] == ids[end - 1];
  TGC_FOR_COLUMN(c, width) {
    float sum = 0.0f;
    int64_t start = first; // of the current piece
    for (int64_t x = first; x < end; ++x) {
      sum += grad[static_cast<int64_t>(rowOf[x]) * width + c];
      if (x + 1 < end && ids[x + 1] == ids[x])
        continue;
      int32_t id = ids[x];
      if (start == first && firstContinued)
        head[chunk * width + c] = sum;
      else if (x + 1 == end && lastContinues)
        tail[chunk * width + c] = sum;
      else if (id >= 0 && id < vocab)
        out[static_cast<int64_t>(id) * width + c] += sum;
      sum = 0.0f;
      start = x + 1;
    }
  }
}

/// Pass 2, one block per chunk whose last piece begins a run that goes on:
/// the run's sum, added to its row, is that tail plus the heads of the chunks
/// after, in row order, up to the chunk where the run ends.
__global__ void embeddingGradRuns(const int32_t *ids, float *out,
                                  const float *head, const float *tail,
                                  int64_t rows, int64_t width, int64_t vocab) {
  const int64_t chunk = blockIdx.x, first = chunk * kEmbeddingChunk,
                end = min(rows, first + kEmbeddingChunk);
  if (end >= rows || ids[end] != ids[end - 1])
    return; // the last piece's run ends in this chunk
  // A chunk that is all one continued run (sorted: its first id is its
  // last) holds no tail: the block that owns the run's tail adds its head.
  int32_t id = ids[end - 1];
  if ((first > 0 && ids[first - 1] == id && ids[first] == id) || id < 0 ||
      id >= vocab)
    return;
  TGC_FOR_COLUMN(c, width) {
    float sum = tail[chunk * width + c];
    for (int64_t next = chunk + 1;; ++next) {
      sum += head[next * width + c];
      int64_t nextEnd = min(rows, (next + 1) * kEmbeddingChunk);
      if (nextEnd >= rows || ids[nextEnd] != id || ids[nextEnd - 1] != id)
        break; // the run ends in chunk `next`
    }
    out[static_cast<int64_t>(id) * width + c] += sum;
  }
}

} // namespace tgc::cuda

#endif // TGC_RUNTIME_CUDA_EMBEDDINGGRADKERNELS_CUH
