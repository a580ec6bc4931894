//===- StepCalls.cpp - a CPU step's checked and profiled runs ------------===//
//
// A generated CPU program writes its trainStep once, as straight calls, and
// the same calls as a table (StepCall); the two other ways of running the
// step, after a NaN and for --profile, are the loops here. Written as two
// more copies of the step in every program, they made the base
// Transformer's program take 12.5 s to compile instead of 8 (-O3), and 24 s
// instead of 11 instrumented (test/sanitizers.sh).
//
//===----------------------------------------------------------------------===//
#include "runtime/program/CompiledStep.h"

#include "runtime/kernels/cpu/SideBySide.h"

#include <ctime>

namespace tgc::runtime {

namespace {

/// profileStepCalls's clock: lap(t) adds the seconds since the last lap (or
/// the clock's creation) to t.
class OpClock {
public:
  void lap(double &seconds) {
    timespec now = monotonicNow();
    int64_t nanoseconds =
        (int64_t(now.tv_sec) - int64_t(last.tv_sec)) * 1000000000 +
        (int64_t(now.tv_nsec) - int64_t(last.tv_nsec));
    seconds += 1e-9 * static_cast<double>(nanoseconds);
    last = now;
  }

private:
  static timespec monotonicNow() {
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now;
  }
  timespec last = monotonicNow();
};

bool resultsFinite(const StepCalls &step, const StepCall &call,
                   StepFrame &frame) {
  for (int i = 0; i < call.numResults; ++i) {
    const ArenaFloats &floats = step.results[call.firstResult + i];
    if (!allFinite(reinterpret_cast<const float *>(frame.arena + floats.offset),
                   floats.count))
      return false;
  }
  return true;
}

} // namespace

const char *checkStepCalls(const StepCalls &step, StepFrame &frame) {
  // One call at a time, a pair's too: the same values, and the first
  // non-finite one is found.
  for (int i = 0; i < step.numCalls; ++i) {
    const StepCall &call = step.calls[i];
    if (call.updatesState)
      continue;
    call.run(frame);
    if (!resultsFinite(step, call, frame))
      return call.what;
  }
  return nullptr;
}

void profileStepCalls(const StepCalls &step, StepFrame &frame,
                      double *seconds) {
  OpClock clock;
  for (int i = 0; i < step.numCalls; ++i) {
    const StepCall &call = step.calls[i];
    if (call.updatesState && !step.mayUpdateState(frame)) {
      clock.lap(seconds[i]);
      continue;
    }
    if (call.shareBesideNext <= 0.0 || i + 1 == step.numCalls) {
      call.run(frame);
      clock.lap(seconds[i]);
      continue;
    }
    const StepCall &next = step.calls[i + 1];
    cpu::sideBySide([&] { call.run(frame); }, [&] { next.run(frame); });
    double both = 0.0;
    clock.lap(both);
    seconds[i] += both * call.shareBesideNext;
    seconds[i + 1] += both * (1.0 - call.shareBesideNext);
    ++i;
  }
}

} // namespace tgc::runtime
