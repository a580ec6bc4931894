//===- CheckpointHistory.cpp - the last N checkpoints (--keep-last) -------===//
#include "runtime/program/checkpoint/CheckpointHistory.h"

#include "runtime/data/FileChecks.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <system_error>

namespace fs = std::filesystem;

namespace tgc::runtime {

std::string historyPath(const std::string &checkpoint, int64_t step) {
  return checkpoint + ".step" + std::to_string(step);
}

std::vector<int64_t> historySteps(const std::string &checkpoint) {
  fs::path path(checkpoint);
  fs::path directory = path.has_parent_path() ? path.parent_path() : ".";
  std::string prefix = path.filename().string() + ".step";
  std::vector<int64_t> steps;
  std::error_code ec;
  for (const fs::directory_entry &entry :
       fs::directory_iterator(directory, ec)) {
    std::string name = entry.path().filename().string();
    // Exactly the names historyPath gives, of regular files (no links):
    // keepInHistory removes what this returns.
    if (name.size() <= prefix.size() ||
        name.compare(0, prefix.size(), prefix) ||
        !isCanonicalNumber(std::string_view(name).substr(prefix.size())) ||
        !fs::is_regular_file(entry.symlink_status(ec)))
      continue;
    int64_t step = 0;
    std::from_chars(name.data() + prefix.size(), name.data() + name.size(),
                    step);
    steps.push_back(step);
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

std::string keepInHistory(const std::string &checkpoint, int64_t step,
                          int64_t keep) {
  std::string link = historyPath(checkpoint, step);
  std::error_code ec;
  // A resumed run may save the same step again: its own file, a regular
  // one (historySteps' kind), is replaced; anything else there (a link, a
  // directory) is not the history's, and stays.
  fs::file_status there = fs::symlink_status(link, ec);
  if (fs::exists(there) && !fs::is_regular_file(there))
    return "cannot keep step " + std::to_string(step) + " in the history: " +
           link + " exists and is not a checkpoint file (" +
           (fs::is_symlink(there) ? "a symbolic link" : "not a regular file") +
           "): remove it, or give another --checkpoint";
  fs::remove(link, ec);
  // The file itself where the checkpoint is a symbolic link: a hard link of
  // the link would follow it to each later save.
  fs::path file = fs::canonical(checkpoint, ec);
  if (!ec)
    fs::create_hard_link(file, link, ec);
  if (ec)
    return "cannot link " + checkpoint + " as " + link + ": " + ec.message();
  std::vector<int64_t> steps = historySteps(checkpoint);
  auto remove = [&](int64_t old) -> std::string {
    if (!fs::remove(historyPath(checkpoint, old), ec) && ec)
      return "cannot remove " + historyPath(checkpoint, old) + ": " +
             ec.message();
    return {};
  };
  // Files of later steps are the history of the run this one replaces
  // (--overwrite): kept, they would count as the newest and this run's own
  // would be removed.
  while (!steps.empty() && steps.back() > step) {
    if (std::string why = remove(steps.back()); !why.empty())
      return why;
    steps.pop_back();
  }
  for (size_t i = 0; i + keep < steps.size(); ++i)
    if (std::string why = remove(steps[i]); !why.empty())
      return why;
  return {};
}

} // namespace tgc::runtime
