//===- ProgressLog.h - the training log line --------------------*- C++ -*-===//
//
// Every K steps (and the first and last) one line of the interval since the
// previous line: its mean loss per target token and that mean's perplexity,
// the mean global gradient norm (before clipping), the learning rate, its
// target tokens/s and padding, then elapsed time and ETA. Means over the
// interval (as fairseq and Marian log), because with length buckets one step's
// loss jumps from bucket to bucket. On a terminal the line is rewritten in
// place; otherwise one plain line per report. Perplexity is exp(label-smoothed
// loss), an upper bound of the model's.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_TRAIN_PROGRESSLOG_H
#define TGC_RUNTIME_TRAIN_PROGRESSLOG_H

#include "runtime/program/train/Metrics.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace tgc::runtime {

class ProgressLog {
public:
  /// Reports steps firstStep..lastStep (a resumed run starts past 1).
  ProgressLog(int64_t firstStep, int64_t lastStep, int64_t every);
  ~ProgressLog();

  /// Also writes "step loss tokens" (loss with 9 digits) per step to `path`.
  bool openLossLog(const std::string &path);
  /// Also writes each log line as a "train" record to `metrics`.
  void setMetrics(MetricsFile *file) { metrics = file; }
  /// One line per log, even on a terminal (mpirun gives its processes a
  /// terminal that its own output may not be).
  void setPlainLines() { terminal = false; }

  /// `padded` of the batch's `slots` source and target positions are
  /// padding. False after a message when the loss log or the metrics file
  /// could not be written.
  bool record(int64_t step, float loss, float gradNorm, float lr,
              int32_t tokens, int64_t padded, int64_t slots);
  /// Ends the progress line and prints the totals of the steps recorded
  /// (fewer than planned when the run was interrupted).
  void finish();

private:
  /// Sums over the steps since the last log line (or the whole run).
  struct Totals {
    double weightedLoss = 0; ///< sum of loss * tokens
    double gradNorms = 0;    ///< sum of the steps' gradient norms
    int64_t tokens = 0, padded = 0, slots = 0, steps = 0;
    void add(float loss, float gradNorm, int32_t count, int64_t pad,
             int64_t all);
  };

  int64_t firstStep, steps, every;
  Totals run, interval;
  bool terminal;
  std::FILE *lossLog = nullptr;
  std::string lossLogPath;
  MetricsFile *metrics = nullptr;
  std::chrono::steady_clock::time_point start, intervalStart;
};

} // namespace tgc::runtime

#endif // TGC_RUNTIME_TRAIN_PROGRESSLOG_H
