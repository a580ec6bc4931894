//===- Tensor.cu - layouts, slices, gathers, embeddings, positions, masks ===//
//
// Grid-stride loops, one thread per output element, except embeddingGrad
// (CUB's radix sort groups the rows by id, then blocks sum chunks of the
// sorted rows and the runs that cross chunks), which gatherGrad of whole
// rows shares, and the slices' block copies (2-D copies and fills).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cuda/Bf16Quads.cuh"
#include "runtime/kernels/cuda/Device.h"
#include "runtime/kernels/cuda/EmbeddingGradKernels.cuh"

#include <cub/device/device_radix_sort.cuh>

#include <type_traits>

namespace tgc::cuda {

namespace {
using runtime::kMaxRank;

/// out [shape] (row-major) where element (c_0..c_r-1) is read from input
/// offset sum c_d * from[d] (a stride of 0 replicates). Passed by value:
/// the shapes travel in the kernel's parameters.
struct Gather {
  int rank = 0;
  int64_t shape[kMaxRank] = {}, from[kMaxRank] = {};
};
} // namespace

/// What a gather writes for a value it read: the value, or (a rounding
/// transpose) the value rounded to bf16, four at a time as one uint2.
__device__ inline float narrowed(float x, float *) { return x; }
__device__ inline float4 narrowed(float4 x, float4 *) { return x; }
__device__ inline int32_t narrowed(int32_t x, int32_t *) { return x; }
__device__ inline int4 narrowed(int4 x, int4 *) { return x; }
__device__ inline Bf16 narrowed(float x, Bf16 *) {
  return runtime::roundToBf16(x);
}
__device__ inline uint2 narrowed(float4 x, uint2 *) { return roundedQuad(x); }

/// Index is uint32_t when every offset fits: the division per dimension
/// is then several times cheaper than int64_t's, and it was what limited
/// the kernel (a base step's head transposes took 14 ms).
template <typename Index, typename Element, typename Out>
__global__ void gatherKernel(const Element *input, Out *out, Gather g,
                             int64_t total) {
  Index shape[kMaxRank], from[kMaxRank];
  for (int d = 0; d < g.rank; ++d) {
    shape[d] = static_cast<Index>(g.shape[d]);
    from[d] = static_cast<Index>(g.from[d]);
  }
  TGC_GRID_STRIDE(i, total) {
    Index rest = static_cast<Index>(i), source = 0;
    for (int d = g.rank - 1; d >= 0; --d) {
      source += (rest % shape[d]) * from[d];
      rest /= shape[d];
    }
    out[i] = narrowed(input[source], out);
  }
}

template <typename Element, typename Out>
static void launchGather(const Element *input, Out *out, const Gather &g) {
  int64_t total = 1; // rank 0: one element
  for (int d = 0; d < g.rank; ++d)
    total *= g.shape[d];
  if (total == 0)
    return;
  // The largest input offset read: the sum of (size - 1) * stride.
  int64_t largest = 0;
  for (int d = 0; d < g.rank; ++d)
    largest += (g.shape[d] - 1) * g.from[d];
  if (total <= UINT32_MAX && largest <= UINT32_MAX)
    gatherKernel<uint32_t><<<blocksFor(total), kThreads, 0, stream()>>>(
        input, out, g, total);
  else
    gatherKernel<int64_t><<<blocksFor(total), kThreads, 0, stream()>>>(
        input, out, g, total);
  TGC_CUDA_CHECK_LAUNCH();
}

/// Moves 4 values at a time when the innermost dimension is read in place
/// in runs of 4 aligned values (a head split or merge keeps its 64 values
/// per head together): a quarter of the index arithmetic. In and Out are
/// float, or int32_t, or float and Bf16 (4 rounded values written as one
/// uint2).
template <typename In, typename Out>
static void gatherStrided(const In *input, Out *out, const Gather &g) {
  static_assert(std::is_same_v<In, Out> || std::is_same_v<Out, Bf16>);
  using InQuad = std::conditional_t<std::is_same_v<In, int32_t>, int4, float4>;
  using Quad = std::conditional_t<std::is_same_v<Out, Bf16>, uint2, InQuad>;
  auto aligned = [](const void *p, size_t bytes) {
    return reinterpret_cast<uintptr_t>(p) % bytes == 0;
  };
  int last = g.rank - 1;
  bool byFour = g.rank > 0 && g.from[last] == 1 && g.shape[last] % 4 == 0 &&
                aligned(input, sizeof(InQuad)) && aligned(out, sizeof(Quad));
  for (int d = 0; byFour && d < last; ++d)
    byFour = g.from[d] % 4 == 0;
  if (!byFour)
    return launchGather(input, out, g);
  Gather quads = g;
  quads.shape[last] /= 4;
  for (int d = 0; d < last; ++d)
    quads.from[d] /= 4;
  launchGather(reinterpret_cast<const InQuad *>(input),
               reinterpret_cast<Quad *>(out), quads);
}

template <typename In, typename Out>
static void transposeTo(const In *input, Out *out,
                        const int64_t *inputShape, const int64_t *permutation,
                        int rank) {
  int64_t strides[kMaxRank] = {};
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= inputShape[d];
  }
  Gather g;
  g.rank = rank;
  for (int d = 0; d < rank; ++d) {
    g.shape[d] = inputShape[permutation[d]];
    g.from[d] = strides[permutation[d]];
  }
  gatherStrided(input, out, g);
}

void transpose(const float *input, float *out, const int64_t *inputShape,
               const int64_t *permutation, int rank) {
  transposeTo(input, out, inputShape, permutation, rank);
}

void transpose(const float *input, Bf16 *out, const int64_t *inputShape,
               const int64_t *permutation, int rank) {
  transposeTo(input, out, inputShape, permutation, rank);
}

void transpose(const int32_t *input, int32_t *out, const int64_t *inputShape,
               const int64_t *permutation, int rank) {
  transposeTo(input, out, inputShape, permutation, rank);
}

template <typename T>
static void broadcastOf(const T *input, T *out, const int64_t *resultShape,
                        int resultRank, const int64_t *dims,
                        const int64_t *inputShape, int inputRank) {
  // Result dimensions not named, and named ones the input has as 1, read
  // with stride 0.
  Gather g;
  g.rank = resultRank;
  for (int d = 0; d < resultRank; ++d)
    g.shape[d] = resultShape[d];
  int64_t stride = 1;
  for (int j = inputRank - 1; j >= 0; --j) {
    if (inputShape[j] != 1)
      g.from[dims[j]] = stride;
    stride *= inputShape[j];
  }
  gatherStrided(input, out, g);
}

void broadcast(const float *input, float *out, const int64_t *resultShape,
               int resultRank, const int64_t *dims, const int64_t *inputShape,
               int inputRank) {
  broadcastOf(input, out, resultShape, resultRank, dims, inputShape,
              inputRank);
}

void broadcast(const int32_t *input, int32_t *out,
               const int64_t *resultShape, int resultRank, const int64_t *dims,
               const int64_t *inputShape, int inputRank) {
  broadcastOf(input, out, resultShape, resultRank, dims, inputShape,
              inputRank);
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
