//===- ProgressLog.h - the training log -------------------------*- C++ -*-===//
//
// Every K steps (and the first and last) one line of the interval since the
// previous line: the epoch (data with epochs: corpora), its mean loss per
// target token and that mean's perplexity, the mean global gradient norm
// (before clipping), the learning rate, its target tokens/s and padding,
// then elapsed time and ETA. Means over the interval (as fairseq and Marian
// log), because with length buckets one step's loss jumps from bucket to
// bucket. Perplexity is exp(label-smoothed cross-entropy), not the model's
// (validation's): smoothing can move it either way. Where the model adds other terms to the cross-entropy (an L2
// penalty, an auxiliary loss), the line splits the loss into the two parts
// and the perplexity is that of the cross-entropy alone.
//
// The lines stay. On a terminal a status line below them (StatusLine.h:
// step, epoch, rate, ETA) is redrawn about once a second between them, and
// the next log line replaces it; elsewhere only the plain lines are written.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_TRAIN_PROGRESSLOG_H
#define TGC_RUNTIME_TRAIN_PROGRESSLOG_H

#include "runtime/program/train/Metrics.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace tgc::runtime {

/// One update, as the log sees it.
struct LoggedUpdate {
  int64_t step = 0;
  float loss = 0, gradNorm = 0, lr = 0;
  /// The loss's cross-entropy part where it has other terms.
  std::optional<float> crossEntropy;
  int64_t tokens = 0;
  /// `padded` of the update's `slots` source and target positions are
  /// padding.
  int64_t padded = 0, slots = 0;
  /// Passes over the training data once the update is done (2.5: half of
  /// the third); negative when the data has no epochs (a task).
  double epochs = -1;
  /// The run's last update (its steps, epochs or time are done): logged.
  bool last = false;
};

class ProgressLog {
public:
  using Clock = std::chrono::steady_clock;

  /// Reports steps firstStep..lastStep (a resumed run starts past 1).
  ProgressLog(int64_t firstStep, int64_t lastStep, int64_t every);
  ~ProgressLog();

  /// Also writes "step loss tokens" (loss with 9 digits) per step to `path`
  /// (the whole loss, other terms included).
  bool openLossLog(const std::string &path);
  /// Also writes each log line as a "train" record to `metrics`.
  void setMetrics(MetricsFile *file) { metrics = file; }
  /// Plain lines, no status line, even on a terminal (mpirun gives its
  /// processes a terminal that its own output may not be).
  void setPlainLines() { terminal = false; }
  /// The limits that may end the run before lastStep, for the ETA: after
  /// `epochs` passes over the data, or `seconds` after startTime() (0:
  /// none).
  void setLimits(int64_t epochs, double seconds) {
    maxEpochs = epochs;
    maxSeconds = seconds;
  }
  /// When the log started: what `elapsed` (and --max-time) counts from.
  Clock::time_point startTime() const { return start; }

  /// Records an update that ended at `now`. False after a message when the
  /// loss log or the metrics file could not be written.
  bool record(const LoggedUpdate &update, Clock::time_point now);
  /// Clears the status line and prints the totals of the steps recorded
  /// (fewer than planned when the run was interrupted or stopped early).
  void finish();

private:
  /// Sums over the steps since the last log line (or the whole run).
  struct Totals {
    double weightedLoss = 0; ///< sum of loss * tokens
    /// Sum of crossEntropy * tokens; none while no update had the part.
    std::optional<double> weightedCrossEntropy;
    double gradNorms = 0;    ///< sum of the steps' gradient norms
    int64_t tokens = 0, padded = 0, slots = 0, steps = 0;
    void add(const LoggedUpdate &update);
  };

  /// Seconds until the end of the run (its steps, epochs or time), at the
  /// run's rate so far.
  double eta(const LoggedUpdate &update, double elapsed) const;
  /// "step   120/1000  epoch 2": where the run is.
  std::string position(const LoggedUpdate &update) const;
  /// The log line's numbers, and its metrics record; false after a message.
  bool writeLine(const LoggedUpdate &update, Clock::time_point now);
  /// The status line between log lines: position, rate and ETA.
  void drawStatus(const LoggedUpdate &update, Clock::time_point now);

  int64_t firstStep, steps, every;
  int64_t maxEpochs = 0;
  double maxSeconds = 0;
  Totals run, interval;
  bool terminal;
  std::FILE *lossLog = nullptr;
  std::string lossLogPath;
  MetricsFile *metrics = nullptr;
  /// The run's start, the interval's, and the last line or status drawn.
  Clock::time_point start, intervalStart, lastDrawn;
};

} // namespace tgc::runtime

#endif // TGC_RUNTIME_TRAIN_PROGRESSLOG_H
