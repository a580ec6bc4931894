//===- CudaKernelsTest.cpp - CUDA kernels against the CPU kernels ---===//
//
// Every kernel of runtime/kernels/cuda/Kernels.h runs on random f32 inputs (fixed
// seeds) and is compared with its twin in runtime/kernels/cpu/Kernels.h on the same
// values, itself tested against the interpreter (test/unit/kernels/cpu). Shapes are
// not multiples of the kernels' tiles (attention: 16 queries x 32 keys on
// the GPU, 16 x 64 on the CPU) and head sizes reach 128 (attention's
// shared memory beyond 48 KiB).
//
// Error of element i: |gpu_i - cpu_i| / max(|cpu_i|, rms), rms the CPU
// tensor's root mean square (as test/unit/kernels/cpu). Both sides round in float
// but sum in different orders, so the tolerances are about twice the CPU's
// against the reference; tolerance 0 means bit-exact (data movement, and
// sums both sides add in the same order). Dropout masks must be the same
// bits: the zeros fall in the same places.
//
// Without a usable GPU (none, no driver, a driver error) every test is
// skipped with CUDA's message; the binary still builds and lists its tests.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cpu/Kernels.h"
#include "runtime/kernels/cuda/Device.h"
#include "runtime/program/cuda/DeviceStep.h"
#include "test/unit/RandomInputs.h"
#include "test/unit/kernels/cuda/DropoutProbe.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace cpu = tgc::cpu;
namespace cuda = tgc::cuda;

