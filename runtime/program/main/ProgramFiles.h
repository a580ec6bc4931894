//===- ProgramFiles.h - what one training run may write ---------*- C++ -*-===//
//
// A run writes only files it was asked to write, and destroys none it
// reads or did not start:
// - no output (the checkpoint, <checkpoint>.best, --metrics, --loss-log,
//   --dump-params, --output) is the same file as an input (--resume, the
//   data, --vocab, --translate, the program itself) or as another output
//   (common/RunFiles.h); the checkpoint may be the --resume file, which
//   it continues;
// - a run replaces an existing checkpoint (or <checkpoint>.best, or the
//   --keep-last history) only when it continues it (--resume names the
//   checkpoint) or with --overwrite: `./train --steps 2` next to the
//   checkpoint of a 40-step run used to replace it silently.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_PROGRAM_PROGRAMFILES_H
#define TGC_RUNTIME_PROGRAM_PROGRAMFILES_H

#include "runtime/program/train/Options.h"

#include <string>

namespace tgc::runtime {

/// Where the run's checkpoint goes: --checkpoint, else the --resume file
/// (the run's own checkpoint X where that is X.best or a --keep-last
/// history file X.step<S>, which going on there would write over), else
/// "<program>.ckpt".
std::string checkpointPathFor(const TrainOptions &options,
                              const std::string &program);

/// Whether an output of the run is the same file as an input or another
/// output; false after a message. Checked before anything is written.
bool checkProgramFiles(const TrainOptions &options,
                       const std::string &checkpoint);

/// Whether the run may replace what exists of `checkpoint`, its .best
/// (with --valid-every) and its history (with --keep-last); false after a
/// message that says to pass --resume or --overwrite.
bool checkReplacedCheckpoints(const TrainOptions &options,
                              const std::string &checkpoint);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_PROGRAM_PROGRAMFILES_H
