//===- ProgressLog.cpp - the training log line ----------------------------===//
#include "runtime/program/train/ProgressLog.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <unistd.h>

namespace tgc::runtime {

namespace {

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t)
      .count();
}

} // namespace

void ProgressLog::Totals::add(float loss, float gradNorm, int32_t count,
                              int64_t pad, int64_t all) {
  weightedLoss += static_cast<double>(loss) * count;
  gradNorms += gradNorm;
  tokens += count;
  padded += pad;
  slots += all;
  ++steps;
}

ProgressLog::ProgressLog(int64_t firstStep, int64_t lastStep, int64_t every)
    : firstStep(firstStep), steps(lastStep), every(every),
      terminal(isatty(STDOUT_FILENO) != 0),
      start(std::chrono::steady_clock::now()), intervalStart(start) {}

ProgressLog::~ProgressLog() {
  if (lossLog)
    std::fclose(lossLog);
}

bool ProgressLog::openLossLog(const std::string &path) {
  lossLogPath = path;
  lossLog = std::fopen(path.c_str(), "w");
  if (!lossLog)
    std::fprintf(stderr, "error: cannot write %s: %s\n", path.c_str(),
                 std::strerror(errno));
  return lossLog != nullptr;
}

bool ProgressLog::record(int64_t step, float loss, float gradNorm, float lr,
                         int32_t count, int64_t batchPadded,
                         int64_t batchSlots) {
  run.add(loss, gradNorm, count, batchPadded, batchSlots);
  interval.add(loss, gradNorm, count, batchPadded, batchSlots);
  if (lossLog && (std::fprintf(lossLog, "%lld %.9g %d\n",
                               static_cast<long long>(step), loss, count) < 0 ||
                  std::fflush(lossLog) != 0)) {
    std::fprintf(stderr, "error: cannot write %s: %s\n", lossLogPath.c_str(),
                 std::strerror(errno));
    return false;
  }
  if (step % every != 0 && step != steps && step != firstStep)
    return true;
  double elapsed = secondsSince(start);
  double seconds = secondsSince(intervalStart);
  double eta = elapsed / static_cast<double>(run.steps) *
               static_cast<double>(steps - step);
  // A step without target tokens has loss 0: the interval's mean is then
  // that of its steps.
  double meanLoss = interval.tokens > 0
                        ? interval.weightedLoss / interval.tokens
                        : static_cast<double>(loss);
  double meanGradNorm =
      interval.gradNorms /
      static_cast<double>(std::max<int64_t>(interval.steps, 1));
  double tokensPerSecond = interval.tokens / std::max(seconds, 1e-9);
  double padding = 100.0 * static_cast<double>(interval.padded) /
                   static_cast<double>(std::max<int64_t>(interval.slots, 1));
  std::printf("%sstep %6lld/%lld  loss %.4f  ppl %8.3f  gnorm %7.3f  lr %.3e"
              "  tok/s %7.0f  pad %4.1f%%  elapsed %6.1fs  eta %6.1fs%s",
              terminal ? "\r" : "", static_cast<long long>(step),
              static_cast<long long>(steps), meanLoss, std::exp(meanLoss),
              meanGradNorm, lr, tokensPerSecond, padding, elapsed, eta,
              terminal ? "" : "\n");
  std::fflush(stdout);
  bool written = true;
  if (metrics)
    written = metrics->write(MetricsRecord("train", step)
                                 .add("loss", meanLoss)
                                 .add("ppl", std::exp(meanLoss))
                                 .add("grad_norm", meanGradNorm)
                                 .add("lr", static_cast<double>(lr))
                                 .add("tokens_per_s", tokensPerSecond)
                                 .add("pad", padding / 100.0)
                                 .add("steps", interval.steps)
                                 .add("elapsed_s", elapsed));
  interval = Totals();
  intervalStart = std::chrono::steady_clock::now();
  return written;
}

void ProgressLog::finish() {
  double elapsed = secondsSince(start);
  if (terminal)
    std::printf("\n");
  std::printf("trained %lld steps in %.1fs: %.1f ms/step, %.0f target tok/s\n",
              static_cast<long long>(run.steps), elapsed,
              1000.0 * elapsed /
                  static_cast<double>(std::max<int64_t>(run.steps, 1)),
              run.tokens / std::max(elapsed, 1e-9));
}

} // namespace tgc::runtime
