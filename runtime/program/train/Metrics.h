//===- Metrics.h - the --metrics file: one JSON record per line -*- C++ -*-===//
//
// A training run's curves for tools: one JSON object per log line
// ("kind": "train") and per validation ("kind": "valid"), each with its step,
// after a "run" record at each start of a run (or resumption) that gives
// the learning-rate schedule, so that a reader can draw every step's rate,
// and the step's run-time hyperparameters in force ("label_smoothing" among
// them: training's loss has it, validation's not).
// `tgc-data curves` (or any JSON reader) turns the file into pictures. Every
// write is checked: a full disk stops the run instead of losing records.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_PROGRAM_METRICS_H
#define TGC_RUNTIME_PROGRAM_METRICS_H

#include "common/Schedule.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace tgc::runtime {

/// One record: fields in the order they were added.
class MetricsRecord {
public:
  MetricsRecord(const char *kind, int64_t step);
  MetricsRecord &add(const char *key, double value);
  MetricsRecord &add(const char *key, int64_t value);
  /// A JSON string; `text` is a name or describe()'s words (no escapes).
  MetricsRecord &addText(const char *key, const std::string &text);
  /// `{"kind": ..., "step": ..., ...}`; non-finite numbers become null
  /// (JSON has no NaN).
  std::string json() const;

private:
  std::vector<std::pair<std::string, std::string>> fields;
};

/// The "run" record a run starts with, after `stepsDone` steps: the fields
/// of `schedule` that fix every step's rate (WarmupSchedule::learningRate
/// with `peak` the peak rate), and its describe() for a reader.
MetricsRecord scheduleRecord(const WarmupSchedule &schedule, int64_t stepsDone);

class MetricsFile {
public:
  MetricsFile() = default;
  MetricsFile(const MetricsFile &) = delete;
  MetricsFile &operator=(const MetricsFile &) = delete;
  ~MetricsFile();

  /// Appends to `path` (a resumed run continues its file); false after a
  /// message.
  bool open(const std::string &path);
  bool isOpen() const { return file != nullptr; }
  /// Writes and flushes one line; false after a message when it failed.
  bool write(const MetricsRecord &record);

private:
  std::FILE *file = nullptr;
  std::string path;
};

} // namespace tgc::runtime

#endif // TGC_RUNTIME_PROGRAM_METRICS_H
