//===- TensorTest.cpp - CPU data-movement kernels against the reference ---===//
//
// runtime/kernels/cpu/Tensor.cpp: transpose, broadcast, reduce, embedding
// and its gradient, the positional encoding and the masks. Helpers and
// the error measure: KernelTestSupport.h.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cpu/KernelTestSupport.h"

#include <bit>
#include <limits>

namespace tgc::test {
namespace {

// Data movement: bit-exact.
TEST(CpuKernels, Transpose) {
  for (const TransposeCase &c : kTransposeCases) {
    int64_t count = HostTensor::countOf(c.shape);
    std::vector<float> input = uniform(count, 6);
    HostTensor expected =
        reference::transpose(host(input, c.shape), c.permutation);
    std::vector<float> out(count, 0.0f);
    cpu::transpose(input.data(), out.data(), c.shape.data(),
                   c.permutation.data(), static_cast<int>(c.shape.size()));
    expectClose("transpose rank " + std::to_string(c.shape.size()), out,
                expected, 0.0);
  }
}

// A rounding transpose (tg-fold-bf16-roundings) writes the transpose's
// values rounded: bit for bit roundToBf16 of the f32 transpose's, for every
// case and a scalar, with ties and NaN among the values.
TEST(CpuKernels, TransposeToBf16IsTheTransposeRounded) {
  std::vector<TransposeCase> cases = kTransposeCases;
  cases.push_back({{}, {}});
  for (const TransposeCase &c : cases) {
    int64_t count = HostTensor::countOf(c.shape);
    std::vector<float> input = uniform(count, 6);
    input[0] = std::bit_cast<float>(0x3f808000u); // a tie: rounds to even
    if (count > 1)
      input[1] = std::numeric_limits<float>::quiet_NaN();
    int rank = static_cast<int>(c.shape.size());
    std::vector<float> transposed(count);
    cpu::transpose(input.data(), transposed.data(), c.shape.data(),
                   c.permutation.data(), rank);
    std::vector<runtime::Bf16> out(count);
    cpu::transpose(input.data(), out.data(), c.shape.data(),
                   c.permutation.data(), rank);
    for (int64_t i = 0; i < count; ++i)
      ASSERT_EQ(out[i].bits, runtime::roundToBf16(transposed[i]).bits)
          << "rank " << rank << " element " << i;
  }
}

TEST(CpuKernels, Broadcast) {
  for (const BroadcastCase &c : kBroadcastCases) {
    std::vector<float> input = uniform(HostTensor::countOf(c.inputShape), 7);
    HostTensor expected =
        reference::broadcast(host(input, c.inputShape), c.dims, c.resultShape);
    std::vector<float> out(HostTensor::countOf(c.resultShape), 0.0f);
    cpu::broadcast(input.data(), out.data(), c.resultShape.data(),
                   static_cast<int>(c.resultShape.size()), c.dims.data(),
                   c.inputShape.data(), static_cast<int>(c.dims.size()));
    expectClose("broadcast to rank " + std::to_string(c.resultShape.size()),
                out, expected, 0.0);
  }
}

// Sums accumulate in double and round once: within one float rounding of
// the reference (1e-6 leaves room for the Mean's division). Max is exact.
TEST(CpuKernels, Reduce) {
  for (const ReduceCase &c : kReduceCases)
    for (const NamedReduction &reduction : kReductions) {
      std::vector<float> input = uniform(HostTensor::countOf(c.shape), 8);
      HostTensor expected = reference::reduce(host(input, c.shape), c.dims,
                                              false, reduction.kind);
      bool reduced[8] = {};
      for (int64_t d : c.dims)
        reduced[d] = true;
      std::vector<float> out(expected.numElements(), 0.0f);
      cpu::reduce(input.data(), out.data(), c.shape.data(),
                  static_cast<int>(c.shape.size()), reduced, reduction.kind);
      std::string what = std::string("reduce ") + reduction.name + " of " +
                         std::to_string(HostTensor::countOf(c.shape)) +
                         " into " + std::to_string(out.size());
      expectClose(what, out, expected,
                  reduction.kind == runtime::Reduction::Max ? 0.0 : 1e-6);
    }
}

TEST(CpuKernels, Embedding) {
  const int64_t vocab = 50, width = 33, rows = 2 * 37;
  std::vector<float> table = uniform(vocab * width, 9);
  std::vector<int32_t> ids = randomIds(rows, 10, 0, vocab - 1);
  HostTensor expected =
      reference::embedding(host(table, {vocab, width}), hostIds(ids, {2, 37}));
  std::vector<float> out(rows * width, 0.0f);
  cpu::embedding(table.data(), ids.data(), out.data(), rows, width);
  expectClose("embedding", out, expected, 0.0);
}

// Each vocabulary row sums about 50 gradient rows in float.
TEST(CpuKernels, EmbeddingGrad) {
  const int64_t rows = 1000, width = 40, vocab = 23;
  std::vector<float> grad = uniform(rows * width, 11);
  // Ids below 20 only: the last vocabulary rows must come out zero.
  std::vector<int32_t> ids = randomIds(rows, 12, 0, 19);
  HostTensor expected = reference::embeddingGrad(host(grad, {rows, width}),
                                                 hostIds(ids, {rows}), vocab);
  std::vector<float> out(vocab * width, 1.0f); // must be overwritten
  cpu::embeddingGrad(grad.data(), ids.data(), out.data(), rows, width, vocab);
  expectClose("embeddingGrad", out, expected, 1e-5);
}

// One float rounding of a double sin/cos.
TEST(CpuKernels, PositionalEncoding) {
  for (int64_t width : {64, 50}) {
    const int64_t positions = 300;
    HostTensor expected = reference::positionalEncoding(positions, width);
    std::vector<float> out(positions * width, 0.0f);
    cpu::positionalEncoding(out.data(), positions, width);
    expectClose("positionalEncoding width " + std::to_string(width), out,
                expected, 1e-6);
  }
}

TEST(CpuKernels, PaddingMask) {
  const int64_t count = 2 * 37;
  std::vector<int32_t> ids = randomIds(count, 13, 0, 5); // about 1/6 pads
  HostTensor expected = reference::paddingMask(hostIds(ids, {2, 37}), 0);
  std::vector<float> out(count, 1.0f);
  cpu::paddingMask(ids.data(), out.data(), count, 0);
  expectClose("paddingMask", out, expected, 0.0);
}

TEST(CpuKernels, CausalMask) {
  const int64_t size = 37;
  HostTensor expected = reference::causalMask(size);
  std::vector<float> out(size * size, 1.0f);
  cpu::causalMask(out.data(), size);
  expectClose("causalMask", out, expected, 0.0);
}

// The vectorized factors are the dropout stream's, bit for bit: every rate,
// unaligned starts and counts (the scalar head and tail), block indices past
// 2^32 and a data-parallel index offset.
TEST(CpuKernels, DropoutFactorsAreTheStream) {
  for (float rate : {0.0f, 1e-4f, 0.1f, 0.123456f, 0.5f, 0.999f})
    for (uint64_t offset : {uint64_t{0}, uint64_t{4096 * 3 + 1}})
      for (uint64_t start : {uint64_t{0}, uint64_t{1}, uint64_t{3},
                             uint64_t{1000001}, (uint64_t{1} << 34) + 2})
        for (int64_t count : {1, 3, 4, 63, 64, 65, 255, 256, 257, 2000}) {
          runtime::Dropout dropout{1234, 7, 3, rate, offset};
          std::vector<float> factors(static_cast<size_t>(count), -1.0f);
          cpu::dropoutFactors(dropout, start, count, factors.data());
          for (int64_t x = 0; x < count; ++x)
            ASSERT_EQ(factors[x], dropout.factor(start + x))
                << "rate " << rate << " offset " << offset << " start "
                << start << " count " << count << " element " << x;
        }
}

} // namespace
} // namespace tgc::test
