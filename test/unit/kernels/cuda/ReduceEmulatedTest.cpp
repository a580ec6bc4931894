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

/// The emulated kernels against cpu::reduce on `shape` with `flags`' dimensions
/// reduced: sums of an f32 input and of its bf16 rounding, and the f32 maxima.
void expectAsTheCpu(const std::vector<int64_t> &shape,
                    std::initializer_list<bool> flags) {
  const std::vector<bool> flagVector(flags);
  bool reduced[8] = {};
  std::copy(flagVector.begin(), flagVector.end(), reduced);
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  const std::vector<float> input = uniform(count, 71, -2.0f, 2.0f);
  std::vector<Bf16> rounded(count);
  for (int64_t i = 0; i < count; ++i)
    rounded[i] = runtime::roundToBf16(input[i]);
  const int rank = static_cast<int>(shape.size());
  std::string what = "shape";
  for (size_t d = 0; d < shape.size(); ++d) {
    what += d ? "x" : " ";
    what += std::to_string(shape[d]);
    what += reduced[d] ? "(r)" : "";
  }
  auto expectClose = [&](const std::vector<float> &got,
                         const std::vector<float> &want, const char *kind) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-6 * (1.0 + std::fabs(want[i])))
          << what << " " << kind << ", output " << i;
  };

  const cuda::ReducePlan plan = cuda::planOf(shape.data(), rank, reduced);
  std::vector<float> want(plan.outCount), wantRounded(plan.outCount);
  cpu::reduce(input.data(), want.data(), shape.data(), rank, reduced,
              runtime::Reduction::Sum);
  cpu::reduce(rounded.data(), wantRounded.data(), shape.data(), rank, reduced,
              runtime::Reduction::Sum);
  expectClose(emulatedReduce<cuda::Reduction::Sum>(input, shape, reduced, 1.0),
              want, "f32 sum");
  expectClose(
      emulatedReduce<cuda::Reduction::Sum>(rounded, shape, reduced, 1.0),
      wantRounded, "bf16 sum");
  cpu::reduce(input.data(), want.data(), shape.data(), rank, reduced,
              runtime::Reduction::Max);
  expectClose(emulatedReduce<cuda::Reduction::Max>(input, shape, reduced, 1.0),
              want, "f32 max");
}

TEST(ReduceEmulated, AlongRowsIsTheCpuSum) {
  expectAsTheCpu({5, 300}, {false, true});
  expectAsTheCpu({3, 4, 70}, {false, true, true});
}

TEST(ReduceEmulated, AcrossRowsInOneSliceIsTheCpuSum) {
  // A bias gradient's shape: every dimension but the last reduced.
  const std::vector<int64_t> shape = {6, 50, 70};
  bool reduced[] = {true, true, false};
  ASSERT_EQ(cuda::acrossRowsGrid(cuda::planOf(shape.data(), 3, reduced)).slices,
            1);
  expectAsTheCpu(shape, {true, true, false});
  expectAsTheCpu({7, 3, 40}, {true, false, false}); // reduced, kept x kept
}

TEST(ReduceEmulated, AcrossRowsInSlicesIsTheCpuSum) {
  const std::vector<int64_t> shape = {4, 1100, 40};
  bool reduced[] = {true, true, false};
  ASSERT_GT(cuda::acrossRowsGrid(cuda::planOf(shape.data(), 3, reduced)).slices,
            1);
  expectAsTheCpu(shape, {true, true, false});
}

} // namespace
} // namespace tgc::test
