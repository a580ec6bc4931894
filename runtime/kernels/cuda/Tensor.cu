//===- Tensor.cu - layouts, slices, gathers, embeddings, positions, masks ===//
//
// Grid-stride loops, one thread per output element, except embeddingGrad
// (CUB's radix sort groups the rows by id, then blocks sum chunks of the
// sorted rows and the runs that cross chunks), which gatherGrad of whole
// rows shares, and the slices' block copies (2-D copies and fills).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cuda/Device.h"
#include "runtime/kernels/cuda/EmbeddingGradKernels.cuh"
#include "runtime/kernels/cuda/GatherKernels.cuh"

#include <cub/device/device_radix_sort.cuh>

namespace tgc::cuda {

namespace {
/// GatherKernels.cuh's launcher: the kernel enqueued on the kernels' stream.
struct StreamLaunch {
  template <typename... Parameters, typename... Arguments>
  void operator()(void (*kernel)(Parameters...), unsigned blocks,
                  Arguments... arguments) const {
    kernel<<<blocks, kThreads, 0, stream()>>>(arguments...);
    TGC_CUDA_CHECK_LAUNCH();
  }
};
} // namespace

void transpose(const float *input, float *out, const int64_t *inputShape,
               const int64_t *permutation, int rank) {
  transposeTo(input, out, inputShape, permutation, rank, StreamLaunch{});
}

void transpose(const float *input, Bf16 *out, const int64_t *inputShape,
               const int64_t *permutation, int rank) {
  transposeTo(input, out, inputShape, permutation, rank, StreamLaunch{});
}

void transpose(const int32_t *input, int32_t *out, const int64_t *inputShape,
               const int64_t *permutation, int rank) {
  transposeTo(input, out, inputShape, permutation, rank, StreamLaunch{});
}

void broadcast(const float *input, float *out, const int64_t *resultShape,
               int resultRank, const int64_t *dims, const int64_t *inputShape,
               int inputRank) {
  broadcastOf(input, out, resultShape, resultRank, dims, inputShape,
              inputRank, StreamLaunch{});
}

void broadcast(const int32_t *input, int32_t *out,
               const int64_t *resultShape, int resultRank, const int64_t *dims,
               const int64_t *inputShape, int inputRank) {
  broadcastOf(input, out, resultShape, resultRank, dims, inputShape,
              inputRank, StreamLaunch{});
}

__global__ void embeddingKernel(const float *table, const int32_t *ids,
                                float *out, int64_t rows, int64_t width) {
  TGC_GRID_STRIDE(i, rows * width) {
    out[i] = table[static_cast<int64_t>(ids[i / width]) * width + i % width];
  }
}

void embedding(const float *table, const int32_t *ids, float *out,
               int64_t rows, int64_t width) {
  if (rows * width == 0)
    return;
  embeddingKernel<<<blocksFor(rows * width), kThreads, 0, stream()>>>(
      table, ids, out, rows, width);
  TGC_CUDA_CHECK_LAUNCH();
}

/// One thread per output element; an index outside the input gives 0.
__global__ void gatherIndexedKernel(const float *input, const int32_t *indices,
                                    float *out, int64_t extent, int64_t count,
                                    int64_t inner, int64_t total) {
  TGC_GRID_STRIDE(x, total) {
    int64_t line = x / inner, o = line / count;
    int64_t index = indices[line % count];
    out[x] = index >= 0 && index < extent
                 ? input[(o * extent + index) * inner + x % inner]
                 : 0.0f;
  }
}

void gather(const float *input, const int32_t *indices, float *out,
            int64_t outer, int64_t extent, int64_t count, int64_t inner) {
  int64_t total = outer * count * inner;
  if (total == 0)
    return;
  gatherIndexedKernel<<<blocksFor(total), kThreads, 0, stream()>>>(
      input, indices, out, extent, count, inner, total);
  TGC_CUDA_CHECK_LAUNCH();
}

/// One thread per output element (o, e, c): the gradients of the indices
/// equal to e, in index order, as the CPU adds them. Its work is
/// outer * extent * inner * count: meant for gathers along an inner
/// dimension, whose indices are few; a gather of whole rows (outer 1) sorts
/// its indices instead (embeddingGrad).
__global__ void gatherGradScanKernel(const float *grad,
                                     const int32_t *indices, float *out,
                                     int64_t extent, int64_t count,
                                     int64_t inner, int64_t total) {
  TGC_GRID_STRIDE(x, total) {
    int64_t c = x % inner, row = x / inner;
    int64_t e = row % extent, o = row / extent;
    float sum = 0.0f;
    for (int64_t i = 0; i < count; ++i)
      if (indices[i] == e)
        sum += grad[(o * count + i) * inner + c];
    out[x] = sum;
  }
}

void gatherGrad(const float *grad, const int32_t *indices, float *out,
                int64_t outer, int64_t extent, int64_t count, int64_t inner) {
  if (outer == 1) {
    embeddingGrad(grad, indices, nullptr, out, count, inner, extent);
    return;
  }
  int64_t total = outer * extent * inner;
  if (total == 0)
    return;
  gatherGradScanKernel<<<blocksFor(total), kThreads, 0, stream()>>>(
      grad, indices, out, extent, count, inner, total);
  TGC_CUDA_CHECK_LAUNCH();
}

/// Fills values[i] = i.
__global__ void iotaKernel(int32_t *values, int64_t count) {
  TGC_GRID_STRIDE(i, count) { values[i] = static_cast<int32_t>(i); }
}

void embeddingGrad(const float *grad, const int32_t *ids, const float *base,
                   float *out, int64_t rows, int64_t width, int64_t vocab) {
  if (vocab * width == 0)
    return;
  // The passes below add each id's sum into its row once: rows no id refers
  // to keep the base (zeros without one; untouched in place).
  const size_t bytes = vocab * width * sizeof(float);
  if (!base)
    TGC_CUDA_CHECK(cudaMemsetAsync(out, 0, bytes, stream()));
  else if (base != out)
    TGC_CUDA_CHECK(
        cudaMemcpyAsync(out, base, bytes, cudaMemcpyDeviceToDevice, stream()));
  if (rows == 0)
    return;
  // Group the rows by id with CUB's radix sort, which is stable: within an
  // id the rows stay in ascending order. O(rows) work where comparing
  // every pair of rows would be O(rows^2) (25k rows in a base batch).
  int count = static_cast<int>(rows);
  Scratch keys(rows * sizeof(int32_t)), values(2 * rows * sizeof(int32_t));
  if (keys.failed() || values.failed())
    return; // no scratch: the error is kept (firstError), nothing runs
  int32_t *sortedIds = keys.as<int32_t>();
  int32_t *rowNumbers = values.as<int32_t>(), *sortedRows = rowNumbers + rows;
  iotaKernel<<<blocksFor(rows), kThreads, 0, stream()>>>(rowNumbers, rows);
  TGC_CUDA_CHECK_LAUNCH();
  size_t tempBytes = 0;
  TGC_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
      nullptr, tempBytes, ids, sortedIds, rowNumbers, sortedRows, count, 0,
      32, stream()));
  Scratch temp(tempBytes);
  if (temp.failed())
    return; // no scratch: the error is kept (firstError), nothing runs
  TGC_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
      temp.as<void>(), tempBytes, ids, sortedIds, rowNumbers, sortedRows,
      count, 0, 32, stream()));
  const int64_t chunks = (rows + kEmbeddingChunk - 1) / kEmbeddingChunk;
  Scratch pieces(2 * chunks * width * sizeof(float));
  if (pieces.failed())
    return; // no scratch: the error is kept (firstError), nothing runs
  float *head = pieces.as<float>(), *tail = head + chunks * width;
  const unsigned grid = static_cast<unsigned>(chunks);
  embeddingGradChunks<<<grid, kThreads, 0, stream()>>>(
      grad, sortedIds, sortedRows, out, head, tail, rows, width, vocab);
  TGC_CUDA_CHECK_LAUNCH();
  embeddingGradRuns<<<grid, kThreads, 0, stream()>>>(sortedIds, out, head, tail,
                                                     rows, width, vocab);
  TGC_CUDA_CHECK_LAUNCH();
}

