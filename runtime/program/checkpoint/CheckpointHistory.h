//===- CheckpointHistory.h - the last N checkpoints (--keep-last) -*- C++ -*-===//
//
// After each save of <checkpoint>, --keep-last N links it as
// <checkpoint>.step<S> (a hard link: no copy, and the next save's rename
// leaves the link on the old file) and removes all but the N newest such
// files. `tgc-data average --last N <checkpoint>` averages them, as the paper
// averages the last 5 (base) or 20 (big) checkpoints.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_PROGRAM_CHECKPOINTHISTORY_H
#define TGC_RUNTIME_PROGRAM_CHECKPOINTHISTORY_H

#include <cstdint>
#include <string>
#include <vector>

namespace tgc::runtime {

/// "<checkpoint>.step<step>".
std::string historyPath(const std::string &checkpoint, int64_t step);

/// The steps of the <checkpoint>.step<S> files that exist, ascending.
std::vector<int64_t> historySteps(const std::string &checkpoint);

/// Links the just-saved `checkpoint` (the file, where it is a symbolic
/// link) as its history file of `step`, removes history files of later
/// steps (a replaced run's) and keeps the `keep` newest. Returns an empty
/// string or what failed.
std::string keepInHistory(const std::string &checkpoint, int64_t step,
                          int64_t keep);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_PROGRAM_CHECKPOINTHISTORY_H