namespace {

/// Why the kernels cannot run here ("" when they can); asked once. Any
/// error counts: without a device or a driver, CUDA reports several.
const std::string &gpuProblem() {
  static const std::string problem = []() -> std::string {
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    if (status == cudaSuccess && count == 0)
      return "cudaGetDeviceCount found no device";
    if (status == cudaSuccess)
      status = cudaSetDevice(0);
    if (status == cudaSuccess)
      status = cudaFree(nullptr); // creates the context
    if (status != cudaSuccess)
      return std::string(cudaGetErrorName(status)) + ": " +
             cudaGetErrorString(status);
    return "";
  }();
  return problem;
}

class CudaKernels : public ::testing::Test {
protected:
  void SetUp() override {
    if (!gpuProblem().empty())
      GTEST_SKIP() << "no usable GPU: " << gpuProblem();
  }
  // Kernels record the first CUDA error instead of exiting: a test whose
  // calls failed must say so with CUDA's message.
  void TearDown() override {
    std::string why;
    EXPECT_FALSE(tgc::cuda::firstError(why)) << why;
  }
};

/// Device memory holding a copy of a host vector.
template <typename T> class DeviceArray {
public:
  explicit DeviceArray(const std::vector<T> &host) : count(host.size()) {
    TGC_CUDA_CHECK(cudaMalloc(&memory, bytes()));
    TGC_CUDA_CHECK(
        cudaMemcpy(memory, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  explicit DeviceArray(size_t count, T fill = T())
      : DeviceArray(std::vector<T>(count, fill)) {}
  ~DeviceArray() { cudaFree(memory); }
  DeviceArray(const DeviceArray &) = delete;
  DeviceArray &operator=(const DeviceArray &) = delete;

  T *get() const { return memory; }
  /// The contents, after the work queued before (the copy synchronizes
  /// with the legacy default stream the kernels use).
  std::vector<T> read() const {
    std::vector<T> host(count);
    TGC_CUDA_CHECK(
        cudaMemcpy(host.data(), memory, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }

private:
  size_t bytes() const { return count * sizeof(T); }
  T *memory = nullptr;
  size_t count;
};

using tgc::test::randomIds;
using tgc::test::uniform;

int64_t countOf(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  return count;
}

/// The worst per-element error (see the file comment).
double worstError(const std::vector<float> &actual,
                  const std::vector<float> &expected) {
  double squares = 0.0;
  for (float e : expected)
    squares += static_cast<double>(e) * e;
  double rms = std::sqrt(squares / std::max<size_t>(1, expected.size()));
  double worst = 0.0;
  for (size_t i = 0; i < actual.size(); ++i) {
    double diff = std::abs(static_cast<double>(actual[i]) - expected[i]);
    double scale = std::max<double>(std::abs(expected[i]), rms);
    worst = std::max(worst, scale > 0.0 ? diff / scale : diff);
  }
  return worst;
}

/// Compares, prints the worst error, and rejects an all-zero result (a
/// kernel that wrote nothing must not pass against a zero expectation).
void expectClose(const std::string &what, const std::vector<float> &actual,
                 const std::vector<float> &expected, double tolerance) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  double worst = worstError(actual, expected);
  std::cout << "  worst error " << what << ": " << worst << " (tolerance "
            << tolerance << ")\n";
  EXPECT_LE(worst, tolerance) << what;
  EXPECT_TRUE(std::any_of(actual.begin(), actual.end(),
                          [](float x) { return x != 0.0f; }))
      << what << " is all zeros";
}

/// Dropout's zeros (where the expectation has none otherwise) are the same
/// elements on both sides, and there are some.
void expectSameZeros(const std::string &what, const std::vector<float> &actual,
                     const std::vector<float> &expected) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  int64_t zeros = 0, mismatches = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    zeros += expected[i] == 0.0f;
    mismatches += (actual[i] == 0.0f) != (expected[i] == 0.0f);
  }
  std::cout << "  " << what << ": " << zeros << " dropped of " << actual.size()
            << ", " << mismatches << " differ\n";
  EXPECT_EQ(mismatches, 0) << what;
  EXPECT_GT(zeros, 0) << what << ": nothing dropped";
}

cpu::Dropout cpuDropout(float rate) { return {1234, 7, 3, rate}; }
cuda::Dropout cudaDropout(float rate) { return {1234, 7, 3, rate}; }

//===--- Philox.h on the device -------------------------------------------===//

// The device's Philox stream is the host's, bit for bit, including indices
// past 2^32 (the counter's second word).
TEST_F(CudaKernels, DropoutStream) {
  for (uint64_t first : {uint64_t{0}, (uint64_t{1} << 32) - 1001}) {
    const int64_t count = 5003;
    std::vector<float> device =
        tgc::test::deviceDropoutFactors(cudaDropout(0.3f), first, count);
    std::vector<float> host(count);
    for (int64_t x = 0; x < count; ++x)
      host[x] = cpuDropout(0.3f).factor(first + x);
    EXPECT_EQ(device, host) << "from index " << first;
    expectSameZeros("dropout factors from " + std::to_string(first), device,
                    host);
  }
}

//===--- Gemm.cu ----------------------------------------------------------===//

// Full-f32 cuBLAS against OpenBLAS: k = 53 products in different orders.
constexpr double kGemmTolerance = 1e-5;

TEST_F(CudaKernels, Matmul) {
  const int64_t batch = 3, m = 37, n = 29, k = 53;
  for (bool shared : {false, true})
    for (bool tl : {false, true})
      for (bool tr : {false, true}) {
        std::vector<float> lhs = uniform(batch * m * k, 1);
        std::vector<float> rhs = uniform((shared ? 1 : batch) * k * n, 2);
        std::vector<float> expected(batch * m * n);
        cpu::matmul(lhs.data(), rhs.data(), expected.data(), batch, m, n, k, tl,
                    tr, shared);
        DeviceArray<float> dl(lhs), dr(rhs), out(batch * m * n);
        cuda::matmul(dl.get(), dr.get(), out.get(), batch, m, n, k, tl, tr,
                     shared);
        expectClose("matmul shared=" + std::to_string(shared) +
                        " transposeLhs=" + std::to_string(tl) +
                        " transposeRhs=" + std::to_string(tr),
                    out.read(), expected, kGemmTolerance);
      }
}

TEST_F(CudaKernels, Linear) {
  const int64_t rows = 300, k = 45, n = 70;
  std::vector<float> input = uniform(rows * k, 3), weight = uniform(k * n, 4),
                     bias = uniform(n, 5);
  DeviceArray<float> di(input), dw(weight), db(bias);
  for (bool withBias : {true, false})
    for (bool relu : {false, true}) {
      const float *hostBias = withBias ? bias.data() : nullptr;
      std::vector<float> expected(rows * n);
      cpu::linear(input.data(), weight.data(), hostBias, expected.data(), rows,
                  k, n, relu);
      DeviceArray<float> out(rows * n);
      int64_t fused = cuda::fusedLinearCalls();
      cuda::linear(di.get(), dw.get(), withBias ? db.get() : nullptr, out.get(),
                   rows, k, n, relu);
      std::string tag = "linear bias=" + std::to_string(withBias) +
                        " relu=" + std::to_string(relu);
      expectClose(tag, out.read(), expected, kGemmTolerance);
      // cudaMalloc's 256-byte aligned operands: cuBLASLt's fused epilogue.
      EXPECT_EQ(cuda::fusedLinearCalls(), fused + 1) << tag;
    }
}

// Tensors inside the arena are only 4-byte aligned at worst: cuBLASLt must
// then pick an algorithm for that alignment (one float past cudaMalloc's 256
// bytes), or linear falls back to cuBLAS and the epilogue kernel. Biases
// aligned to 256, 4, 16 and 64 bytes (the state's variables: 64); an empty
// sum gives the bias.
TEST_F(CudaKernels, LinearOnUnalignedTensors) {
  for (int64_t k : {33, 0})
    for (int64_t biasShift : {0, 1, 4, 16}) {
      const int64_t rows = 130, n = 66;
      // Input, weight and output start one float into their buffers: the
      // host vectors hold one float more, which the pointers skip.
      std::vector<float> input = uniform(rows * k + 1, 9),
                         weight = uniform(k * n + 1, 10),
                         bias = uniform(n + 16, 11);
      std::vector<float> expected(rows * n + 1);
      cpu::linear(input.data() + 1, weight.data() + 1, bias.data() + biasShift,
                  expected.data() + 1, rows, k, n, true);
      DeviceArray<float> di(input), dw(weight), db(bias), out(rows * n + 1);
      cuda::linear(di.get() + 1, dw.get() + 1, db.get() + biasShift,
                   out.get() + 1, rows, k, n, true);
      std::vector<float> got = out.read();
      expectClose("linear, 4-byte aligned, k=" + std::to_string(k) +
                      ", bias shifted by " + std::to_string(biasShift),
                  std::vector<float>(got.begin() + 1, got.end()),
                  std::vector<float>(expected.begin() + 1, expected.end()),
                  kGemmTolerance);
    }
}

// Kernels enqueue on the stream set, cuBLAS included.
TEST_F(CudaKernels, Stream) {
  cudaStream_t stream;
  TGC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cuda::setStream(stream);
  EXPECT_EQ(cuda::stream(), stream);
  const int64_t rows = 64, k = 32, n = 48;
  std::vector<float> input = uniform(rows * k, 6), weight = uniform(k * n, 7),
                     bias = uniform(n, 8);
  std::vector<float> expected(rows * n);
  cpu::linear(input.data(), weight.data(), bias.data(), expected.data(), rows,
              k, n, true);
  DeviceArray<float> di(input), dw(weight), db(bias), out(rows * n);
  cuda::linear(di.get(), dw.get(), db.get(), out.get(), rows, k, n, true);
  TGC_CUDA_CHECK(cudaStreamSynchronize(stream));
  cuda::setStream(nullptr);
  TGC_CUDA_CHECK(cudaStreamDestroy(stream));
  expectClose("linear on a stream", out.read(), expected, kGemmTolerance);
}

//===--- TensorKernels.cu -------------------------------------------------===//

// Data movement: bit-exact.
TEST_F(CudaKernels, Transpose) {
  struct Case {
    std::vector<int64_t> shape, permutation;
  };
  for (const Case &c :
       {Case{{3, 37, 4, 8}, {0, 2, 1, 3}}, Case{{37, 53}, {1, 0}},
        Case{{3, 5, 7, 4}, {3, 1, 0, 2}}, Case{{200, 3, 70}, {1, 0, 2}},
        Case{{}, {}}}) {
    int64_t count = countOf(c.shape);
    std::vector<float> input = uniform(count, 9);
    int rank = static_cast<int>(c.shape.size());
    std::vector<float> expected(count);
    cpu::transpose(input.data(), expected.data(), c.shape.data(),
                   c.permutation.data(), rank);
    DeviceArray<float> in(input), out(count);
    cuda::transpose(in.get(), out.get(), c.shape.data(), c.permutation.data(),
                    rank);
    expectClose("transpose rank " + std::to_string(rank), out.read(), expected,
                0.0);
  }
}

TEST_F(CudaKernels, Broadcast) {
  struct Case {
    std::vector<int64_t> inputShape, dims, resultShape;
  };
  for (const Case &c :
       {Case{{7}, {2}, {2, 5, 7}}, Case{{2, 7}, {0, 3}, {2, 4, 7, 7}},
        Case{{5}, {0}, {5, 6}}, Case{{70}, {2}, {4, 150, 70}},
        Case{{1, 7}, {0, 1}, {4, 7}}, Case{{37, 1}, {0, 1}, {37, 53}},
        Case{{2, 1, 5}, {0, 1, 3}, {2, 3, 4, 5}}, Case{{}, {}, {3, 4}}}) {
    std::vector<float> input = uniform(countOf(c.inputShape), 10);
    int64_t count = countOf(c.resultShape);
    int resultRank = static_cast<int>(c.resultShape.size());
    int inputRank = static_cast<int>(c.inputShape.size());
    std::vector<float> expected(count);
    cpu::broadcast(input.data(), expected.data(), c.resultShape.data(),
                   resultRank, c.dims.data(), c.inputShape.data(), inputRank);
    DeviceArray<float> in(input), out(count);
    cuda::broadcast(in.get(), out.get(), c.resultShape.data(), resultRank,
                    c.dims.data(), c.inputShape.data(), inputRank);
    expectClose("broadcast to rank " + std::to_string(resultRank), out.read(),
                expected, 0.0);
  }
}

// Double accumulators on both sides: one float rounding apart at most
// (1e-6 leaves room for the Mean's division). Max is exact.
TEST_F(CudaKernels, Reduce) {
  struct Case {
    std::vector<int64_t> shape, dims;
  };
  const std::vector<Case> cases = {{{4, 37, 6, 5}, {0}},
                                   {{4, 37, 6, 5}, {3}},
                                   {{4, 37, 6, 5}, {1, 3}},
                                   {{4, 37, 6, 5}, {0, 2}},
                                   {{4, 37, 6, 5}, {0, 1, 2, 3}},
                                   {{4, 1, 37, 5}, {1}},
                                   {{600, 70}, {0}},
                                   {{600, 70}, {1}},
                                   {{3, 200, 70}, {1}},
                                   {{1, 1}, {0}}};
  const std::pair<cpu::Reduction, cuda::Reduction> kinds[] = {
      {cpu::Reduction::Sum, cuda::Reduction::Sum},
      {cpu::Reduction::Max, cuda::Reduction::Max},
      {cpu::Reduction::Mean, cuda::Reduction::Mean}};
  const char *names[] = {"sum", "max", "mean"};
  for (const Case &c : cases)
    for (int kind = 0; kind < 3; ++kind) {
      int rank = static_cast<int>(c.shape.size());
      std::vector<float> input = uniform(countOf(c.shape), 11);
      bool reduced[8] = {};
      int64_t outCount = 1;
      for (int64_t d : c.dims)
        reduced[d] = true;
      for (int d = 0; d < rank; ++d)
        outCount *= reduced[d] ? 1 : c.shape[d];
      std::vector<float> expected(outCount);
      cpu::reduce(input.data(), expected.data(), c.shape.data(), rank, reduced,
                  kinds[kind].first);
      DeviceArray<float> in(input), out(outCount);
      cuda::reduce(in.get(), out.get(), c.shape.data(), rank, reduced,
                   kinds[kind].second);
      expectClose(std::string("reduce ") + names[kind] + " of " +
                      std::to_string(input.size()) + " into " +
                      std::to_string(outCount),
                  out.read(), expected, kind == 1 ? 0.0 : 1e-6);
    }
}

TEST_F(CudaKernels, Embedding) {
  const int64_t vocab = 50, width = 33, rows = 2 * 37;
  std::vector<float> table = uniform(vocab * width, 12);
  std::vector<int32_t> ids = randomIds(rows, 13, 0, vocab - 1);
  std::vector<float> expected(rows * width);
  cpu::embedding(table.data(), ids.data(), expected.data(), rows, width);
  DeviceArray<float> dt(table), out(rows * width);
  DeviceArray<int32_t> di(ids);
  cuda::embedding(dt.get(), di.get(), out.get(), rows, width);
  expectClose("embedding", out.read(), expected, 0.0);
}

// Both sides add each vocabulary row's gradients in row order: bit-exact.
TEST_F(CudaKernels, EmbeddingGrad) {
  const int64_t rows = 1000, width = 300, vocab = 23;
  std::vector<float> grad = uniform(rows * width, 14);
  // Ids below 20 only: the last vocabulary rows must come out zero.
  std::vector<int32_t> ids = randomIds(rows, 15, 0, 19);
  // Ids outside the vocabulary add nothing on either side.
  ids[3] = -1;
  ids[500] = vocab + 7;
  std::vector<float> expected(vocab * width);
  cpu::embeddingGrad(grad.data(), ids.data(), expected.data(), rows, width,
                     vocab);
  DeviceArray<float> dg(grad), out(vocab * width, 1.0f); // overwritten
  DeviceArray<int32_t> di(ids);
  cuda::embeddingGrad(dg.get(), di.get(), out.get(), rows, width, vocab);
  expectClose("embeddingGrad", out.read(), expected, 0.0);
}

// Double sin/cos rounded to float on both sides (the GPU's double functions
// are within 2 ulp).
TEST_F(CudaKernels, PositionalEncoding) {
  for (int64_t width : {64, 51}) {
    const int64_t positions = 300;
    std::vector<float> expected(positions * width);
    cpu::positionalEncoding(expected.data(), positions, width);
    DeviceArray<float> out(positions * width);
    cuda::positionalEncoding(out.get(), positions, width);
    expectClose("positionalEncoding width " + std::to_string(width), out.read(),
                expected, 1e-6);
  }
  // The decoder's step: positions 137 .. 139 only.
  const int64_t width = 64, first = 137, positions = 3;
  std::vector<float> expected(positions * width);
  cpu::positionalEncoding(expected.data(), positions, width, first);
  DeviceArray<float> out(positions * width);
  cuda::positionalEncoding(out.get(), positions, width, first);
  expectClose("positionalEncoding from 137", out.read(), expected, 1e-6);
}

// The decoder appends a step's keys to the cache: [outer, length, inner]
// into [outer, extent, inner] at `index`; the rest stays as it was.
TEST_F(CudaKernels, StoreSlice) {
  const int64_t outer = 6, extent = 20, inner = 24;
  std::vector<float> cache = uniform(outer * extent * inner, 41);
  for (auto [length, index] : {std::pair<int64_t, int64_t>{1, 7}, {3, 17}}) {
    std::vector<float> value = uniform(outer * length * inner, 42);
    std::vector<float> expected = cache;
    cpu::storeSlice(expected.data(), value.data(), outer, length, extent,
                    inner, index);
    DeviceArray<float> target(cache), dv(value);
    cuda::storeSlice(target.get(), dv.get(), outer, length, extent, inner,
                     index);
    expectClose("storeSlice at " + std::to_string(index), target.read(),
                expected, 0.0);
  }
}

// Beam search on the GPU: the per-hypothesis caches' rows follow their
// hypotheses (row r takes parents[r]'s), the source's caches stay.
TEST_F(CudaKernels, ReorderCaches) {
  const int64_t batch = 4, width = 10;
  const tgc::runtime::CompiledCache caches[] = {
      {"keys", 0, batch * width, true},
      {"source", 48, batch * width, false},
      {"values", 96, batch * width, true}};
  tgc::runtime::CompiledBucket bucket{};
  bucket.batchSize = batch;
  bucket.caches = caches;
  bucket.numCaches = 3;
  bucket.cacheFloats = 144;
  std::vector<float> before = uniform(bucket.cacheFloats, 43);
  DeviceArray<float> cache(before);
  float *saved = cuda::deviceFrame().cache;
  cuda::deviceFrame().cache = cache.get();
  const int64_t parents[batch] = {2, 2, 0, 3};
  cuda::reorderCaches(bucket, parents);
  cuda::deviceFrame().cache = saved;
  std::vector<float> expected = before;
  for (const auto &entry : caches)
    if (entry.perHypothesis)
      for (int64_t r = 0; r < batch; ++r)
        std::copy_n(before.begin() + entry.offset + parents[r] * width, width,
                    expected.begin() + entry.offset + r * width);
  expectClose("reorderCaches", cache.read(), expected, 0.0);
}

TEST_F(CudaKernels, Masks) {
  const int64_t count = 2 * 37;
  std::vector<int32_t> ids = randomIds(count, 16, 0, 5); // about 1/6 pads
  std::vector<float> expected(count);
  cpu::paddingMask(ids.data(), expected.data(), count, 0);
  DeviceArray<int32_t> di(ids);
  DeviceArray<float> out(count, 1.0f);
  cuda::paddingMask(di.get(), out.get(), count, 0);
  expectClose("paddingMask", out.read(), expected, 0.0);

  const int64_t size = 37;
  std::vector<float> causal(size * size);
  cpu::causalMask(causal.data(), size);
  DeviceArray<float> outCausal(size * size, 1.0f);
  cuda::causalMask(outCausal.get(), size);
  expectClose("causalMask", outCausal.read(), causal, 0.0);
}

//===--- NormKernels.cu ---------------------------------------------------===//

// 200 rows of 97 (odd width; fewer columns than a block's threads) and 3
// rows of 1500 (more).
struct RowShape {
  int64_t rows, width;
};
constexpr RowShape kRowShapes[] = {{200, 97}, {3, 1500}};
constexpr float kEpsilon = 1e-5f;

std::string tagOf(const RowShape &r) {
  return " " + std::to_string(r.rows) + "x" + std::to_string(r.width);
}

TEST_F(CudaKernels, Softmax) {
  for (const RowShape &r : kRowShapes) {
    std::vector<float> input = uniform(r.rows * r.width, 17, -5.0f, 5.0f);
    std::vector<float> expected(input.size());
    cpu::softmax(input.data(), expected.data(), r.rows, r.width);
    DeviceArray<float> in(input), out(input.size());
    cuda::softmax(in.get(), out.get(), r.rows, r.width);
    expectClose("softmax" + tagOf(r), out.read(), expected, 1e-5);
  }
}

TEST_F(CudaKernels, SoftmaxGrad) {
  for (const RowShape &r : kRowShapes) {
    std::vector<float> y(r.rows * r.width);
    std::vector<float> logits = uniform(y.size(), 18, -3.0f, 3.0f);
    cpu::softmax(logits.data(), y.data(), r.rows, r.width);
    std::vector<float> grad = uniform(y.size(), 19);
    std::vector<float> expected(y.size());
    cpu::softmaxGrad(y.data(), grad.data(), expected.data(), r.rows, r.width);
    DeviceArray<float> dy(y), dg(grad), out(y.size());
    cuda::softmaxGrad(dy.get(), dg.get(), out.get(), r.rows, r.width);
    expectClose("softmaxGrad" + tagOf(r), out.read(), expected, 1e-5);
  }
}

TEST_F(CudaKernels, LayerNorm) {
  for (const RowShape &r : kRowShapes) {
    std::vector<float> input = uniform(r.rows * r.width, 20, -2.0f, 3.0f);
    std::vector<float> gamma = uniform(r.width, 21, 0.5f, 1.5f);
    std::vector<float> beta = uniform(r.width, 22);
    std::vector<float> expected(input.size()), mean(r.rows), rstd(r.rows);
    cpu::layerNorm(input.data(), gamma.data(), beta.data(), expected.data(),
                   mean.data(), rstd.data(), r.rows, r.width, kEpsilon);
    DeviceArray<float> in(input), dg(gamma), db(beta), out(input.size()),
        dmean(r.rows), drstd(r.rows);
    cuda::layerNorm(in.get(), dg.get(), db.get(), out.get(), dmean.get(),
                    drstd.get(), r.rows, r.width, kEpsilon);
    std::vector<float> result = out.read();
    expectClose("layerNorm" + tagOf(r), result, expected, 1e-5);
    expectClose("layerNorm mean" + tagOf(r), dmean.read(), mean, 1e-5);
    expectClose("layerNorm rstd" + tagOf(r), drstd.read(), rstd, 1e-5);
    // Without statistics.
    DeviceArray<float> again(input.size());
    cuda::layerNorm(in.get(), dg.get(), db.get(), again.get(), nullptr, nullptr,
                    r.rows, r.width, kEpsilon);
    EXPECT_EQ(again.read(), result);
  }
}

// Float row sums in different orders feed a three-term cancellation in dx;
// the column sums are double on both sides.
constexpr double kNormGradTolerance = 1e-4;

TEST_F(CudaKernels, LayerNormGrad) {
  for (const RowShape &r : kRowShapes) {
    std::vector<float> input = uniform(r.rows * r.width, 23, -2.0f, 3.0f);
    std::vector<float> gamma = uniform(r.width, 24, 0.5f, 1.5f);
    std::vector<float> grad = uniform(input.size(), 25);
    std::vector<float> dx(input.size()), dgamma(r.width), dbeta(r.width);
    cpu::layerNormGrad(grad.data(), input.data(), gamma.data(), dx.data(),
                       dgamma.data(), dbeta.data(), r.rows, r.width, kEpsilon);
    DeviceArray<float> in(input), dg(gamma), dy(grad), ddx(input.size(), 7.0f),
        ddgamma(r.width, 7.0f), ddbeta(r.width, 7.0f);
    cuda::layerNormGrad(dy.get(), in.get(), dg.get(), ddx.get(), ddgamma.get(),
                        ddbeta.get(), r.rows, r.width, kEpsilon);
    expectClose("layerNormGrad input" + tagOf(r), ddx.read(), dx,
                kNormGradTolerance);
    expectClose("layerNormGrad gamma" + tagOf(r), ddgamma.read(), dgamma,
                kNormGradTolerance);
    expectClose("layerNormGrad beta" + tagOf(r), ddbeta.read(), dbeta,
                kNormGradTolerance);
  }
}

TEST_F(CudaKernels, ResidualLayerNorm) {
  for (const RowShape &r : kRowShapes)
    for (float rate : {0.0f, 0.1f}) {
      std::vector<float> residual = uniform(r.rows * r.width, 26);
      std::vector<float> sublayer = uniform(residual.size(), 27, -2.0f, 2.0f);
      std::vector<float> gamma = uniform(r.width, 28, 0.5f, 1.5f);
      std::vector<float> beta = uniform(r.width, 29);
      std::vector<float> expected(residual.size()), mean(r.rows), rstd(r.rows);
      cpu::residualLayerNorm(residual.data(), sublayer.data(), gamma.data(),
                             beta.data(), expected.data(), mean.data(),
                             rstd.data(), r.rows, r.width, cpuDropout(rate),
                             kEpsilon);
      DeviceArray<float> dr(residual), ds(sublayer), dg(gamma), db(beta),
          out(residual.size()), dmean(r.rows), drstd(r.rows);
      cuda::residualLayerNorm(dr.get(), ds.get(), dg.get(), db.get(), out.get(),
                              dmean.get(), drstd.get(), r.rows, r.width,
                              cudaDropout(rate), kEpsilon);
      std::string tag = tagOf(r) + " rate " + std::to_string(rate);
      expectClose("residualLayerNorm" + tag, out.read(), expected, 1e-5);
      expectClose("residualLayerNorm mean" + tag, dmean.read(), mean, 1e-5);
      expectClose("residualLayerNorm rstd" + tag, drstd.read(), rstd, 1e-5);
    }
}

TEST_F(CudaKernels, ResidualLayerNormGrad) {
  for (const RowShape &r : kRowShapes)
    for (float rate : {0.0f, 0.1f}) {
      std::vector<float> residual = uniform(r.rows * r.width, 30);
      std::vector<float> sublayer = uniform(residual.size(), 31, -2.0f, 2.0f);
      std::vector<float> gamma = uniform(r.width, 32, 0.5f, 1.5f);
      std::vector<float> grad = uniform(residual.size(), 33);
      // Both sides read the CPU forward's statistics.
      std::vector<float> forward(residual.size()), mean(r.rows), rstd(r.rows);
      std::vector<float> zeros(r.width, 0.0f);
      cpu::residualLayerNorm(residual.data(), sublayer.data(), gamma.data(),
                             zeros.data(), forward.data(), mean.data(),
                             rstd.data(), r.rows, r.width, cpuDropout(rate),
                             kEpsilon);
      std::vector<float> dres(residual.size()), dsub(residual.size()),
          dgamma(r.width), dbeta(r.width);
      cpu::residualLayerNormGrad(
          grad.data(), residual.data(), sublayer.data(), gamma.data(),
          mean.data(), rstd.data(), dres.data(), dsub.data(), dgamma.data(),
          dbeta.data(), r.rows, r.width, cpuDropout(rate));
      DeviceArray<float> dy(grad), dr(residual), ds(sublayer), dg(gamma),
          dm(mean), dsd(rstd), ddres(residual.size(), 7.0f),
          ddsub(residual.size(), 7.0f), ddgamma(r.width, 7.0f),
          ddbeta(r.width, 7.0f);
      cuda::residualLayerNormGrad(dy.get(), dr.get(), ds.get(), dg.get(),
                                  dm.get(), dsd.get(), ddres.get(), ddsub.get(),
                                  ddgamma.get(), ddbeta.get(), r.rows, r.width,
                                  cudaDropout(rate));
      std::string tag = tagOf(r) + " rate " + std::to_string(rate);
      std::vector<float> sublayerGrad = ddsub.read();
      expectClose("residualLayerNormGrad residual" + tag, ddres.read(), dres,
                  kNormGradTolerance);
      expectClose("residualLayerNormGrad sublayer" + tag, sublayerGrad, dsub,
                  kNormGradTolerance);
      expectClose("residualLayerNormGrad gamma" + tag, ddgamma.read(), dgamma,
                  kNormGradTolerance);
      expectClose("residualLayerNormGrad beta" + tag, ddbeta.read(), dbeta,
                  kNormGradTolerance);
      // The sublayer gradient is the mask times dh: its zeros are the mask.
      if (rate > 0.0f)
        expectSameZeros("residualLayerNormGrad mask" + tag, sublayerGrad, dsub);
    }
}

//===--- Attention.cu, AttentionGrad.cu -----------------------------------===//

struct AttentionCase {
  const char *name;
  int64_t batch, heads, queries, keys, keyDim, valueDim;
  bool mask, causal;
  float rate;
  /// The decoder's step: query i sits at key position causalOffset + i.
  int64_t causalOffset = 0;
};

// Queries 37 = 2 full blocks of 16 and a partial one; keys 150 = 4 full
// tiles of 32 and a partial one (the online softmax rescales). Causal
// self-attention skips the keys after each block's last query. Head sizes
// 64 and 128 take the shared memory past 48 KiB.
const AttentionCase kAttentionCases[] = {
    {"cross masked", 2, 3, 37, 150, 24, 20, true, false, 0.0f},
    {"cross masked dropout", 2, 3, 37, 150, 24, 20, true, false, 0.1f},
    {"self causal masked dropout", 2, 2, 150, 150, 16, 16, true, true, 0.1f},
    {"causal unmasked", 1, 2, 37, 53, 8, 12, false, true, 0.0f},
    {"head 64 masked dropout", 2, 2, 70, 90, 64, 64, true, false, 0.1f},
    {"head 128 causal dropout", 1, 2, 70, 70, 128, 128, true, true, 0.1f},
};

// The incremental decoder's attention over a key cache (forward only):
// the keys past each query's position hold stale values and must not count.
const AttentionCase kDecodingCases[] = {
    {"decoding one query at 40 of 64", 3, 2, 1, 64, 16, 16, true, true, 0.0f,
     40},
    {"decoding 3 queries at 61 of 64", 1, 2, 3, 64, 16, 16, false, true, 0.0f,
     61},
    {"decoding the first position", 2, 2, 1, 64, 64, 64, true, true, 0.0f, 0},
};

/// Random q, k, v, mask and output gradient of one case, on both sides,
/// and both sides' configurations.
struct AttentionInputs {
  cpu::AttentionShape cpuShape;
  cuda::AttentionShape cudaShape;
  std::vector<float> q, k, v, mask, grad;
  cpu::AttentionConfig cpuConfig;
  cuda::AttentionConfig cudaConfig;
  DeviceArray<float> qDevice, kDevice, vDevice, maskDevice, gradDevice;

  static std::vector<float> maskOf(const AttentionCase &c) {
    // About one key in five padded, never key 0: every row keeps an
    // unmasked key.
    std::vector<int32_t> pads = randomIds(c.batch * c.keys, 35, 0, 4);
    std::vector<float> mask;
    for (int64_t i = 0; i < c.batch * c.keys; ++i)
      mask.push_back(i % c.keys != 0 && pads[i] == 0 ? cpu::kMaskedScore
                                                     : 0.0f);
    return mask;
  }

  explicit AttentionInputs(const AttentionCase &c)
      : cpuShape{c.batch, c.heads, c.queries, c.keys, c.keyDim, c.valueDim},
        cudaShape{c.batch, c.heads, c.queries, c.keys, c.keyDim, c.valueDim},
        // Scores up to about +-3: rows far from uniform, so the running max
        // and the rescaling matter.
        q(uniform(c.batch * c.heads * c.queries * c.keyDim, 31, -1.5f, 1.5f)),
        k(uniform(c.batch * c.heads * c.keys * c.keyDim, 32, -1.5f, 1.5f)),
        v(uniform(c.batch * c.heads * c.keys * c.valueDim, 33)),
        mask(maskOf(c)),
        grad(uniform(c.batch * c.heads * c.queries * c.valueDim, 34)),
        qDevice(q), kDevice(k), vDevice(v), maskDevice(mask), gradDevice(grad) {
    float scale = 1.0f / std::sqrt(static_cast<float>(c.keyDim));
    cpuConfig.mask = c.mask ? mask.data() : nullptr;
    cpuConfig.causal = c.causal;
    cpuConfig.causalOffset = c.causalOffset;
    cpuConfig.scale = scale;
    cpuConfig.dropout = cpuDropout(c.rate);
    cudaConfig.mask = c.mask ? maskDevice.get() : nullptr;
    cudaConfig.causal = c.causal;
    cudaConfig.causalOffset = c.causalOffset;
    cudaConfig.scale = scale;
    cudaConfig.dropout = cudaDropout(c.rate);
  }

  int64_t rows() const {
    return cpuShape.batch * cpuShape.heads * cpuShape.queries;
  }
};

// Scores, exponentials and weighted sums of up to 150 values in float.
constexpr double kAttentionTolerance = 1e-4;

TEST_F(CudaKernels, Attention) {
  std::vector<AttentionCase> cases(std::begin(kAttentionCases),
                                   std::end(kAttentionCases));
  cases.insert(cases.end(), std::begin(kDecodingCases),
               std::end(kDecodingCases));
  for (const AttentionCase &c : cases) {
    AttentionInputs in(c);
    std::vector<float> out(in.rows() * c.valueDim), lse(in.rows());
    cpu::attention(in.q.data(), in.k.data(), in.v.data(), out.data(),
                   lse.data(), in.cpuShape, in.cpuConfig);
    DeviceArray<float> dout(out.size(), 7.0f), dlse(lse.size(), 7.0f);
    cuda::attention(in.qDevice.get(), in.kDevice.get(), in.vDevice.get(),
                    dout.get(), dlse.get(), in.cudaShape, in.cudaConfig);
    std::vector<float> gpuLse = dlse.read();
    expectClose(std::string("attention output ") + c.name, dout.read(), out,
                kAttentionTolerance);
    expectClose(std::string("attention lse ") + c.name, gpuLse, lse,
                kAttentionTolerance);
    if (c.rate > 0.0f) {
      // The normalizer is the undropped sum: lse does not see dropout.
      cuda::AttentionConfig kept = in.cudaConfig;
      kept.dropout.rate = 0.0f;
      DeviceArray<float> plain(out.size()), plainLse(lse.size());
      cuda::attention(in.qDevice.get(), in.kDevice.get(), in.vDevice.get(),
                      plain.get(), plainLse.get(), in.cudaShape, kept);
      EXPECT_EQ(plainLse.read(), gpuLse) << c.name;
    }
  }
}

// With v the identity (keys = value width) and no mask, out_ij = p_ij f_ij /
// l_i: zero exactly where dropout dropped probability (i, j). Both sides
// must drop the same ones, indexed flat into [B, H, Sq, Sk].
TEST_F(CudaKernels, AttentionDropoutMask) {
  const AttentionCase c{
      "identity values", 2, 3, 37, 70, 16, 70, false, false, 0.3f};
  AttentionInputs in(c);
  for (int64_t bh = 0; bh < c.batch * c.heads; ++bh)
    for (int64_t j = 0; j < c.keys; ++j)
      for (int64_t col = 0; col < c.valueDim; ++col)
        in.v[(bh * c.keys + j) * c.valueDim + col] = j == col ? 1.0f : 0.0f;
  DeviceArray<float> identity(in.v);
  std::vector<float> out(in.rows() * c.valueDim), lse(in.rows());
  cpu::attention(in.q.data(), in.k.data(), in.v.data(), out.data(), lse.data(),
                 in.cpuShape, in.cpuConfig);
  DeviceArray<float> dout(out.size()), dlse(lse.size());
  cuda::attention(in.qDevice.get(), in.kDevice.get(), identity.get(),
                  dout.get(), dlse.get(), in.cudaShape, in.cudaConfig);
  std::vector<float> probabilities = dout.read();
  expectSameZeros("attention dropout mask", probabilities, out);
  expectClose("attention dropped probabilities", probabilities, out,
              kAttentionTolerance);
}

// Each gradient sums up to 150 terms p (dp - D) in float, in different
// orders on the two sides.
constexpr double kAttentionGradTolerance = 1e-4;

TEST_F(CudaKernels, AttentionGrad) {
  for (const AttentionCase &c : kAttentionCases) {
    AttentionInputs in(c);
    // Each side's backward reads its own forward's output and lse, as in a
    // generated step.
    std::vector<float> out(in.rows() * c.valueDim), lse(in.rows());
    cpu::attention(in.q.data(), in.k.data(), in.v.data(), out.data(),
                   lse.data(), in.cpuShape, in.cpuConfig);
    std::vector<float> dq(in.q.size()), dk(in.k.size()), dv(in.v.size());
    cpu::attentionGrad(in.grad.data(), in.q.data(), in.k.data(), in.v.data(),
                       out.data(), lse.data(), dq.data(), dk.data(), dv.data(),
                       in.cpuShape, in.cpuConfig);
    DeviceArray<float> dout(out.size()), dlse(lse.size());
    cuda::attention(in.qDevice.get(), in.kDevice.get(), in.vDevice.get(),
                    dout.get(), dlse.get(), in.cudaShape, in.cudaConfig);
    // Outputs start as garbage: the kernels must write every element.
    DeviceArray<float> gq(dq.size(), 7.0f), gk(dk.size(), 7.0f),
        gv(dv.size(), 7.0f);
    cuda::attentionGrad(in.gradDevice.get(), in.qDevice.get(), in.kDevice.get(),
                        in.vDevice.get(), dout.get(), dlse.get(), gq.get(),
                        gk.get(), gv.get(), in.cudaShape, in.cudaConfig);
    expectClose(std::string("attentionGrad query ") + c.name, gq.read(), dq,
                kAttentionGradTolerance);
    expectClose(std::string("attentionGrad key ") + c.name, gk.read(), dk,
                kAttentionGradTolerance);
    expectClose(std::string("attentionGrad value ") + c.name, gv.read(), dv,
                kAttentionGradTolerance);
  }
}

//===--- Loss.cu ----------------------------------------------------------===//

// 64 rows of 1000 classes; some targets ignored.
constexpr int64_t kLossRows = 64, kClasses = 1000;
constexpr int32_t kIgnore = 0;

std::vector<int32_t> lossTargets(uint32_t seed) {
  std::vector<int32_t> targets = randomIds(kLossRows, seed, 0, 7);
  for (int32_t &t : targets) // ignored when 0, else a class anywhere
    t = t == 0 ? kIgnore : t * 111;
  return targets;
}

TEST_F(CudaKernels, CrossEntropy) {
  std::vector<float> logits = uniform(kLossRows * kClasses, 36, -4.0f, 4.0f);
  DeviceArray<float> dl(logits), dloss(1);
  DeviceArray<int32_t> dtokens(1);
  for (bool allIgnored : {false, true})
    for (float smoothing : {0.0f, 0.1f}) {
      std::vector<int32_t> targets =
          allIgnored ? std::vector<int32_t>(kLossRows, kIgnore)
                     : lossTargets(37);
      float loss = 1.0f;
      int32_t tokens = -1;
      cpu::crossEntropy(logits.data(), targets.data(), &loss, &tokens,
                        kLossRows, kClasses, smoothing, kIgnore);
      DeviceArray<int32_t> dt(targets);
      cuda::crossEntropy(dl.get(), dt.get(), dloss.get(), dtokens.get(),
                         kLossRows, kClasses, smoothing, kIgnore);
      std::string tag = " smoothing " + std::to_string(smoothing) +
                        (allIgnored ? " all ignored" : "");
      EXPECT_EQ(dtokens.read()[0], tokens) << tag;
      if (allIgnored) {
        EXPECT_EQ(dloss.read()[0], 0.0f) << tag;
        continue;
      }
      // Double row sums and total on both sides.
      expectClose("crossEntropy" + tag, dloss.read(), {loss}, 1e-6);
    }
}

TEST_F(CudaKernels, CrossEntropyGrad) {
  std::vector<float> logits = uniform(kLossRows * kClasses, 38, -4.0f, 4.0f);
  DeviceArray<float> dl(logits);
  const float lossGrad = 1.7f;
  for (float smoothing : {0.0f, 0.1f}) {
    std::vector<int32_t> targets = lossTargets(39);
    std::vector<float> expected(logits.size());
    cpu::crossEntropyGrad(lossGrad, logits.data(), targets.data(),
                          expected.data(), kLossRows, kClasses, smoothing,
                          kIgnore);
    DeviceArray<int32_t> dt(targets);
    DeviceArray<float> out(logits.size(), 5.0f); // ignored rows must be 0
    cuda::crossEntropyGrad(lossGrad, dl.get(), dt.get(), out.get(), kLossRows,
                           kClasses, smoothing, kIgnore);
    expectClose("crossEntropyGrad smoothing " + std::to_string(smoothing),
                out.read(), expected, 1e-5);
  }
  DeviceArray<int32_t> ignored(kLossRows, kIgnore);
  DeviceArray<float> out(logits.size(), 5.0f);
  cuda::crossEntropyGrad(lossGrad, dl.get(), ignored.get(), out.get(),
                         kLossRows, kClasses, 0.1f, kIgnore);
  std::vector<float> result = out.read();
  EXPECT_TRUE(std::all_of(result.begin(), result.end(),
                          [](float x) { return x == 0.0f; }));
}

// More rows than the gradient kernel has blocks (each loops over rows) and
// many loss blocks finishing in any order: the same values as the CPU, and
// the same bits on a second run (the last block adds the rows in order).
TEST_F(CudaKernels, CrossEntropyManyRows) {
  const int64_t rows = 3000, classes = 50;
  std::vector<float> logits = uniform(rows * classes, 44, -4.0f, 4.0f);
  std::vector<int32_t> targets = randomIds(rows, 45, 0, classes - 1);
  float loss = 0.0f;
  int32_t tokens = 0;
  cpu::crossEntropy(logits.data(), targets.data(), &loss, &tokens, rows,
                    classes, 0.1f, kIgnore);
  std::vector<float> grad(rows * classes);
  cpu::crossEntropyGrad(1.0f, logits.data(), targets.data(), grad.data(), rows,
                        classes, 0.1f, kIgnore);
  DeviceArray<float> dl(logits), dloss(1), dgrad(grad.size());
  DeviceArray<int32_t> dt(targets), dtokens(1);
  std::vector<float> first;
  for (int run = 0; run < 2; ++run) {
    cuda::crossEntropy(dl.get(), dt.get(), dloss.get(), dtokens.get(), rows,
                       classes, 0.1f, kIgnore);
    EXPECT_EQ(dtokens.read()[0], tokens);
    expectClose("crossEntropy, 3000 rows", dloss.read(), {loss}, 1e-6);
    if (run == 0)
      first = dloss.read();
    else
      EXPECT_EQ(dloss.read(), first) << "the loss changed between runs";
  }
  cuda::crossEntropyGrad(1.0f, dl.get(), dt.get(), dgrad.get(), rows, classes,
                         0.1f, kIgnore);
  expectClose("crossEntropyGrad, 3000 rows", dgrad.read(), grad, 1e-5);
}

//===--- Adam.cu ----------------------------------------------------------===//

// A few float operations per element; the bias corrections in double on
// both sides. lr and step are device scalars on the GPU.
TEST_F(CudaKernels, AdamUpdate) {
  const int64_t sizes[] = {1000, 37, 40000}; // many chunks, a tiny tensor
  const float lr = 1e-2f, beta1 = 0.9f, beta2 = 0.98f, epsilon = 1e-9f;
  DeviceArray<float> dlr(std::vector<float>{lr});
  for (int32_t step : {1, 7}) {
    DeviceArray<int32_t> dstep(std::vector<int32_t>{step});
    std::vector<std::vector<float>> p, m, v, g;
    std::vector<std::unique_ptr<DeviceArray<float>>> device;
    std::vector<cpu::AdamTensor> cpuTensors;
    std::vector<cuda::AdamTensor> cudaTensors;
    for (size_t x = 0; x < 3; ++x) {
      uint32_t seed = 40 + 4 * static_cast<uint32_t>(x);
      p.push_back(uniform(sizes[x], seed, -0.02f, 0.02f));
      m.push_back(uniform(sizes[x], seed + 1, -0.1f, 0.1f));
      v.push_back(uniform(sizes[x], seed + 2, 0.0f, 0.01f));
      g.push_back(uniform(sizes[x], seed + 3));
      for (const std::vector<float> *host : {&p[x], &m[x], &v[x], &g[x]})
        device.push_back(std::make_unique<DeviceArray<float>>(*host));
      cudaTensors.push_back({device[4 * x]->get(), device[4 * x + 1]->get(),
                             device[4 * x + 2]->get(), device[4 * x + 3]->get(),
                             sizes[x]});
    }
    for (size_t x = 0; x < 3; ++x)
      cpuTensors.push_back(
          {p[x].data(), m[x].data(), v[x].data(), g[x].data(), sizes[x]});
    cpu::adamUpdate(cpuTensors.data(), 3, lr, step, beta1, beta2, epsilon);
    cuda::adamUpdate(cudaTensors.data(), 3, dlr.get(), dstep.get(), beta1,
                     beta2, epsilon);
    for (size_t x = 0; x < 3; ++x) {
      std::string tag =
          " step " + std::to_string(step) + " tensor " + std::to_string(x);
      expectClose("adam param" + tag, device[4 * x]->read(), p[x], 1e-5);
      expectClose("adam moment1" + tag, device[4 * x + 1]->read(), m[x], 1e-5);
      expectClose("adam moment2" + tag, device[4 * x + 2]->read(), v[x], 1e-5);
    }
  }
}

} // namespace
