//===- StepProfile.h - where a compiled CPU step spends its time -*- C++ -*-===//
//
// `--profile` runs each step through the bucket's profileStep (the same ops
// as trainStep, the clock read after each) and prints, after training, the
// time per op kind, the share of the GEMMs, the source locations that cost
// most, and the minor page faults of the steps after the first, their mean
// and median (0 when the steady state touches no new memory; the mean also
// counts what libraries touch first in the early steps). The clock costs
// tens of nanoseconds per op.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_PROGRAM_STEPPROFILE_H
#define TGC_RUNTIME_PROGRAM_STEPPROFILE_H

#include "runtime/program/CompiledStep.h"

#include <cstdio>
#include <vector>

namespace tgc::runtime {

class StepProfile {
public:
  explicit StepProfile(const CompiledModel &model);

  /// Runs one step of `bucket` (which must have a profileStep) and adds its
  /// ops' times.
  void run(const CompiledBucket &bucket, StepFrame &frame);

  void print(std::FILE *out) const;

private:
  const CompiledModel &model;
  /// Per bucket: seconds per op (the bucket's stepOps order), and steps.
  std::vector<std::vector<double>> seconds;
  std::vector<int64_t> steps;
  /// The process's minor page faults at the end of the last profiled step,
  /// and those of each step after the first.
  long faultsSoFar = -1;
  std::vector<long> stepFaults;
};

} // namespace tgc::runtime

#endif // TGC_RUNTIME_PROGRAM_STEPPROFILE_H
