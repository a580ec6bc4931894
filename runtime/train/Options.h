//===- Options.h - the command line of a generated training binary -*- C++ -*-===//
#ifndef TGC_RUNTIME_TRAIN_OPTIONS_H
#define TGC_RUNTIME_TRAIN_OPTIONS_H

#include "runtime/Tasks.h"

#include <cstdint>
#include <optional>
#include <string>

namespace tgc::runtime {

struct TrainOptions {
  Task task = Task::Reverse;
  int64_t steps = 1000;
  uint32_t seed = 1;
  int64_t logEvery = 100;
  /// Where to write every variable (raw f32, declaration order) at the end.
  std::string dumpParameters;
  /// Where to write each step's loss and token count, one line per step.
  std::string lossLog;
};

/// Parses `--task T --steps N --seed S --log-every K --dump-params FILE
/// --loss-log FILE` (also `--flag=value`) and `--help`. Returns false when
/// the program should stop: after printing the help (`exitCode` 0) or a
/// problem (`exitCode` 2).
bool parseTrainOptions(int argc, char **argv, TrainOptions &options,
                       int &exitCode);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_TRAIN_OPTIONS_H
