//===- TensorTest.cpp - CPU data-movement kernels against the reference ---===//
//
// runtime/kernels/cpu/Tensor.cpp: transpose, broadcast, reduce, embedding
// and its gradient, slices and gathers and their gradients, the positional
// encoding, the rotary embedding and the masks. Helpers and the error
// measure: KernelTestSupport.h.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cpu/KernelTestSupport.h"

#include <algorithm>
#include <bit>
#include <cmath>
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

// i32 tensors (tg.transpose and tg.broadcast take token ids too): each
// element lands where the f32 kernel puts the same position's value, and
// ids beyond float's 24 bits (and negative ones) arrive unchanged.
TEST(CpuKernels, TransposeAndBroadcastOfIds) {
  constexpr int32_t kLarge = (1 << 30) + 3;
  auto ids = [&](int64_t count) {
    std::vector<int32_t> values(count);
    for (int64_t i = 0; i < count; ++i)
      values[i] = (i % 2 ? -kLarge : kLarge) + static_cast<int32_t>(i);
    return values;
  };
  auto positions = [](int64_t count) {
    std::vector<float> values(count);
    for (int64_t i = 0; i < count; ++i)
      values[i] = static_cast<float>(i);
    return values;
  };
  auto expectMoved = [&](const std::string &what,
                         const std::vector<int32_t> &out,
                         const std::vector<float> &from,
                         const std::vector<int32_t> &input) {
    for (size_t j = 0; j < out.size(); ++j)
      ASSERT_EQ(out[j], input[static_cast<size_t>(from[j])])
          << what << " element " << j;
  };
  std::vector<TransposeCase> transposes = kTransposeCases;
  transposes.push_back({{}, {}});
  for (const TransposeCase &c : transposes) {
    int64_t count = HostTensor::countOf(c.shape);
    int rank = static_cast<int>(c.shape.size());
    std::vector<int32_t> input = ids(count), out(count);
    std::vector<float> from(count);
    cpu::transpose(positions(count).data(), from.data(), c.shape.data(),
                   c.permutation.data(), rank);
    cpu::transpose(input.data(), out.data(), c.shape.data(),
                   c.permutation.data(), rank);
    expectMoved("transpose rank " + std::to_string(rank), out, from, input);
  }
  for (const BroadcastCase &c : kBroadcastCases) {
    int64_t count = HostTensor::countOf(c.resultShape);
    int64_t inputCount = HostTensor::countOf(c.inputShape);
    int resultRank = static_cast<int>(c.resultShape.size());
    int inputRank = static_cast<int>(c.dims.size());
    std::vector<int32_t> input = ids(inputCount), out(count);
    std::vector<float> from(count);
    cpu::broadcast(positions(inputCount).data(), from.data(),
                   c.resultShape.data(), resultRank, c.dims.data(),
                   c.inputShape.data(), inputRank);
    cpu::broadcast(input.data(), out.data(), c.resultShape.data(), resultRank,
                   c.dims.data(), c.inputShape.data(), inputRank);
    expectMoved("broadcast to rank " + std::to_string(resultRank), out, from,
                input);
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
      std::vector<float> out(expected.numElements(), 0.0f);
      cpu::reduce(input.data(), out.data(), c.shape.data(), c.rank(),
                  c.reduced().data(), reduction.kind);
      std::string what = std::string("reduce ") + reduction.name + " of " +
                         std::to_string(HostTensor::countOf(c.shape)) +
                         " into " + std::to_string(out.size());
      expectClose(what, out, expected,
                  reduction.kind == runtime::Reduction::Max ? 0.0 : 1e-6);
    }
}

