//===- Tensor.cpp - layouts, reductions, slices, gathers, embeddings ---===//
#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/cpu/Kernels.h"
#include "runtime/kernels/cpu/ReusedBuffer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <omp.h>
#include <vector>

namespace tgc::cpu {

using runtime::kMaxRank;

/// Below this many elements a loop stays serial: waking the team costs
/// more than the copy.
static constexpr int64_t kParallelTensorElements = 1 << 15;

/// Writes out [shape] (rank >= 1) from input, output element (c_0..c_r-1)
/// coming from input offset sum c_d * from[d] (a stride of 0 replicates).
/// Each line of the innermost output dimension is one contiguous write.
/// In and Out are float, or int32_t, or float and Bf16 (each value rounded
/// as it is written).
template <typename In, typename Out>
static void gatherStrided(const In *input, Out *out, const int64_t *shape,
                          const int64_t *from, int rank) {
  static_assert(std::is_same_v<In, Out> || std::is_same_v<Out, Bf16>);
  int64_t inner = shape[rank - 1], step = from[rank - 1];
  int64_t total = 1;
  for (int d = 0; d < rank; ++d)
    total *= shape[d];
  if (total == 0)
    return;
  int64_t lines = total / inner;
#pragma omp parallel for schedule(static) if (total >= kParallelTensorElements)
  for (int64_t line = 0; line < lines; ++line) {
    int64_t rest = line, source = 0;
    for (int d = rank - 2; d >= 0; --d) {
      source += (rest % shape[d]) * from[d];
      rest /= shape[d];
    }
    const In *in = input + source;
    Out *o = out + line * inner;
    if constexpr (std::is_same_v<Out, Bf16>) {
      for (int64_t x = 0; x < inner; ++x)
        o[x] = runtime::roundToBf16(in[x * step]);
    } else if (step == 1) {
      std::memcpy(o, in, inner * sizeof(In));
    } else if (step == 0) {
      std::fill(o, o + inner, *in);
    } else {
      for (int64_t x = 0; x < inner; ++x)
        o[x] = in[x * step];
    }
  }
}

template <typename In, typename Out>
static void transposeTo(const In *input, Out *out,
                        const int64_t *inputShape, const int64_t *permutation,
                        int rank) {
  if (rank == 0) {
    const int64_t one = 1, none = 0;
    gatherStrided(input, out, &one, &none, 1);
    return;
  }
  int64_t strides[kMaxRank] = {}, shape[kMaxRank] = {}, from[kMaxRank] = {};
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= inputShape[d];
  }
  for (int d = 0; d < rank; ++d) {
    shape[d] = inputShape[permutation[d]];
    from[d] = strides[permutation[d]];
  }
  gatherStrided(input, out, shape, from, rank);
}

void transpose(const float *input, float *out, const int64_t *inputShape,
               const int64_t *permutation, int rank) {
  transposeTo(input, out, inputShape, permutation, rank);
}

void transpose(const float *input, Bf16 *out, const int64_t *inputShape,
               const int64_t *permutation, int rank) {
  transposeTo(input, out, inputShape, permutation, rank);
}

template <typename T>
static void broadcastOf(const T *input, T *out, const int64_t *resultShape,
                        int resultRank, const int64_t *dims,
                        const int64_t *inputShape, int inputRank) {
  if (resultRank == 0) {
    out[0] = input[0];
    return;
  }
  // Result dimensions not named, and named ones the input has as 1, read
  // with stride 0.
  int64_t from[kMaxRank] = {};
  int64_t stride = 1;
  for (int j = inputRank - 1; j >= 0; --j) {
    if (inputShape[j] != 1)
      from[dims[j]] = stride;
    stride *= inputShape[j];
  }
  gatherStrided(input, out, resultShape, from, resultRank);
}

