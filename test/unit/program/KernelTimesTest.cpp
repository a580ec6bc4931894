// The arithmetic of a GPU program's --profile (runtime/program/main/
// KernelTimes.h) on hand-made device records: launches and kernel time per
// step, the device's busy time as the union of its work within the step,
// the first step left out of the span and the medians of the others,
// kernels' names made short, the printed section; and which op an API
// call's host time falls in (OpMarks).
#include "runtime/program/main/KernelTimes.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace tgc::runtime {
namespace {

constexpr uint64_t kUs = 1000; // nanoseconds

/// Two overlapping kernels, a memset, and a copy that ends after the step.
std::vector<DeviceWork> stepWork(uint64_t at) {
  return {{DeviceWork::Kernel, "gemm", at + 10 * kUs, at + 30 * kUs},
          {DeviceWork::Kernel, "rows", at + 20 * kUs, at + 40 * kUs},
          {DeviceWork::Memset, "", at + 50 * kUs, at + 60 * kUs},
          {DeviceWork::Copy, "", at + 95 * kUs, at + 120 * kUs}};
}

TEST(KernelTimes, BusyIsTheUnionOfTheWorkWithinTheStep) {
  KernelTimes times;
  // The first step is long (handles created, kernels loaded): not in the span.
  times.addStep(0, 900 * kUs, stepWork(0));
  times.addStep(1000 * kUs, 1100 * kUs, stepWork(1000 * kUs));
  times.addStep(2000 * kUs, 2100 * kUs, stepWork(2000 * kUs));
  EXPECT_EQ(times.steps(), 3);
  EXPECT_DOUBLE_EQ(times.kernelsPerStep(), 2.0);
  EXPECT_DOUBLE_EQ(times.kernelMsPerStep(), 0.040); // 20 + 20 us
  EXPECT_DOUBLE_EQ(times.spanMsPerStep(), 0.100);
  // 10..40 (the kernels overlap), 50..60, 95..100 (the copy, clipped).
  EXPECT_DOUBLE_EQ(times.busyMsPerStep(), 0.045);
}

// The step that captures a CUDA graph (or any one slow step) does not
// move the medians.
TEST(KernelTimes, SpanAndBusyAreMediansOfTheLaterSteps) {
  KernelTimes times;
  const uint64_t spans[] = {900, 100, 5000, 120, 110};
  uint64_t at = 0;
  for (uint64_t span : spans) {
    times.addStep(at, at + span * kUs,
                  {{DeviceWork::Kernel, "k", at, at + span / 2 * kUs}});
    at += 10000 * kUs;
  }
  // Later spans 100, 5000, 120, 110: the middle two are 110 and 120.
  EXPECT_DOUBLE_EQ(times.spanMsPerStep(), 0.115);
  // Busy is half of each span: 50, 2500, 60, 55.
  EXPECT_DOUBLE_EQ(times.busyMsPerStep(), 0.0575);
}

TEST(KernelTimes, OneStepHasNoSpan) {
  KernelTimes times;
  times.addStep(0, 100 * kUs, stepWork(0));
  EXPECT_DOUBLE_EQ(times.spanMsPerStep(), 0.0);
  EXPECT_DOUBLE_EQ(times.busyMsPerStep(), 0.0);
  EXPECT_DOUBLE_EQ(times.kernelMsPerStep(), 0.040);
}

TEST(KernelTimes, ShortNamesKeepTheNameAndTemplateArguments) {
  EXPECT_EQ(KernelTimes::shortName(
                "_ZN3tgc4cuda12_GLOBAL__N_113attentionRowsILi64ELb1EEEvPKfPf"),
            "tgc::cuda::attentionRows<64, true>");
  // cuBLAS's kernels are not mangled.
  EXPECT_EQ(KernelTimes::shortName("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT"),
            "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT");
  std::string longName(100, 'k');
  std::string shortened = KernelTimes::shortName(longName);
  EXPECT_EQ(shortened.size(), 72u);
  EXPECT_EQ(shortened.substr(69), "...");
}

/// What print writes.
std::string printed(const KernelTimes &times) {
  char *text = nullptr;
  size_t size = 0;
  std::FILE *out = open_memstream(&text, &size);
  times.print(out);
  std::fclose(out);
  std::string result(text, size);
  std::free(text);
  return result;
}

TEST(KernelTimes, PrintsTheStepAndTheCostliestKernelsFirst) {
  KernelTimes times;
  for (uint64_t step = 0; step < 2; ++step) {
    uint64_t at = step * 1000 * kUs;
    times.addStep(at, at + 100 * kUs,
                  {{DeviceWork::Kernel, "small", at, at + 5 * kUs},
                   {DeviceWork::Kernel, "large", at + 5 * kUs, at + 45 * kUs},
                   {DeviceWork::Kernel, "small", at + 45 * kUs, at + 50 * kUs}});
  }
  std::string text = printed(times);
  EXPECT_NE(text.find("GPU kernels of 2 steps: 3.0 launches and 0.050 ms of "
                      "kernels a step"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("steps after the first (medians): 0.100 ms a step "
                      "from its start to its loss on the host, the device "
                      "busy 0.050 ms (50.0%)"),
            std::string::npos)
      << text;
  size_t large = text.find("     0.040   80.0%       1.0  large");
  size_t small = text.find("     0.010   20.0%       2.0  small");
  ASSERT_NE(large, std::string::npos) << text;
  ASSERT_NE(small, std::string::npos) << text;
  EXPECT_LT(large, small);
}

// An API call's host time gives its op: the last mark at or before it.
TEST(OpMarks, GiveTheOpTheHostWasIn) {
  OpMarks marks;
  marks.mark(10, 0);
  marks.mark(20, 1);
  marks.mark(20, 2); // an op that launched nothing
  marks.mark(30, -1);
  EXPECT_EQ(marks.opAt(5), -1); // before the step's first op: the upload
  EXPECT_EQ(marks.opAt(10), 0);
  EXPECT_EQ(marks.opAt(19), 0);
  EXPECT_EQ(marks.opAt(20), 2);
  EXPECT_EQ(marks.opAt(29), 2);
  EXPECT_EQ(marks.opAt(30), -1); // the finish
  EXPECT_EQ(marks.opAt(1000), -1);
  marks.clear();
  EXPECT_EQ(marks.opAt(15), -1);
}

TEST(KernelTimes, SaysWhenNoStepWasRecorded) {
  EXPECT_EQ(printed(KernelTimes{}), "GPU kernels: no step was recorded\n");
}

} // namespace
} // namespace tgc::runtime
