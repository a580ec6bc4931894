//===- KernelProfileTest.cpp - a GPU program's --profile, on the GPU -----===//
//
// runtime/program/cuda/KernelProfile.h: a two-op "step" (a transpose
// kernel; a cuBLAS GEMM) recorded through CUPTI. Each op gets the device
// time of its own work, cuBLAS's included; what ran before the step is not
// the step's; the step's kernels reach KernelTimes. Skips, saying why,
// without a GPU or without CUPTI.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cuda/KernelTestSupport.h"
#include "runtime/program/cuda/KernelProfile.h"

namespace tgc::test {
namespace {

TEST_F(CudaKernels, ProfileTimesEachOpByItsOwnKernels) {
  runtime::KernelTimes times;
  std::string why;
  if (!cuda::startKernelProfile(&times, why))
    GTEST_SKIP() << "--profile cannot record here: " << why;
  const int64_t n = 512;
  const int64_t shape[] = {n, n}, swap[] = {1, 0};
  DeviceArray<float> a(uniform(n * n, 1)), b(uniform(n * n, 2)), c(n * n);
  // Work before the step is not the step's.
  for (int i = 0; i < 5; ++i)
    cuda::transpose(a.get(), c.get(), shape, swap, 2);
  for (int step = 0; step < 2; ++step) {
    double seconds[3] = {0.0, 0.0, 0.0};
    cuda::beginProfiledStep(seconds);
    cuda::profileOp(0);
    cuda::transpose(a.get(), c.get(), shape, swap, 2);
    cuda::profileOp(1);
    cuda::matmul(a.get(), b.get(), c.get(), 1, n, n, n, false, false, false);
    cuda::profileOp(-1);
    cuda::endProfiledStep();
    std::string failure;
    ASSERT_FALSE(cuda::firstError(failure)) << failure;
    EXPECT_GT(seconds[0], 0.0) << "step " << step << ": the transpose";
    EXPECT_GT(seconds[1], 0.0) << "step " << step << ": the GEMM (cuBLAS)";
    EXPECT_EQ(seconds[2], 0.0) << "step " << step << ": no op 2 ran";
    // A 512^3 GEMM takes microseconds, not seconds.
    EXPECT_LT(seconds[0] + seconds[1], 0.1) << "step " << step;
  }
  EXPECT_EQ(times.steps(), 2);
  // The transpose and the GEMM's kernel(s); not the five before the steps.
  EXPECT_GE(times.kernelsPerStep(), 2.0);
  EXPECT_LT(times.kernelsPerStep(), 5.0);
  EXPECT_GT(times.busyMsPerStep(), 0.0);
  EXPECT_LE(times.busyMsPerStep(), times.spanMsPerStep());
}

} // namespace
} // namespace tgc::test
