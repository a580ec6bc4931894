//===- Metrics.cpp - the --metrics file -----------------------------------===//
#include "runtime/program/train/Metrics.h"

#include "runtime/data/FileChecks.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace tgc::runtime {

MetricsRecord::MetricsRecord(const char *kind, int64_t step) {
  fields.emplace_back("kind", std::string("\"") + kind + "\"");
  add("step", step);
}

MetricsRecord &MetricsRecord::add(const char *key, double value) {
  char text[32] = "null";
  if (std::isfinite(value))
    std::snprintf(text, sizeof text, "%.9g", value);
  fields.emplace_back(key, text);
  return *this;
}

MetricsRecord &MetricsRecord::add(const char *key, int64_t value) {
  fields.emplace_back(key, std::to_string(value));
  return *this;
}

MetricsRecord &MetricsRecord::addText(const char *key,
                                      const std::string &text) {
  fields.emplace_back(key, "\"" + text + "\"");
  return *this;
}

MetricsRecord scheduleRecord(const WarmupSchedule &schedule,
                             int64_t stepsDone) {
  MetricsRecord record("run", stepsDone);
  record.addText("lr_scheduler", lrSchedulerName(schedule.kind))
      .add("lr_peak", schedule.peakRate())
      .add("lr_warmup", schedule.warmupSteps)
      .add("lr_min", schedule.minimum)
      .add("lr_last_step", schedule.lastStep)
      .addText("lr_schedule", schedule.describe());
  return record;
}

std::string MetricsRecord::json() const {
  std::string out = "{";
  for (const auto &[key, value] : fields)
    out += (out.size() > 1 ? ", \"" : "\"") + key + "\": " + value;
  return out + "}";
}

MetricsFile::~MetricsFile() {
  if (file)
    std::fclose(file);
}

bool MetricsFile::open(const std::string &where) {
  path = where;
  // openWriter: a FIFO that no process reads is refused at once (fopen
  // waited for a reader, past Ctrl-C).
  int fd = openWriter(path.c_str(), O_CREAT | O_APPEND);
  if (fd >= 0) {
    file = ::fdopen(fd, "a");
    if (!file)
      ::close(fd);
  }
  if (!file)
    std::fprintf(stderr, "error: cannot write --metrics %s: %s\n",
                 path.c_str(),
                 fd < 0 ? openWriterError(errno).c_str() : std::strerror(errno));
  return file != nullptr;
}

bool MetricsFile::write(const MetricsRecord &record) {
  std::string line = record.json() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file) == line.size() &&
      std::fflush(file) == 0)
    return true;
  std::fprintf(stderr, "error: cannot write --metrics %s: %s\n", path.c_str(),
               std::strerror(errno));
  return false;
}

} // namespace tgc::runtime
