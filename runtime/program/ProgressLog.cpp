//===- ProgressLog.cpp - the training log line ----------------------------===//
#include "runtime/program/ProgressLog.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <unistd.h>

namespace tgc::runtime {

ProgressLog::ProgressLog(int64_t firstStep, int64_t lastStep, int64_t every)
    : firstStep(firstStep), steps(lastStep), every(every), terminal(isatty(STDOUT_FILENO) != 0),
      start(std::chrono::steady_clock::now()) {}

ProgressLog::~ProgressLog() {
  if (lossLog)
    std::fclose(lossLog);
}

bool ProgressLog::openLossLog(const std::string &path) {
  lossLog = std::fopen(path.c_str(), "w");
  if (!lossLog)
    std::fprintf(stderr, "error: cannot write %s: %s\n", path.c_str(),
                 std::strerror(errno));
  return lossLog != nullptr;
}

void ProgressLog::record(int64_t step, float loss, float lr, int32_t count,
                         int64_t batchPadded, int64_t batchSlots) {
  tokens += count;
  padded += batchPadded;
  slots += batchSlots;
  ++recorded;
  if (lossLog)
    std::fprintf(lossLog, "%lld %.9g %d\n", static_cast<long long>(step),
                 loss, count);
  if (step % every != 0 && step != steps && step != firstStep)
    return;
  double elapsed = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  double eta = elapsed / static_cast<double>(recorded) *
               static_cast<double>(steps - step);
  std::printf("%sstep %6lld/%lld  loss %.4f  ppl %8.3f  lr %.3e  tok/s %7.0f"
              "  pad %4.1f%%  elapsed %6.1fs  eta %6.1fs%s",
              terminal ? "\r" : "", static_cast<long long>(step),
              static_cast<long long>(steps), loss, std::exp(loss), lr,
              tokens / std::max(elapsed, 1e-9),
              100.0 * static_cast<double>(padded) /
                  static_cast<double>(std::max<int64_t>(slots, 1)),
              elapsed, eta, terminal ? "" : "\n");
  std::fflush(stdout);
}

void ProgressLog::finish() {
  double elapsed = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  if (terminal)
    std::printf("\n");
  std::printf("trained %lld steps in %.1fs: %.1f ms/step, %.0f target tok/s\n",
              static_cast<long long>(recorded), elapsed,
              1000.0 * elapsed / static_cast<double>(std::max<int64_t>(recorded, 1)),
              tokens / std::max(elapsed, 1e-9));
}

} // namespace tgc::runtime
