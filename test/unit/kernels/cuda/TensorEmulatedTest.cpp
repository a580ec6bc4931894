//===- TensorEmulatedTest.cpp - transposes and broadcasts on the host -----===//
//
// runtime/kernels/cuda/GatherKernels.cuh's transposes (f32, f32 rounded to
// bf16, i32) and broadcasts (f32, i32), its host side and kernels run by
// KernelEmulator.h, against the CPU kernels, bit for bit: through the
// four-at-a-time path (a head split keeps its innermost values together)
// and the one-at-a-time path, up to the largest rank a tg tensor has. On a
// GPU, TensorTest.cpp checks the same through Tensor.cu.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cuda/KernelEmulator.h"

#include "runtime/kernels/cuda/GatherKernels.cuh"
#include "test/unit/kernels/KernelTestCases.h"

#include <gtest/gtest.h>

#include <string>

namespace tgc::test {
namespace {

/// kTransposeCases, a scalar and a permutation of the largest rank.
std::vector<TransposeCase> transposeCases() {
  std::vector<TransposeCase> cases = kTransposeCases;
  cases.push_back({{}, {}});
  cases.push_back({{2, 3, 1, 2, 3, 2, 2, 4}, {7, 0, 6, 1, 5, 2, 4, 3}});
  static_assert(runtime::kMaxRank == 8);
  return cases;
}

/// Ids beyond float's 24 bits, of both signs.
std::vector<int32_t> ids(int64_t count) {
  std::vector<int32_t> values(count);
  for (int64_t i = 0; i < count; ++i)
    values[i] = (i % 2 ? -(1 << 30) : (1 << 30)) + static_cast<int32_t>(i);
  return values;
}

template <typename In, typename Out>
void expectTransposesAsTheCpu(const std::vector<In> &input,
                              const TransposeCase &c, std::vector<Out> &got,
                              std::vector<const void *> *ran = nullptr) {
  const int rank = static_cast<int>(c.shape.size());
  std::vector<Out> expected(got.size());
  cpu::transpose(input.data(), expected.data(), c.shape.data(),
                 c.permutation.data(), rank);
  cuda::transposeTo(input.data(), got.data(), c.shape.data(),
                    c.permutation.data(), rank,
                    emulator::HostLaunch{cuda::kThreads, ran});
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(std::memcmp(&got[i], &expected[i], sizeof(Out)), 0)
        << "rank " << rank << " element " << i;
}

TEST(TensorEmulated, TransposesAreTheCpus) {
  for (const TransposeCase &c : transposeCases()) {
    const int64_t count = countOf(c.shape);
    std::vector<float> f32(count, 7.0f);
    expectTransposesAsTheCpu(uniform(count, 9), c, f32);
    std::vector<runtime::Bf16> bf16(count, runtime::Bf16{0x7fc0});
    expectTransposesAsTheCpu(uniform(count, 9), c, bf16);
    std::vector<int32_t> i32(count, 7);
    expectTransposesAsTheCpu(ids(count), c, i32);
  }
}

// The head split ([B, S, H, D] -> [B, H, S, D], D = 8) goes four values a
// thread; a permutation that moves the innermost dimension goes one.
TEST(TensorEmulated, AHeadSplitMovesQuads) {
  const TransposeCase headSplit = kTransposeCases[0], strided = kTransposeCases[2];
  ASSERT_EQ(headSplit.permutation.back(), 3);
  ASSERT_NE(strided.permutation.back(), 3);
  std::vector<const void *> ran;
  auto kernel = [](auto *element, auto *out) {
    return reinterpret_cast<const void *>(
        cuda::gatherKernel<uint32_t, std::remove_cv_t<std::remove_pointer_t<
                                         decltype(element)>>,
                           std::remove_pointer_t<decltype(out)>>);
  };
  std::vector<float> f32(countOf(headSplit.shape));
  expectTransposesAsTheCpu(uniform(f32.size(), 3), headSplit, f32, &ran);
  std::vector<runtime::Bf16> bf16(f32.size());
  expectTransposesAsTheCpu(uniform(f32.size(), 3), headSplit, bf16, &ran);
  std::vector<int32_t> i32(f32.size());
  expectTransposesAsTheCpu(ids(f32.size()), headSplit, i32, &ran);
  std::vector<float> one(countOf(strided.shape));
  expectTransposesAsTheCpu(uniform(one.size(), 4), strided, one, &ran);
  const std::vector<const void *> expected = {
      kernel((float4 *)nullptr, (float4 *)nullptr),
      kernel((float4 *)nullptr, (uint2 *)nullptr),
      kernel((int4 *)nullptr, (int4 *)nullptr),
      kernel((float *)nullptr, (float *)nullptr)};
  EXPECT_EQ(ran, expected);
}

TEST(TensorEmulated, BroadcastsAreTheCpus) {
  std::vector<BroadcastCase> cases = kBroadcastCases;
  cases.push_back({{3, 1, 2}, {1, 3, 7}, {2, 3, 1, 5, 2, 1, 2, 2}});
  for (const BroadcastCase &c : cases) {
    const int64_t count = countOf(c.resultShape);
    const int resultRank = static_cast<int>(c.resultShape.size()),
              inputRank = static_cast<int>(c.inputShape.size());
    const std::string tag = "broadcast to rank " + std::to_string(resultRank);
    const std::vector<float> input = uniform(countOf(c.inputShape), 10);
    std::vector<float> expected(count), got(count, 7.0f);
    cpu::broadcast(input.data(), expected.data(), c.resultShape.data(),
                   resultRank, c.dims.data(), c.inputShape.data(), inputRank);
    cuda::broadcastOf(input.data(), got.data(), c.resultShape.data(),
                      resultRank, c.dims.data(), c.inputShape.data(),
                      inputRank, emulator::HostLaunch{cuda::kThreads});
    EXPECT_EQ(got, expected) << tag;
    const std::vector<int32_t> inputIds = ids(countOf(c.inputShape));
    std::vector<int32_t> expectedIds(count), gotIds(count, 7);
    cpu::broadcast(inputIds.data(), expectedIds.data(), c.resultShape.data(),
                   resultRank, c.dims.data(), c.inputShape.data(), inputRank);
    cuda::broadcastOf(inputIds.data(), gotIds.data(), c.resultShape.data(),
                      resultRank, c.dims.data(), c.inputShape.data(),
                      inputRank, emulator::HostLaunch{cuda::kThreads});
    EXPECT_EQ(gotIds, expectedIds) << tag << " (ids)";
  }
}

} // namespace
} // namespace tgc::test
