//===- KernelTimes.h - what a GPU step's device work cost -------*- C++ -*-===//
//
// The GPU half of `--profile`: a GPU program records every kernel, copy
// and memset of its profiled steps (runtime/program/cuda/KernelProfile.h,
// through CUPTI) and hands each step's records here. Printed after the
// ops' table (StepProfile.h): the launches per step, the device's busy
// time against the step's span (the rest is launch gaps and host work:
// what a CUDA graph takes away), and the kernels that cost most.
//
// Plain C++ on host timestamps (nanoseconds, CUPTI's clock), so that the
// arithmetic is tested without a GPU.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_PROGRAM_KERNELTIMES_H
#define TGC_RUNTIME_PROGRAM_KERNELTIMES_H

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tgc::runtime {

/// One piece of device work of a step.
struct DeviceWork {
  enum Kind { Kernel, Copy, Memset };
  Kind kind;
  /// A kernel's name as CUPTI gives it (mangled or not); ignored for copies
  /// and memsets, which are counted together.
  std::string name;
  uint64_t start, end; ///< nanoseconds, start <= end
};

/// Which op of a profiled step the host was running at a time: the marks
/// it made before each op (and -1 after the last), in time order. A record
/// of the API call that launched some work gives that call's host time,
/// and so the op, where CUPTI gives no external correlation for it.
class OpMarks {
public:
  void clear() { marks.clear(); }
  void mark(uint64_t time, int op) { marks.push_back({time, op}); }
  /// The op marked last at or before `time`: -1 before the first mark, or
  /// after a -1.
  int opAt(uint64_t time) const;

private:
  std::vector<std::pair<uint64_t, int>> marks;
};

class KernelTimes {
public:
  /// A profiled step that began at `begin` and ended, its device work done,
  /// at `end` (the host's clock, as CUPTI reads it), with what the device
  /// ran for it.
  void addStep(uint64_t begin, uint64_t end, const std::vector<DeviceWork> &work);

  int64_t steps() const { return stepCount; }
  /// Per step, over every step.
  double kernelsPerStep() const;
  double kernelMsPerStep() const;
  /// The medians over the steps after the first (the first also creates
  /// the libraries' handles and loads their kernels; a median also leaves
  /// out the step that captures a CUDA graph): the step's span, and the
  /// part of it with device work running (the union of the intervals).
  double spanMsPerStep() const;
  double busyMsPerStep() const;

  /// The section --profile prints after the ops' table.
  void print(std::FILE *out) const;

  /// "tgc::cuda::attentionRows<64>" of "_ZN3tgc4cuda...": demangled, without
  /// the parameter list; other names as they are. At most 72 characters.
  static std::string shortName(const std::string &name);

private:
  struct Totals {
    int64_t launches = 0;
    uint64_t nanoseconds = 0;
  };
  int64_t stepCount = 0;
  Totals kernels, copies, memsets;
  std::vector<uint64_t> laterSpans, laterBusy; // the steps after the first
  std::map<std::string, Totals> byName;
};

} // namespace tgc::runtime

#endif // TGC_RUNTIME_PROGRAM_KERNELTIMES_H
