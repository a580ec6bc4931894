//===- ProgramFiles.cpp - what one training run may write -----------------===//
#include "runtime/program/main/ProgramFiles.h"

#include "common/RunFiles.h"
#include "runtime/program/checkpoint/CheckpointHistory.h"

#include <cstdio>
#include <sys/stat.h>
#include <vector>

namespace tgc::runtime {

std::string checkpointPathFor(const TrainOptions &options,
                              const std::string &program) {
  if (!options.checkpoint.empty())
    return options.checkpoint;
  if (options.resume.empty())
    return program + ".ckpt";
  // X.best holds the best validation, X.step<S> a step of the history:
  // a run resumed from one goes on in X (which it then may not replace
  // unless it is missing: checkReplacedCheckpoints).
  const std::string &resumed = options.resume;
  if (resumed.size() > 5 && resumed.ends_with(".best"))
    return resumed.substr(0, resumed.size() - 5);
  size_t dot = resumed.rfind(".step");
  if (dot != std::string::npos && dot > 0 && dot + 5 < resumed.size() &&
      resumed.find_first_not_of("0123456789", dot + 5) == std::string::npos)
    return resumed.substr(0, dot);
  return resumed;
}

bool checkProgramFiles(const TrainOptions &options,
                       const std::string &checkpoint) {
  auto given = [](const std::string &path) {
    return path == "-" ? std::string() : path;
  };
  std::vector<RunFile> files = {
      {"--resume", options.resume},
      {"--train-data", options.trainData},
      {"--valid-data", options.validData},
      {"--vocab", options.vocabulary},
      {"--train-source", options.trainSource},
      {"--train-target", options.trainTarget},
      {"--valid-source", options.validSource},
      {"--valid-target", options.validTarget},
      {"--translate", given(options.translate)},
      {"--generate", given(options.generate)},
      {"--score", given(options.score)},
      {"the program", thisProgram()},
  };
  // Translating and generating write --output alone (generating with an
  // --output of the checkpoint used to write text over it); scoring writes
  // no file.
  if (!options.translate.empty() || !options.generate.empty()) {
    files.push_back({"--output", given(options.output), true});
  } else if (options.score.empty()) {
    std::string named =
        options.checkpoint.empty() ? "the checkpoint" : "--checkpoint";
    files.push_back({named, checkpoint, true, "--resume"});
    // The lock the run takes and removes at its end: no input or other
    // output may be it (an input holding a number was taken for a stale
    // lock and removed; an output renamed over it, removed at the end).
    files.push_back({named + "'s lock", checkpoint + ".lock", true});
    if (options.validEvery > 0)
      files.push_back({named + "'s best", checkpoint + ".best", true});
    files.push_back({"--metrics", options.metrics, true});
    files.push_back({"--loss-log", options.lossLog, true});
    files.push_back({"--dump-params", options.dumpParameters, true});
  }
  std::string why = findClobberedFile(files);
  if (why.empty())
    why = findUnwritableOutput(files);
  // Text (and --dump-params' floats) never replaces a checkpoint or a
  // corpus (the run's own checkpoint is no such output).
  for (const RunFile &file : files)
    if (why.empty() && file.written && file.mayBe.empty() &&
        file.flag.find("checkpoint") == std::string::npos)
      if (const char *kind = tgcBinaryKind(file.path))
        why = file.flag + " " + file.path + " is " + kind +
              ": a run writes text there, never over a checkpoint or a "
              "token corpus (give another path; nothing was written)";
  if (!why.empty())
    std::fprintf(stderr, "error: %s\n", why.c_str());
  return why.empty();
}

bool checkReplacedCheckpoints(const TrainOptions &options,
                              const std::string &checkpoint) {
  // Continuing a checkpoint replaces it, its .best and its history: they
  // are the run's own.
  if (options.overwrite ||
      (!options.resume.empty() && isSameFile(options.resume, checkpoint)))
    return true;
  std::vector<std::string> existing;
  for (const std::string &path :
       {checkpoint, options.validEvery > 0 ? checkpoint + ".best" : ""}) {
    struct stat status;
    // What is not a regular file is refused when the run claims the path.
    if (!path.empty() && ::stat(path.c_str(), &status) == 0 &&
        S_ISREG(status.st_mode))
      existing.push_back(path);
  }
  if (options.keepLast > 0)
    for (int64_t step : historySteps(checkpoint))
      existing.push_back(historyPath(checkpoint, step));
  if (existing.empty())
    return true;
  if (options.resume.empty() && existing.front() != checkpoint)
    // Its checkpoint is gone (a run stopped before its first save): the
    // file left is no checkpoint to continue.
    std::fprintf(stderr,
                 "error: %s exists, and a new run does not replace it: pass "
                 "--overwrite to start over, or --resume %s to continue from "
                 "it (%s does not exist)\n",
                 existing.front().c_str(), existing.front().c_str(),
                 checkpoint.c_str());
  else if (options.resume.empty())
    std::fprintf(stderr,
                 "error: %s exists, and a new run does not replace it: pass "
                 "--resume %s to continue it, or --overwrite to start over\n",
                 existing.front().c_str(), checkpoint.c_str());
  else
    std::fprintf(stderr,
                 "error: %s exists and is not the --resume file %s: pass "
                 "--overwrite to replace it, or another --checkpoint\n",
                 existing.front().c_str(), options.resume.c_str());
  return false;
}

} // namespace tgc::runtime
