//===- Main.cpp - main() of every generated training binary --------------===//
//
// The process's set-up before the run (TrainMain.h): OpenMP's thread
// defaults (which may start the program again), the thread that takes
// SIGINT and SIGTERM, the data-parallel group under mpirun, and how the
// process ends where a library cannot return (ProcessEnd.h). Alone in its
// archive, TgcProgramMain, so that tests can link the rest of the shell;
// the one file that names the generated kCompiledModel.
//
//===----------------------------------------------------------------------===//
#include "common/FileSizeLimit.h"
#include "runtime/program/CompiledStep.h"
#include "runtime/program/ProcessEnd.h"
#include "runtime/program/checkpoint/Checkpoint.h"
#include "runtime/program/main/ThreadDefaults.h"
#include "runtime/program/main/TrainMain.h"
#include "runtime/program/parallel/ProcessGroup.h"
#include "runtime/program/train/Interrupt.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>

using namespace tgc::runtime;

namespace {

/// About 6 FLOPs per trainable parameter and token of the largest bucket
/// (the forward's multiply-add, the backward's two): enough to tell a toy
/// step from a real one (ThreadDefaults.h).
double estimatedStepFlops(const CompiledModel &model) {
  const CompiledBucket &largest = model.buckets[model.numBuckets - 1];
  return 6.0 * static_cast<double>(model.gradientFloats) *
         static_cast<double>(largest.batchSize *
                             std::max(largest.sourceLength, largest.targetLength));
}

/// An interrupt outside the training loop (evaluation, --translate) exits
/// with 128 + the signal, exit handlers and all (they remove checkpoint
/// locks); a data-parallel watchdog ends the process at once.
[[noreturn]] void exitProcess(int status) { std::exit(status); }
[[noreturn]] void exitProcessNow(int status) { std::_Exit(status); }

} // namespace

int main(int argc, char **argv) {
  tgc::reportFileSizeLimitAsAnError();
  // A closed standard output (`./train | head`, or `| tee` ended by the
  // same Ctrl-C) must not kill the run mid-step or mid-save, without a
  // checkpoint and with its lock left: ignored, the log's writes fail
  // (EPIPE) and the run goes on; what it writes itself, it checks.
  std::signal(SIGPIPE, SIG_IGN);
  setProcessEnders(exitProcess, exitProcessNow);
  chooseThreadDefaults(argv, estimatedStepFlops(kCompiledModel));
  // Before the first thread (MPI's, OpenMP's, CUDA's) exists, so that all
  // of them leave SIGINT and SIGTERM to the one thread that waits for them.
  watchInterruptSignals();
  // Under mpirun, one of a data-parallel run's processes (after the thread
  // defaults, which may restart the program).
  std::unique_ptr<ProcessGroup> group;
  if (!joinProcessGroup(argc, argv, group))
    return 1;
  if (group && group->rank() != 0)
    std::freopen("/dev/null", "w", stdout); // rank 0 logs; errors stay
  int code = trainMain(kCompiledModel, argc, argv, group.get());
  // The run has saved for the last time: its checkpoints' locks go before
  // MPI's teardown, which mpirun's SIGKILL may cut short.
  releaseCheckpointClaims();
  // A process that stops alone would leave the others waiting for it; an
  // interrupt (128 + the signal) stops them all at the same step.
  if (group && code != 0 && code < 128)
    group->abort(code);
  return code;
}