__global__ void positionalEncodingKernel(float *out, int64_t positions,
                                         int64_t width, int64_t first) {
  // One thread per (position, pair of columns). Double angles, as the CPU:
  // pos / 10000^(2i/width) reaches thousands of radians.
  int64_t pairs = (width + 1) / 2;
  TGC_GRID_STRIDE(x, positions * pairs) {
    int64_t pos = x / pairs, i = x % pairs;
    double angle = static_cast<double>(first + pos) /
                   pow(10000.0, static_cast<double>(2 * i) /
                                    static_cast<double>(width));
    out[pos * width + 2 * i] = static_cast<float>(sin(angle));
    if (2 * i + 1 < width)
      out[pos * width + 2 * i + 1] = static_cast<float>(cos(angle));
  }
}

void positionalEncoding(float *out, int64_t positions, int64_t width,
                        int64_t first) {
  int64_t count = positions * ((width + 1) / 2);
  if (count == 0)
    return;
  positionalEncodingKernel<<<blocksFor(count), kThreads, 0, stream()>>>(
      out, positions, width, first);
  TGC_CUDA_CHECK_LAUNCH();
}

__global__ void rotaryKernel(const float *input, float *out, int64_t rows,
                             int64_t positions, int64_t width, double base,
                             double sign, int64_t first) {
  // One thread per (row, pair). Double angles, as the CPU: position *
  // base^(-2i/width) reaches thousands of radians.
  int64_t half = width / 2;
  TGC_GRID_STRIDE(x, rows * half) {
    int64_t row = x / half, i = x % half;
    double angle = static_cast<double>(first + row % positions) *
                   pow(base, -2.0 * static_cast<double>(i) /
                                 static_cast<double>(width));
    double sine, cosine;
    sincos(angle, &sine, &cosine);
    const float c = static_cast<float>(cosine);
    const float s = static_cast<float>(sign * sine);
    const float *in = input + row * width;
    const float low = in[i], high = in[i + half];
    out[row * width + i] = low * c - high * s;
    out[row * width + i + half] = high * c + low * s;
  }
}

