//===- ProcessGroup.h - the processes of a data-parallel run ----*- C++ -*-===//
//
// `mpirun -np N ./train ...` runs N copies of a training program, each on
// its share of every global batch; they agree through this interface.
// MpiProcessGroup.cpp implements it on MPI (built only where CMake found
// MPI); a program started without mpirun has no group (one process, the
// same run as ever). TrainingLoop.h sees only this header, so tgc itself
// never links MPI.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_PROGRAM_PROCESSGROUP_H
#define TGC_RUNTIME_PROGRAM_PROCESSGROUP_H

#include <cstdint>
#include <memory>
#include <string>

namespace tgc::runtime {

struct StepFrame;

class ProcessGroup {
public:
  virtual ~ProcessGroup() = default;
  /// This process's number, 0..size()-1; rank 0 logs, validates and saves.
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Sums `count` values over every process, in place; every process gets
  /// the sums. `what` names the exchange in the error a lost peer causes.
  virtual void sum(float *values, int64_t count, const char *what) = 0;
  virtual void sum(double *values, int64_t count, const char *what) = 0;
  /// Rank 0's long work (a validation, a checkpoint's writes), which may
  /// take far longer than a step: every process calls beginFirstsWork
  /// (which waits until all are there, `what` naming that exchange), rank 0
  /// works while the others wait (in any exchange they make meanwhile, and
  /// in sumAfterFirstsWork, the sum() that ends it and hands round rank 0's
  /// verdict). Their peer timeout then counts from rank 0's last sign of
  /// progress (noteProgress(), Progress.h), not from the start of the wait:
  /// a rank 0 that works on, however long, is waited for; one that died or
  /// hangs is not.
  virtual void beginFirstsWork(const char *what) = 0;
  virtual void sumAfterFirstsWork(double *values, int64_t count,
                                  const char *what) = 0;
  /// The sharded optimizer's exchanges (ShardedOptimizer.h), in place on
  /// the `counts[r]` floats process r owns, laid end to end from `data`:
  /// reduceScatter sums every process's `data` and leaves process r's part
  /// of the sums at the start of its `data`; allGather gives every process
  /// every process's part (taken from its place in the layout).
  virtual void reduceScatter(float *data, const int *counts) = 0;
  virtual void allGather(float *data, const int *counts) = 0;
  /// Sums `count` floats at `data` of every process into rank 0's.
  virtual void sumToFirst(float *data, int64_t count) = 0;
  /// Rank 0's `bytes` bytes at `data`, in every process (NCCL's id, the
  /// run's settings); `what` names them in a timeout or error.
  virtual void shareFromFirst(void *data, int64_t bytes, const char *what) = 0;
  /// The smallest and largest `value` of any process; `what` names it.
  virtual void minMax(uint64_t value, uint64_t &min, uint64_t &max,
                      const char *what) = 0;
  /// Ends every process with exit code `code` (after a message): a process
  /// that stops alone would leave the others waiting.
  [[noreturn]] virtual void abort(int code) = 0;
};

/// The group this process was started in: null without a launcher (plain
/// `./train`), an MPI group under mpirun. False after a message when the
/// launcher asks for processes this build cannot join (built without MPI).
bool joinProcessGroup(int &argc, char **&argv,
                      std::unique_ptr<ProcessGroup> &group);

/// The group StepFrame::allReduceSum sums over (set by joinProcessGroup).
ProcessGroup *activeProcessGroup();

/// What StepFrame::allReduceSum points at in a group of several processes:
/// host memory (CPU programs).
void allReduceHostSum(StepFrame &f, float *data, int64_t count);

/// The gradients' per-token means of this process's batch, data[0, count-1),
/// times its target tokens (sums over them), and the count slot after them,
/// data[count-1], set to those tokens: what the sum of every process's adds
/// up to the global batch's sums and its token count.
void weighByTokens(const StepFrame &f, float *data, int64_t count);

/// After StepFrame::allReduceSum's exchange: the optimizer's weight
/// divided by the global batch's target tokens (its slot's sum).
void divideWeightByTokens(StepFrame &f, float globalTokens);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_PROGRAM_PROCESSGROUP_H