void transpose(const int32_t *input, int32_t *out, const int64_t *inputShape,
               const int64_t *permutation, int rank) {
  transposeTo(input, out, inputShape, permutation, rank);
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

namespace {
/// A reduction with adjacent dimensions of the same kind merged and size-1
/// dimensions dropped: alternating runs of kept and reduced elements.
struct ReducePlan {
  int groups = 0;
  int64_t size[kMaxRank], inStride[kMaxRank], outStride[kMaxRank];
  bool reduced[kMaxRank];
};
} // namespace

/// A maximum with a NaN element is NaN (as tg.maximum's).
template <Reduction K> static double combine(double acc, double x) {
  return K == Reduction::Max ? elementwise::maximum(acc, x) : acc + x;
}

/// An input element as a number: f32 as it is, bf16 widened (exactly).
static float valueOf(float x) { return x; }
static float valueOf(Bf16 x) { return runtime::widen(x); }

/// Folds the input below group `level` into acc (the outputs it maps to).
template <Reduction K, typename T>
static void accumulate(const ReducePlan &plan, int level, const T *in,
                       double *acc) {
  int64_t n = plan.size[level];
  if (level == plan.groups - 1) {
    if (!plan.reduced[level]) {
      for (int64_t x = 0; x < n; ++x)
        acc[x] = combine<K>(acc[x], valueOf(in[x]));
    } else if (K == Reduction::Max) {
      // The vector max drops NaN: whether there is one, counted beside it.
      double m = *acc;
      int nans = 0;
#pragma omp simd reduction(max : m) reduction(+ : nans)
      for (int64_t x = 0; x < n; ++x) {
        double v = valueOf(in[x]);
        m = std::max(m, v);
        nans += v != v;
      }
      *acc = nans ? std::numeric_limits<double>::quiet_NaN()
                  : elementwise::maximum(*acc, m);
    } else {
      double s = 0.0;
#pragma omp simd reduction(+ : s)
      for (int64_t x = 0; x < n; ++x)
        s += valueOf(in[x]);
      *acc += s;
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    accumulate<K>(plan, level + 1, in + i * plan.inStride[level],
                  plan.reduced[level] ? acc : acc + i * plan.outStride[level]);
}

template <Reduction K, typename T>
static void reduceInto(const ReducePlan &plan, const T *input, double *acc,
                       int64_t total) {
  bool parallel = total >= kParallelTensorElements;
  if (plan.groups >= 2 && !plan.reduced[0]) {
    // Outermost kept: its slices write disjoint outputs.
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t i = 0; i < plan.size[0]; ++i)
      accumulate<K>(plan, 1, input + i * plan.inStride[0],
                    acc + i * plan.outStride[0]);
  } else if (plan.groups == 2) {
    // [rows reduced, columns kept] (bias gradients): blocks of rows, each
    // folded into its own partial row, then the partials in block order.
    // Parallel however few the columns (column chunks left one thread
    // alone on d_model = 128), and the same result for any thread count.
    constexpr int64_t kBlockRows = 64;
    int64_t rows = plan.size[0], cols = plan.size[1];
    int64_t blocks = (rows + kBlockRows - 1) / kBlockRows;
    struct BlockPartials;
    std::vector<double> &partial =
        reusedBuffer<BlockPartials>(blocks * cols, acc[0]);
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t b = 0; b < blocks; ++b) {
      double *p = partial.data() + b * cols;
      for (int64_t r = b * kBlockRows; r < std::min(rows, (b + 1) * kBlockRows);
           ++r) {
        const T *row = input + r * cols;
#pragma omp simd
        for (int64_t c = 0; c < cols; ++c)
          p[c] = combine<K>(p[c], valueOf(row[c]));
      }
    }
    for (int64_t b = 0; b < blocks; ++b)
      for (int64_t c = 0; c < cols; ++c)
        acc[c] = combine<K>(acc[c], partial[b * cols + c]);
  } else {
    accumulate<K>(plan, 0, input, acc);
  }
}

template <typename T>
static void reduceOf(const T *input, float *out, const int64_t *shape, int rank,
                     const bool *reduced, Reduction kind) {
  ReducePlan plan;
  int64_t total = 1, outCount = 1;
  for (int d = 0; d < rank; ++d) {
    total *= shape[d];
    if (!reduced[d])
      outCount *= shape[d];
    if (shape[d] == 1)
      continue;
    if (plan.groups > 0 && plan.reduced[plan.groups - 1] == reduced[d]) {
      plan.size[plan.groups - 1] *= shape[d];
      continue;
    }
    plan.size[plan.groups] = shape[d];
    plan.reduced[plan.groups++] = reduced[d];
  }
  if (plan.groups == 0) { // a single element
    plan.size[0] = 1;
    plan.reduced[plan.groups++] = false;
  }
  int64_t in = 1, o = 1;
  for (int g = plan.groups - 1; g >= 0; --g) {
    plan.inStride[g] = in;
    plan.outStride[g] = o;
    in *= plan.size[g];
    if (!plan.reduced[g])
      o *= plan.size[g];
  }
  // Double accumulators: sums over many rows (bias gradients) stay exact to
  // float precision.
  double init =
      kind == Reduction::Max ? -std::numeric_limits<double>::infinity() : 0.0;
  struct Accumulators;
  std::vector<double> &acc = reusedBuffer<Accumulators>(outCount, init);
  if (total > 0) {
    if (kind == Reduction::Max)
      reduceInto<Reduction::Max>(plan, input, acc.data(), total);
    else
      reduceInto<Reduction::Sum>(plan, input, acc.data(), total);
  }
  double count = outCount > 0 ? static_cast<double>(total) / outCount : 1.0;
  double divisor = kind == Reduction::Mean ? count : 1.0;
  for (int64_t i = 0; i < outCount; ++i)
    out[i] = static_cast<float>(acc[i] / divisor);
}

void reduce(const float *input, float *out, const int64_t *shape, int rank,
            const bool *reduced, Reduction kind) {
  reduceOf(input, out, shape, rank, reduced, kind);
}

void reduce(const Bf16 *input, float *out, const int64_t *shape, int rank,
            const bool *reduced, Reduction kind) {
  reduceOf(input, out, shape, rank, reduced, kind);
}

void embedding(const float *table, const int32_t *ids, float *out,
               int64_t rows, int64_t width) {
#pragma omp parallel for schedule(static) if (rows * width >= kParallelTensorElements)
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(out + r * width, table + static_cast<int64_t>(ids[r]) * width,
                width * sizeof(float));
}

namespace {
/// gatherGrad onto `base` (null: zeros; `out`: in place). Each thread owns a
/// range of the [outer * extent] output rows, starts it from the base and
/// scans every index: no two threads add into one row, and each row sums
/// its gradients in index order whatever the thread count. (The zeroing, a
/// whole [vocabulary, width] table for the embedding's, was serial before:
/// 76 MB a call at 37000 x 512.)
void addGatheredRows(const float *grad, const int32_t *indices,
                     const float *base, float *out, int64_t outer,
                     int64_t extent, int64_t count, int64_t inner) {
  const int64_t rows = outer * extent;
  if (rows == 0) // an empty table: nothing to start from or add into
    return;
#pragma omp parallel if (std::max(rows, outer * count) * inner >=              \
                         kParallelTensorElements)
  {
    int threads = omp_get_num_threads(), thread = omp_get_thread_num();
    int64_t first = rows * thread / threads;
    int64_t last = rows * (thread + 1) / threads;
    if (!base)
      std::fill(out + first * inner, out + last * inner, 0.0f);
    else if (base != out)
      std::copy(base + first * inner, base + last * inner, out + first * inner);
    for (int64_t o = first / extent; o * extent < last; ++o)
      for (int64_t i = 0; i < count; ++i) {
        int64_t index = indices[i], row = o * extent + index;
        if (index < 0 || index >= extent || row < first || row >= last)
          continue;
        float *to = out + row * inner;
        const float *g = grad + (o * count + i) * inner;
        for (int64_t d = 0; d < inner; ++d)
          to[d] += g[d];
      }
  }
}
} // namespace