void rotary(const float *input, float *out, int64_t rows, int64_t positions,
            int64_t width, double base, bool inverse, int64_t first) {
  int64_t count = rows * (width / 2);
  if (count == 0)
    return;
  rotaryKernel<<<blocksFor(count), kThreads, 0, stream()>>>(
      input, out, rows, positions, width, base, inverse ? -1.0 : 1.0, first);
  TGC_CUDA_CHECK_LAUNCH();
}

/// Copies `rows` runs of `run` floats, `fromStride` apart in `from`,
/// `toStride` apart in `to`, as one 2-D copy: the blocks of slices and of
/// their stores.
static void copyRuns(const float *from, int64_t fromStride, float *to,
                     int64_t toStride, int64_t rows, int64_t run) {
  if (rows * run == 0)
    return;
  auto bytes = [](int64_t floats) {
    return static_cast<size_t>(floats) * sizeof(float);
  };
  TGC_CUDA_CHECK(cudaMemcpy2DAsync(to, bytes(toStride), from, bytes(fromStride),
                                   bytes(run), static_cast<size_t>(rows),
                                   cudaMemcpyDeviceToDevice, stream()));
}

void storeSlice(float *target, const float *value, int64_t outer,
                int64_t length, int64_t extent, int64_t inner, int64_t index) {
  copyRuns(value, length * inner, target + index * inner, extent * inner,
           outer, length * inner);
}

void slice(const float *input, float *out, int64_t outer, int64_t length,
           int64_t extent, int64_t inner, int64_t index) {
  copyRuns(input + index * inner, extent * inner, out, length * inner, outer,
           length * inner);
}

void sliceGrad(const float *grad, float *out, int64_t outer, int64_t length,
               int64_t extent, int64_t inner, int64_t index) {
  // Each output element written once: the zeros before and after the
  // gradient's positions as two 2-D fills, then the gradient.
  size_t pitch = static_cast<size_t>(extent * inner) * sizeof(float);
  int64_t after = extent - index - length;
  if (index > 0)
    TGC_CUDA_CHECK(cudaMemset2DAsync(
        out, pitch, 0, static_cast<size_t>(index * inner) * sizeof(float),
        static_cast<size_t>(outer), stream()));
  if (after > 0)
    TGC_CUDA_CHECK(cudaMemset2DAsync(
        out + (index + length) * inner, pitch, 0,
        static_cast<size_t>(after * inner) * sizeof(float),
        static_cast<size_t>(outer), stream()));
  storeSlice(out, grad, outer, length, extent, inner, index);
}

__global__ void paddingMaskKernel(const int32_t *ids, float *out,
                                  int64_t count, int32_t padId) {
  TGC_GRID_STRIDE(i, count) { out[i] = ids[i] == padId ? kMaskedScore : 0.0f; }
}

void paddingMask(const int32_t *ids, float *out, int64_t count, int32_t padId) {
  if (count == 0)
    return;
  paddingMaskKernel<<<blocksFor(count), kThreads, 0, stream()>>>(ids, out,
                                                                 count, padId);
  TGC_CUDA_CHECK_LAUNCH();
}

__global__ void causalMaskKernel(float *out, int64_t size) {
  TGC_GRID_STRIDE(x, size * size) {
    out[x] = x % size > x / size ? kMaskedScore : 0.0f;
  }
}

void causalMask(float *out, int64_t size) {
  if (size == 0)
    return;
  causalMaskKernel<<<blocksFor(size * size), kThreads, 0, stream()>>>(out,
                                                                      size);
  TGC_CUDA_CHECK_LAUNCH();
}

} // namespace tgc::cuda