// A NaN element makes its maximum NaN (as tg.maximum's; the vector max
// dropped it), in every form of the reduction, the reference's too: one
// output per case is NaN, the others are the maxima they were.
TEST(CpuKernels, ReduceMaxKeepsANaN) {
  for (const ReduceCase &c : kReduceCases) {
    std::vector<float> input = uniform(HostTensor::countOf(c.shape), 8);
    input[input.size() / 2] = std::numeric_limits<float>::quiet_NaN();
    HostTensor expected = reference::reduce(host(input, c.shape), c.dims,
                                            false, runtime::Reduction::Max);
    std::vector<float> out(expected.numElements(), 0.0f);
    cpu::reduce(input.data(), out.data(), c.shape.data(), c.rank(),
                c.reduced().data(), runtime::Reduction::Max);
    int nans = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      if (std::isnan(expected.data[i])) {
        ++nans;
        EXPECT_TRUE(std::isnan(out[i])) << "output " << i;
      } else {
        EXPECT_EQ(out[i], expected.data[i]) << "output " << i;
      }
    }
    EXPECT_EQ(nans, 1) << HostTensor::countOf(c.shape) << " into "
                       << out.size();
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
  cpu::embeddingGrad(grad.data(), ids.data(), nullptr, out.data(), rows, width,
                     vocab);
  expectClose("embeddingGrad", out, expected, 1e-5);

  // With a base (tg.embedding_grad's addend): the rows are added to it, in
  // another tensor or in place; rows no id names keep the base.
  std::vector<float> base = uniform(vocab * width, 13);
  std::vector<float> withBase(vocab * width);
  for (size_t i = 0; i < withBase.size(); ++i)
    withBase[i] = base[i] + static_cast<float>(expected[i]);
  std::vector<float> sum(vocab * width, 1.0f);
  cpu::embeddingGrad(grad.data(), ids.data(), base.data(), sum.data(), rows,
                     width, vocab);
  expectClose("embeddingGrad onto a base", sum, withBase, 1e-5);
  cpu::embeddingGrad(grad.data(), ids.data(), base.data(), base.data(), rows,
                     width, vocab);
  expectClose("embeddingGrad in place", base, withBase, 1e-5);

  // An empty table: no rows to write, every id out of range (it divided by
  // the zero vocabulary before).
  cpu::embeddingGrad(grad.data(), ids.data(), nullptr, nullptr, rows, width, 0);
  cpu::gatherGrad(grad.data(), ids.data(), nullptr, 2, 0, rows / 2, width);
}

// Data movement: bit-exact. The outputs start as ones: the kernels must
// write every element.
TEST(CpuKernels, Slice) {
  for (const BlockCase &c : kBlockCases) {
    std::vector<float> input = uniform(c.outer * c.extent * c.inner, 21);
    HostTensor expected = reference::slice(
        host(input, {c.outer, c.extent, c.inner}), 1, c.index, c.length);
    std::vector<float> out(c.outer * c.length * c.inner, 1.0f);
    cpu::slice(input.data(), out.data(), c.outer, c.length, c.extent, c.inner,
               c.index);
    expectClose("slice at " + std::to_string(c.index), out, expected, 0.0);
  }
}

TEST(CpuKernels, SliceGrad) {
  for (const BlockCase &c : kBlockCases) {
    std::vector<float> grad = uniform(c.outer * c.length * c.inner, 22);
    HostTensor expected =
        reference::sliceGrad(host(grad, {c.outer, c.length, c.inner}), 1,
                             c.index, {c.outer, c.extent, c.inner});
    std::vector<float> out(c.outer * c.extent * c.inner, 1.0f);
    cpu::sliceGrad(grad.data(), out.data(), c.outer, c.length, c.extent,
                   c.inner, c.index);
    expectClose("sliceGrad at " + std::to_string(c.index), out, expected, 0.0);
  }
}

// tg.concat as the generated code calls it: one storeSlice per input, the
// three parts of each case's extent (before, the block, after).
TEST(CpuKernels, ConcatAsStoreSlices) {
  for (const BlockCase &c : kBlockCases) {
    std::vector<HostTensor> parts;
    std::vector<std::vector<float>> values;
    for (int64_t length : {c.index, c.length, c.extent - c.index - c.length})
      if (length > 0) {
        values.push_back(uniform(c.outer * length * c.inner,
                                 23 + static_cast<uint32_t>(values.size())));
        parts.push_back(host(values.back(), {c.outer, length, c.inner}));
      }
    std::vector<const HostTensor *> inputs;
    for (const HostTensor &part : parts)
      inputs.push_back(&part);
    HostTensor expected = reference::concat(inputs, 1);
    std::vector<float> out(c.outer * c.extent * c.inner, 1.0f);
    int64_t offset = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
      int64_t length = parts[i].shape[1];
      cpu::storeSlice(out.data(), values[i].data(), c.outer, length, c.extent,
                      c.inner, offset);
      offset += length;
    }
    expectClose("concat of " + std::to_string(parts.size()), out, expected,
                0.0);
  }
}

TEST(CpuKernels, Gather) {
  for (const GatherCase &c : kGatherCases) {
    std::vector<float> input = uniform(c.outer * c.extent * c.inner, 24);
    std::vector<int32_t> indices = gatherIndices(c, 25, false);
    HostTensor expected =
        reference::gather(host(input, {c.outer, c.extent, c.inner}),
                          hostIds(indices, {c.count}), 1);
    std::vector<float> out(c.outer * c.count * c.inner, 1.0f);
    cpu::gather(input.data(), indices.data(), out.data(), c.outer, c.extent,
                c.count, c.inner);
    expectClose("gather of " + std::to_string(c.count), out, expected, 0.0);
  }
}