void embeddingGrad(const float *grad, const int32_t *ids, const float *base,
                   float *out, int64_t rows, int64_t width, int64_t vocab) {
  addGatheredRows(grad, ids, base, out, 1, vocab, rows, width);
}

void gather(const float *input, const int32_t *indices, float *out,
            int64_t outer, int64_t extent, int64_t count, int64_t inner) {
#pragma omp parallel for schedule(static) if (outer * count * inner >= kParallelTensorElements)
  for (int64_t line = 0; line < outer * count; ++line) {
    int64_t o = line / count, index = indices[line % count];
    float *to = out + line * inner;
    if (index < 0 || index >= extent)
      std::fill(to, to + inner, 0.0f);
    else
      std::memcpy(to, input + (o * extent + index) * inner,
                  inner * sizeof(float));
  }
}

void gatherGrad(const float *grad, const int32_t *indices, float *out,
                int64_t outer, int64_t extent, int64_t count, int64_t inner) {
  addGatheredRows(grad, indices, nullptr, out, outer, extent, count, inner);
}

void positionalEncoding(float *out, int64_t positions, int64_t width,
                        int64_t first) {
  // Double angles: pos / 10000^(2i/width) reaches thousands of radians,
  // where a float angle would be off by more than float's sin precision.
  for (int64_t pos = 0; pos < positions; ++pos)
    for (int64_t i = 0; 2 * i < width; ++i) {
      double angle = static_cast<double>(first + pos) /
                     std::pow(10000.0, static_cast<double>(2 * i) /
                                           static_cast<double>(width));
      out[pos * width + 2 * i] = static_cast<float>(std::sin(angle));
      if (2 * i + 1 < width)
        out[pos * width + 2 * i + 1] = static_cast<float>(std::cos(angle));
    }
}

