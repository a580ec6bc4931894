//===- Metrics.h - the --metrics file: one JSON record per line -*- C++ -*-===//
//
// A training run's curves for tools: one JSON object per log line
// ("kind": "train") and per validation ("kind": "valid"), each with its step,
// after one ("kind": "run") with the step's run-time hyperparameters in force.
// `tgc-data curves` (or any JSON reader) turns the file into pictures. Every
// write is checked: a full disk stops the run instead of losing records.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_PROGRAM_METRICS_H
#define TGC_RUNTIME_PROGRAM_METRICS_H

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
  /// `{"kind": ..., "step": ..., ...}`; non-finite numbers become null
  /// (JSON has no NaN).
  std::string json() const;

private:
  std::vector<std::pair<std::string, std::string>> fields;
};

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
