//===- ProgressLog.h - the training log line --------------------*- C++ -*-===//
//
// Every K steps (and the first and last): step, loss, perplexity, learning
// rate, target tokens/s, padding, elapsed and ETA on one line. On a terminal the line
// is rewritten in place; otherwise one plain line per report. Perplexity is
// exp(label-smoothed loss), an upper bound of the model's.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_TRAIN_PROGRESSLOG_H
#define TGC_RUNTIME_TRAIN_PROGRESSLOG_H

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

  /// `padded` of the batch's `slots` source and target positions are
  /// padding: the log shows the fraction since the start.
  void record(int64_t step, float loss, float lr, int32_t tokens,
              int64_t padded, int64_t slots);
  /// Ends the progress line and prints the totals of the steps recorded
  /// (fewer than planned when the run was interrupted).
  void finish();

private:
  int64_t firstStep, steps, every, tokens = 0, recorded = 0;
  int64_t padded = 0, slots = 0;
  bool terminal;
  std::FILE *lossLog = nullptr;
  std::chrono::steady_clock::time_point start;
};

} // namespace tgc::runtime

#endif // TGC_RUNTIME_TRAIN_PROGRESSLOG_H
