//===- StepProfile.h - where a compiled step spends its time ----*- C++ -*-===//
//
// `--profile` runs each step through the bucket's profileStep (the same ops
// as trainStep, each op's time added to its entry) and prints, after
// training, the time per op kind, the share of the GEMMs, the source
// locations that cost most, and the minor page faults of the steps after
// the first, their mean and median (0 when the steady state touches no new
// memory; the mean also counts what libraries touch first in the early
// steps).
//
// On the CPU an op's time is the clock read after it, which costs tens of
// nanoseconds per op. On a GPU it is the time of the kernels, copies and
// memsets the op launched, as the device ran them (runtime/program/cuda/
// KernelProfile.h), op by op (no CUDA graph); `kernels()` then also gets
// every step's device work, printed after the ops (KernelTimes.h). With
// --cuda-graphs the steps are replayed graphs, recorded whole: the kernels'
// section without the ops' table, to set against an op-by-op profile.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_PROGRAM_STEPPROFILE_H
#define TGC_RUNTIME_PROGRAM_STEPPROFILE_H

#include "runtime/program/CompiledStep.h"
#include "runtime/program/main/KernelTimes.h"

#include <cstdio>
#include <vector>

namespace tgc::runtime {

class StepProfile {
public:
  explicit StepProfile(const CompiledModel &model);

  /// Runs one step of `bucket` (which must have a profileStep) and adds its
  /// ops' times.
  void run(const CompiledBucket &bucket, StepFrame &frame);
  /// A GPU program's step run as usual (--cuda-graphs: replayed as one
  /// graph), its device work recorded whole: no op's time.
  void runWhole(const CompiledBucket &bucket, StepFrame &frame);

  void print(std::FILE *out) const;

  /// A GPU program's device work, step by step (printed when it has steps).
  KernelTimes &kernels() { return deviceWork; }

private:
  const CompiledModel &model;
  /// Per bucket: seconds per op (the bucket's stepOps order), and steps.
  std::vector<std::vector<double>> seconds;
  std::vector<int64_t> steps;
  int64_t wholeSteps = 0;
  /// The process's minor page faults at the end of the last profiled step,
  /// and those of each step after the first.
  long faultsSoFar = -1;
  std::vector<long> stepFaults;
  KernelTimes deviceWork;
};

} // namespace tgc::runtime

#endif // TGC_RUNTIME_PROGRAM_STEPPROFILE_H