void rotary(const float *input, float *out, int64_t rows, int64_t positions,
            int64_t width, double base, bool inverse, int64_t first) {
  const int64_t half = width / 2;
  std::vector<double> frequency(half);
  for (int64_t i = 0; i < half; ++i)
    frequency[i] = std::pow(base, -2.0 * static_cast<double>(i) /
                                      static_cast<double>(width));
  const double sign = inverse ? -1.0 : 1.0;
  // Double angles, as positionalEncoding: position * frequency reaches
  // thousands of radians. Each (position, i) angle is computed once per row.
#pragma omp parallel for schedule(static) if (rows * width >= kParallelTensorElements)
  for (int64_t row = 0; row < rows; ++row) {
    const double position = static_cast<double>(first + row % positions);
    const float *x = input + row * width;
    float *y = out + row * width;
    for (int64_t i = 0; i < half; ++i) {
      const double angle = position * frequency[i];
      const float c = static_cast<float>(std::cos(angle));
      const float s = static_cast<float>(sign * std::sin(angle));
      const float low = x[i], high = x[i + half];
      y[i] = low * c - high * s;
      y[i + half] = high * c + low * s;
    }
  }
}

/// Copies `rows` runs of `run` floats, `fromStride` apart in `from`,
/// `toStride` apart in `to`: the blocks of slices and of their stores.
static void copyRuns(const float *from, int64_t fromStride, float *to,
                     int64_t toStride, int64_t rows, int64_t run) {
#pragma omp parallel for schedule(static) if (rows * run >= kParallelTensorElements)
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(to + r * toStride, from + r * fromStride,
                static_cast<size_t>(run) * sizeof(float));
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
  // Each output row written once: zeros, the gradient, zeros.
#pragma omp parallel for schedule(static) if (outer * extent * inner >= kParallelTensorElements)
  for (int64_t o = 0; o < outer; ++o) {
    float *row = out + o * extent * inner;
    std::fill(row, row + index * inner, 0.0f);
    std::memcpy(row + index * inner, grad + o * length * inner,
                static_cast<size_t>(length * inner) * sizeof(float));
    std::fill(row + (index + length) * inner, row + extent * inner, 0.0f);
  }
}

void paddingMask(const int32_t *ids, float *out, int64_t count, int32_t padId) {
  for (int64_t i = 0; i < count; ++i)
    out[i] = ids[i] == padId ? kMaskedScore : 0.0f;
}

void causalMask(float *out, int64_t size) {
  for (int64_t i = 0; i < size; ++i)
    for (int64_t j = 0; j < size; ++j)
      out[i * size + j] = j > i ? kMaskedScore : 0.0f;
}

} // namespace tgc::cpu
