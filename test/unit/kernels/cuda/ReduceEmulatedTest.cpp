//===- ReduceEmulatedTest.cpp - the reductions' kernels on the host -------===//
//
// runtime/kernels/cuda/ReduceKernels.cuh's kernels run by KernelEmulator.h
// as Reduce.cu launches them (along rows; across rows in one slice, and in
// several with finishAcrossRows), on f32 and bf16 inputs, against
// cpu::reduce. Both accumulate in double, in different orders, so the
// results agree to a float's last bit or so. On a GPU, TensorTest.cpp
// checks the same through cuda::reduce.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cuda/KernelEmulator.h"

#include "runtime/kernels/cuda/ReduceKernels.cuh"
#include "test/unit/kernels/KernelTestCases.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>

namespace tgc::test {
namespace {

using runtime::Bf16;

/// cuda::reduce's launches, on the emulator.
template <cuda::Reduction K, typename T>
std::vector<float> emulatedReduce(const std::vector<T> &input,
                                  const std::vector<int64_t> &shape,
                                  const bool *reduced, double divisor) {
  const cuda::ReducePlan plan =
      cuda::planOf(shape.data(), static_cast<int>(shape.size()), reduced);
  std::vector<float> out(plan.outCount, 7.0f);
  if (plan.innermostReduced) {
    emulator::launch(
        dim3(cuda::rowBlocks(plan.outCount)), dim3(cuda::kThreads), 0, [&] {
          cuda::reduceAlongRows<K>(input.data(), out.data(), plan, divisor);
        });
    return out;
  }
  const cuda::AcrossRowsGrid grid = cuda::acrossRowsGrid(plan);
  std::vector<double> partials(grid.slices * plan.outCount, 7.0);
  emulator::launch(dim3(static_cast<unsigned>(grid.blocks),
                        static_cast<unsigned>(grid.slices)),
                   dim3(cuda::kColumns, cuda::kSlices), 0, [&] {
                     cuda::reduceAcrossRows<K>(input.data(), out.data(),
                                               partials.data(), plan,
                                               grid.rowsPerSlice, divisor);
                   });
  if (grid.slices > 1)
    emulator::launch(
        dim3(cuda::blocksFor(plan.outCount)), dim3(cuda::kThreads), 0, [&] {
          cuda::finishAcrossRows<K>(partials.data(), out.data(), plan.outCount,
                                    static_cast<int>(grid.slices), divisor);
        });
  return out;
}

/// How reduceAcrossRows splits `c`'s rows: its grid's slices.
int64_t slicesOf(const ReduceCase &c) {
  return cuda::acrossRowsGrid(
             cuda::planOf(c.shape.data(), c.rank(), c.reduced().data()))
      .slices;
}

/// The emulated kernels against cpu::reduce on `c`: sums of an f32 input
/// and of its bf16 rounding, and the f32 maxima.
void expectAsTheCpu(const ReduceCase &c) {
  const std::array<bool, 8> reduced = c.reduced();
  const std::vector<float> input = uniform(c.count(), 71, -2.0f, 2.0f);
  std::vector<Bf16> rounded(input.size());
  for (size_t i = 0; i < input.size(); ++i)
    rounded[i] = runtime::roundToBf16(input[i]);
  std::string what = "shape";
  for (int d = 0; d < c.rank(); ++d) {
    what += d ? "x" : " ";
    what += std::to_string(c.shape[d]);
    what += reduced[d] ? "(r)" : "";
  }
  auto expectClose = [&](const std::vector<float> &got,
                         const std::vector<float> &want, const char *kind) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-6 * (1.0 + std::fabs(want[i])))
          << what << " " << kind << ", output " << i;
  };
  auto cpuReduce = [&](const auto &values, runtime::Reduction kind) {
    std::vector<float> out(c.outCount());
    cpu::reduce(values.data(), out.data(), c.shape.data(), c.rank(),
                reduced.data(), kind);
    return out;
  };
  using K = cuda::Reduction;
  expectClose(emulatedReduce<K::Sum>(input, c.shape, reduced.data(), 1.0),
              cpuReduce(input, K::Sum), "f32 sum");
  expectClose(emulatedReduce<K::Sum>(rounded, c.shape, reduced.data(), 1.0),
              cpuReduce(rounded, K::Sum), "bf16 sum");
  expectClose(emulatedReduce<K::Max>(input, c.shape, reduced.data(), 1.0),
              cpuReduce(input, K::Max), "f32 max");
  // A NaN element makes its maximum NaN, as on the CPU.
  std::vector<float> withNaN = input;
  withNaN[withNaN.size() / 3] = std::nanf("");
  std::vector<float> got = emulatedReduce<K::Max>(withNaN, c.shape,
                                                  reduced.data(), 1.0),
                     want = cpuReduce(withNaN, K::Max);
  int nans = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    nans += std::isnan(want[i]);
    ASSERT_EQ(std::isnan(got[i]), std::isnan(want[i]))
        << what << " f32 max with a NaN, output " << i;
  }
  EXPECT_EQ(nans, 1) << what;
}

TEST(ReduceEmulated, AlongRowsIsTheCpuSum) {
  expectAsTheCpu({{5, 300}, {1}});
  expectAsTheCpu({{3, 4, 70}, {1, 2}});
}

TEST(ReduceEmulated, AcrossRowsInOneSliceIsTheCpuSum) {
  // A bias gradient's shape: every dimension but the last reduced.
  const ReduceCase bias = {{6, 50, 70}, {0, 1}};
  ASSERT_EQ(slicesOf(bias), 1);
  expectAsTheCpu(bias);
  expectAsTheCpu({{7, 3, 40}, {0}}); // reduced, kept x kept
}

TEST(ReduceEmulated, AcrossRowsInSlicesIsTheCpuSum) {
  const ReduceCase bias = {{4, 1100, 40}, {0, 1}};
  ASSERT_GT(slicesOf(bias), 1);
  expectAsTheCpu(bias);
}

} // namespace
} // namespace tgc::test
