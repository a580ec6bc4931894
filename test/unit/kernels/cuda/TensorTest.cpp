//===- TensorTest.cpp - CUDA data-movement kernels against the CPU --------===//
//
// runtime/kernels/cuda/Tensor.cu and Reduce.cu: transpose, broadcast,
// reduce (and allFinite), embedding and its gradient, slices and gathers and their
// gradients, the positional and rotary encodings, the masks, and the
// decoder's cache updates (storeSlice, reorderCaches). Helpers and the error measure:
// KernelTestSupport.h.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cuda/KernelTestSupport.h"
#include "runtime/program/CompiledStep.h"
#include "runtime/program/cuda/DeviceStep.h"

#include <limits>
#include <utility>

namespace tgc::test {
namespace {

// Data movement: bit-exact.
TEST_F(CudaKernels, Transpose) {
  std::vector<TransposeCase> cases = kTransposeCases;
  cases.push_back({{}, {}}); // a scalar
  for (const TransposeCase &c : cases) {
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

// A rounding transpose: bit for bit the CPU's (itself the f32 transpose
// rounded), through the four-at-a-time path (the head split, whose inner
// 8 values stay together) and the one-at-a-time path.
TEST_F(CudaKernels, TransposeToBf16) {
  std::vector<TransposeCase> cases = kTransposeCases;
  cases.push_back({{}, {}});
  for (const TransposeCase &c : cases) {
    int64_t count = countOf(c.shape);
    std::vector<float> input = uniform(count, 9);
    int rank = static_cast<int>(c.shape.size());
    std::vector<runtime::Bf16> expected(count);
    cpu::transpose(input.data(), expected.data(), c.shape.data(),
                   c.permutation.data(), rank);
    DeviceArray<float> in(input);
    DeviceArray<runtime::Bf16> out(count);
    cuda::transpose(in.get(), out.get(), c.shape.data(), c.permutation.data(),
                    rank);
    std::vector<runtime::Bf16> got = out.read();
    for (int64_t i = 0; i < count; ++i)
      ASSERT_EQ(got[i].bits, expected[i].bits)
          << "rank " << rank << " element " << i;
  }
}

TEST_F(CudaKernels, Broadcast) {
  for (const BroadcastCase &c : kBroadcastCases) {
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

// i32 tensors (token ids): bit for bit the CPU's, through the
// four-at-a-time path and the one-at-a-time path, ids beyond float's 24
// bits included.
TEST_F(CudaKernels, TransposeAndBroadcastOfIds) {
  auto ids = [](int64_t count) {
    std::vector<int32_t> values(count);
    for (int64_t i = 0; i < count; ++i)
      values[i] = (i % 2 ? -(1 << 30) : (1 << 30)) + static_cast<int32_t>(i);
    return values;
  };
  std::vector<TransposeCase> transposes = kTransposeCases;
  transposes.push_back({{}, {}});
  for (const TransposeCase &c : transposes) {
    int64_t count = countOf(c.shape);
    int rank = static_cast<int>(c.shape.size());
    std::vector<int32_t> input = ids(count), expected(count);
    cpu::transpose(input.data(), expected.data(), c.shape.data(),
                   c.permutation.data(), rank);
    DeviceArray<int32_t> in(input), out(count);
    cuda::transpose(in.get(), out.get(), c.shape.data(), c.permutation.data(),
                    rank);
    EXPECT_EQ(out.read(), expected) << "transpose rank " << rank;
  }
  for (const BroadcastCase &c : kBroadcastCases) {
    int64_t count = countOf(c.resultShape);
    int resultRank = static_cast<int>(c.resultShape.size());
    int inputRank = static_cast<int>(c.inputShape.size());
    std::vector<int32_t> input = ids(countOf(c.inputShape)), expected(count);
    cpu::broadcast(input.data(), expected.data(), c.resultShape.data(),
                   resultRank, c.dims.data(), c.inputShape.data(), inputRank);
    DeviceArray<int32_t> in(input), out(count);
    cuda::broadcast(in.get(), out.get(), c.resultShape.data(), resultRank,
                    c.dims.data(), c.inputShape.data(), inputRank);
    EXPECT_EQ(out.read(), expected) << "broadcast to rank " << resultRank;
  }
}

// Double accumulators on both sides: one float rounding apart at most
// (1e-6 leaves room for the Mean's division). Max is exact.
TEST_F(CudaKernels, Reduce) {
  std::vector<ReduceCase> cases = kReduceCases;
  cases.push_back({{1, 1}, {0}}); // one element
  for (const ReduceCase &c : cases)
    for (const NamedReduction &reduction : kReductions) {
      std::vector<float> input = uniform(countOf(c.shape), 11);
      const std::array<bool, 8> reduced = c.reduced();
      const int64_t outCount = c.outCount();
      std::vector<float> expected(outCount);
      cpu::reduce(input.data(), expected.data(), c.shape.data(), c.rank(),
                  reduced.data(), reduction.kind);
      DeviceArray<float> in(input), out(outCount);
      cuda::reduce(in.get(), out.get(), c.shape.data(), c.rank(),
                   reduced.data(), reduction.kind);
      expectClose(std::string("reduce ") + reduction.name + " of " +
                      std::to_string(input.size()) + " into " +
                      std::to_string(outCount),
                  out.read(), expected,
                  reduction.kind == runtime::Reduction::Max ? 0.0 : 1e-6);
    }
}

// tg.reduce_sum of a bf16 input (a bias gradient of bf16 GEMM operands)
// against the CPU kernel on the same bf16 values.
TEST_F(CudaKernels, Bf16Reduce) {
  for (const ReduceCase &c : kReduceCases) {
    std::vector<runtime::Bf16> input(countOf(c.shape));
    const std::vector<float> values = uniform(countOf(c.shape), 13);
    for (size_t i = 0; i < input.size(); ++i)
      input[i] = runtime::roundToBf16(values[i]);
    const std::array<bool, 8> reduced = c.reduced();
    const int64_t outCount = c.outCount();
    std::vector<float> expected(outCount);
    cpu::reduce(input.data(), expected.data(), c.shape.data(), c.rank(),
                reduced.data(), runtime::Reduction::Sum);
    DeviceArray<runtime::Bf16> in(input);
    DeviceArray<float> out(outCount);
    cuda::reduce(in.get(), out.get(), c.shape.data(), c.rank(), reduced.data(),
                 runtime::Reduction::Sum);
    expectClose("bf16 reduce sum of " + std::to_string(input.size()) +
                    " into " + std::to_string(outCount),
                out.read(), expected, 1e-6);
  }
}

// The GPU's checkTrainStep: runtime::allFinite's answer on device memory,
// wherever the NaN or the infinity is (the last element of a grid-stride
// loop's last block too).
TEST_F(CudaKernels, AllFinite) {
  const float nan = std::numeric_limits<float>::quiet_NaN(),
              inf = std::numeric_limits<float>::infinity();
  for (int64_t count : {int64_t{1}, int64_t{257}, int64_t{3000000}}) {
    std::vector<float> values = uniform(count, 21);
    for (int64_t at : {int64_t{0}, count / 2, count - 1})
      for (float bad : {nan, inf, -inf}) {
        std::vector<float> spoiled = values;
        spoiled[at] = bad;
        DeviceArray<float> device(spoiled);
        EXPECT_EQ(cuda::allFinite(device.get(), count),
                  runtime::allFinite(spoiled.data(), count))
            << count << " floats, " << bad << " at " << at;
        EXPECT_FALSE(cuda::allFinite(device.get(), count));
      }
    DeviceArray<float> clean(values);
    EXPECT_TRUE(cuda::allFinite(clean.get(), count)) << count << " floats";
  }
  EXPECT_TRUE(cuda::allFinite(nullptr, 0));
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
// The GPU sums each id's rows chunk by chunk of the sorted rows (128), the
// CPU row by row: up to a few thousand values of [-1, 1] in float.
TEST_F(CudaKernels, EmbeddingGrad) {
  struct Case {
    int64_t rows, width, vocab;
    int32_t largestId;
  };
  // Runs of ~50 rows (some crossing chunks), then runs of ~1600 rows
  // crossing a dozen chunks (a base batch's padding id), then 1 row.
  for (Case c : {Case{1000, 300, 23, 19}, Case{5000, 64, 5, 2},
                 Case{1, 8, 3, 1}}) {
    std::vector<float> grad = uniform(c.rows * c.width, 14);
    // Ids up to largestId only: the last vocabulary rows must come out zero.
    std::vector<int32_t> ids = randomIds(c.rows, 15, 0, c.largestId);
    // Ids outside the vocabulary add nothing on either side.
    if (c.rows > 500) {
      ids[3] = -1;
      ids[500] = static_cast<int32_t>(c.vocab) + 7;
    }
    const std::string tag = " rows " + std::to_string(c.rows);
    std::vector<float> expected(c.vocab * c.width);
    cpu::embeddingGrad(grad.data(), ids.data(), nullptr, expected.data(),
                       c.rows, c.width, c.vocab);
    DeviceArray<float> dg(grad), out(c.vocab * c.width, 1.0f); // overwritten
    DeviceArray<int32_t> di(ids);
    cuda::embeddingGrad(dg.get(), di.get(), nullptr, out.get(), c.rows, c.width,
                        c.vocab);
    expectClose("embeddingGrad" + tag, out.read(), expected, 1e-5);

    // Onto a base (tg.embedding_grad's addend), copied or in place.
    std::vector<float> base = uniform(c.vocab * c.width, 16);
    std::vector<float> withBase(c.vocab * c.width);
    cpu::embeddingGrad(grad.data(), ids.data(), base.data(), withBase.data(),
                       c.rows, c.width, c.vocab);
    DeviceArray<float> db(base), sum(c.vocab * c.width, 1.0f);
    cuda::embeddingGrad(dg.get(), di.get(), db.get(), sum.get(), c.rows,
                        c.width, c.vocab);
    expectClose("embeddingGrad onto a base" + tag, sum.read(), withBase, 1e-5);
    cuda::embeddingGrad(dg.get(), di.get(), db.get(), db.get(), c.rows, c.width,
                        c.vocab);
    expectClose("embeddingGrad in place" + tag, db.read(), withBase, 1e-5);
  }
}

// Slices and their gradients: bit-exact block copies; the outputs start as
// ones, so every element must be written.
TEST_F(CudaKernels, SliceAndSliceGrad) {
  for (const BlockCase &c : kBlockCases) {
    int64_t whole = c.outer * c.extent * c.inner;
    int64_t part = c.outer * c.length * c.inner;
    std::vector<float> input = uniform(whole, 44), grad = uniform(part, 45);
    std::vector<float> sliced(part), placed(whole);
    cpu::slice(input.data(), sliced.data(), c.outer, c.length, c.extent,
               c.inner, c.index);
    cpu::sliceGrad(grad.data(), placed.data(), c.outer, c.length, c.extent,
                   c.inner, c.index);
    DeviceArray<float> din(input), dgrad(grad), dsliced(part, 1.0f),
        dplaced(whole, 1.0f);
    cuda::slice(din.get(), dsliced.get(), c.outer, c.length, c.extent, c.inner,
                c.index);
    cuda::sliceGrad(dgrad.get(), dplaced.get(), c.outer, c.length, c.extent,
                    c.inner, c.index);
    std::string at = " at " + std::to_string(c.index);
    expectClose("slice" + at, dsliced.read(), sliced, 0.0);
    expectClose("sliceGrad" + at, dplaced.read(), placed, 0.0);
  }
}

// A gather and its gradient, indices outside the dimension included (zeros;
// nothing added). The gradient adds each row's values in index order on both
// sides, except that whole rows (outer 1) go through embeddingGrad's sorted
// chunks: within float rounding of the CPU.
TEST_F(CudaKernels, GatherAndGatherGrad) {
  for (const GatherCase &c : kGatherCases) {
    int64_t whole = c.outer * c.extent * c.inner;
    int64_t taken = c.outer * c.count * c.inner;
    std::vector<float> input = uniform(whole, 46), grad = uniform(taken, 47);
    std::vector<int32_t> indices = gatherIndices(c, 48, true);
    std::vector<float> gathered(taken), scattered(whole);
    cpu::gather(input.data(), indices.data(), gathered.data(), c.outer,
                c.extent, c.count, c.inner);
    cpu::gatherGrad(grad.data(), indices.data(), scattered.data(), c.outer,
                    c.extent, c.count, c.inner);
    DeviceArray<float> din(input), dgrad(grad), dgathered(taken, 1.0f),
        dscattered(whole, 1.0f);
    DeviceArray<int32_t> dindices(indices);
    cuda::gather(din.get(), dindices.get(), dgathered.get(), c.outer, c.extent,
                 c.count, c.inner);
    cuda::gatherGrad(dgrad.get(), dindices.get(), dscattered.get(), c.outer,
                     c.extent, c.count, c.inner);
    std::string of = " of " + std::to_string(c.count);
    expectClose("gather" + of, dgathered.read(), gathered, 0.0);
    expectClose("gatherGrad" + of, dscattered.read(), scattered,
                c.outer == 1 ? 1e-5 : 0.0);
  }
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

// Double angles on both sides; the rotations in float.
TEST_F(CudaKernels, Rotary) {
  for (const RotaryCase &c : kRotaryCases) {
    std::vector<float> input = uniform(c.rows * c.width, 23);
    std::vector<float> expected(input.size());
    cpu::rotary(input.data(), expected.data(), c.rows, c.positions, c.width,
                c.base, c.inverse, c.first);
    DeviceArray<float> in(input), out(input.size());
    cuda::rotary(in.get(), out.get(), c.rows, c.positions, c.width, c.base,
                 c.inverse, c.first);
    expectClose("rotary width " + std::to_string(c.width) + " from " +
                    std::to_string(c.first),
                out.read(), expected, 1e-6);
  }
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

} // namespace
} // namespace tgc::test