// An index outside the dimension (the interpreter's error) gives zeros and
// reads nothing; the others are gathered as usual.
TEST(CpuKernels, GatherOutsideGivesZeros) {
  const GatherCase c = kGatherCases[1];
  std::vector<float> input = uniform(c.outer * c.extent * c.inner, 24);
  std::vector<int32_t> indices = gatherIndices(c, 25, true);
  std::vector<float> out(c.outer * c.count * c.inner, 1.0f);
  cpu::gather(input.data(), indices.data(), out.data(), c.outer, c.extent,
              c.count, c.inner);
  std::vector<int32_t> inside = indices;
  for (int32_t &index : inside)
    index = std::clamp<int32_t>(index, 0, static_cast<int32_t>(c.extent - 1));
  HostTensor expected =
      reference::gather(host(input, {c.outer, c.extent, c.inner}),
                        hostIds(inside, {c.count}), 1);
  for (int64_t line = 0; line < c.outer * c.count; ++line)
    if (indices[line % c.count] != inside[line % c.count])
      std::fill_n(expected.data.begin() + line * c.inner, c.inner, 0.0);
  expectClose("gather with indices outside", out, expected, 0.0);
}

// Each output row sums its gradients in index order in float: up to 500 / 16
// values of [-1, 1] per row. Indices outside the dimension add nothing.
TEST(CpuKernels, GatherGrad) {
  for (const GatherCase &c : kGatherCases) {
    std::vector<float> grad = uniform(c.outer * c.count * c.inner, 26);
    std::vector<int32_t> indices = gatherIndices(c, 27, true);
    // The reference takes indices in range: those outside go to row 0 with
    // a zero gradient.
    std::vector<float> counted = grad;
    std::vector<int32_t> inside = indices;
    for (int64_t i = 0; i < c.count; ++i)
      if (indices[i] < 0 || indices[i] >= c.extent) {
        inside[i] = 0;
        for (int64_t o = 0; o < c.outer; ++o)
          std::fill_n(counted.begin() + (o * c.count + i) * c.inner, c.inner,
                      0.0f);
      }
    HostTensor expected = reference::gatherGrad(
        host(counted, {c.outer, c.count, c.inner}), hostIds(inside, {c.count}),
        1, {c.outer, c.extent, c.inner});
    std::vector<float> out(c.outer * c.extent * c.inner, 1.0f);
    cpu::gatherGrad(grad.data(), indices.data(), out.data(), c.outer,
                    c.extent, c.count, c.inner);
    expectClose("gatherGrad of " + std::to_string(c.count), out, expected,
                1e-5);
  }
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

// One float rounding of double angles' sin/cos, then a float rotation.
TEST(CpuKernels, Rotary) {
  for (const RotaryCase &c : kRotaryCases) {
    std::vector<float> input = uniform(c.rows * c.width, 23);
    HostTensor expected =
        reference::rotary(host(input, {c.rows / c.positions, c.positions,
                                       c.width}),
                          c.base, c.inverse, c.first);
    std::vector<float> out(c.rows * c.width, 0.0f);
    cpu::rotary(input.data(), out.data(), c.rows, c.positions, c.width,
                c.base, c.inverse, c.first);
    expectClose("rotary width " + std::to_string(c.width) + " from " +
                    std::to_string(c.first),
                out, expected, 1e-6);
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

// A site with Dropout::deviceKey (CUDA's, which a replayed graph reads
// every step) draws the key's mask: factor() and factors4() read the
// pointed-to (seed, step) in place of the fields, which it ignores.
TEST(CpuKernels, DropoutDeviceKeyReplacesSeedAndStep) {
  const runtime::Dropout byValue{1234, 7, 3, 0.3f, 8};
  const int32_t key[2] = {1234, 7};
  runtime::Dropout fromKey{99, 99, 3, 0.3f, 8};
  fromKey.deviceKey = key;
  int changed = 0;
  for (uint64_t index = 0; index < 4096; index += 4) {
    float a[4], b[4];
    byValue.factors4(index, a);
    fromKey.factors4(index, b);
    for (int q = 0; q < 4; ++q) {
      ASSERT_EQ(a[q], b[q]) << "element " << index + q;
      ASSERT_EQ(byValue.factor(index + q), fromKey.factor(index + q));
    }
    runtime::Dropout ignored{99, 99, 3, 0.3f, 8};
    changed += ignored.factor(index) != fromKey.factor(index);
  }
  EXPECT_GT(changed, 0) << "the fields' own (seed, step) gave the same mask";
}

} // namespace
} // namespace tgc::test
