//===- MetricsRun.h - one --metrics file read for drawing -------*- C++ -*-===//
//
// A training program's --metrics file (runtime/program/train/Metrics.h) as
// the curves `tgc-data curves` draws: losses, BLEU and learning rate by
// step, and the learning-rate schedule of each "run" record, from which
// every step's rate is computed (common/Schedule.h) instead of the sampled
// "lr" of the log lines. Files without "run" records keep the samples.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TOOLS_TGCDATA_METRICSRUN_H
#define TGC_TOOLS_TGCDATA_METRICSRUN_H

#include "common/Schedule.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tgc::data {

/// A curve by step; a later record of the same step replaces an earlier one.
using StepCurve = std::map<int64_t, std::optional<double>>;

/// A "run" record's schedule, for its steps after `afterStep` up to
/// `lastStep`, the last step of a record before the next "run" record.
struct ScheduleSpan {
  WarmupSchedule schedule;
  int64_t afterStep = 0, lastStep = 0;
};

struct MetricsRun {
  std::string path;
  StepCurve trainLoss, learningRate, validLoss, bleu;
  int64_t trainRecords = 0, validRecords = 0;
  /// Whether a train record split its loss (trainLoss is then of the
  /// cross-entropy).
  bool trainCrossEntropy = false;
  std::vector<ScheduleSpan> schedules;
  /// A "run" record's "label_smoothing", where one gives it.
  std::optional<double> labelSmoothing;
};

/// Reads `path` into `run`; an error "path:line[:column]: what" otherwise,
/// also for a file without "train" or "valid" records.
std::string readMetricsRun(const std::string &path, MetricsRun &run);

/// The largest step a record may name: a training program counts its steps
/// in 32 bits (larger ones, in a forged file, overflowed the schedule's
/// sampling into an endless loop).
constexpr int64_t kMaxMetricsStep = INT32_MAX;

/// The learning rate of `run`: of its schedules at every step they cover
/// (past kMaxScheduleSteps steps of a span, that many evenly spaced ones
/// with its warmup's end and its last), else its records' "lr" samples.
constexpr int64_t kMaxScheduleSteps = 2000;
StepCurve learningRateCurve(const MetricsRun &run);

} // namespace tgc::data

#endif // TGC_TOOLS_TGCDATA_METRICSRUN_H
