//===- ProgressLog.cpp - the training log ---------------------------------===//
#include "runtime/program/train/ProgressLog.h"

#include "runtime/program/train/StatusLine.h"

#include "runtime/data/AtomicFile.h"
#include "runtime/data/FileChecks.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tgc::runtime {

namespace {

double secondsBetween(ProgressLog::Clock::time_point from,
                      ProgressLog::Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

/// How often the status line is redrawn: often enough to look alive, rarely
/// enough to cost nothing.
constexpr std::chrono::seconds kStatusPeriod{1};

} // namespace

void ProgressLog::Totals::add(const LoggedUpdate &update) {
  weightedLoss += static_cast<double>(update.loss) * update.tokens;
  if (update.crossEntropy)
    weightedCrossEntropy =
        weightedCrossEntropy.value_or(0.0) +
        static_cast<double>(*update.crossEntropy) * update.tokens;
  gradNorms += update.gradNorm;
  tokens += update.tokens;
  padded += update.padded;
  slots += update.slots;
  ++steps;
}

ProgressLog::ProgressLog(int64_t firstStep, int64_t lastStep, int64_t every)
    : firstStep(firstStep), steps(lastStep), every(every),
      terminal(isatty(STDOUT_FILENO) != 0), start(Clock::now()),
      intervalStart(start), lastDrawn(start) {}

ProgressLog::~ProgressLog() {
  if (lossLog)
    std::fclose(lossLog);
}

/// A resumed run continues its --loss-log: the lines of the steps before
/// `firstStep` stay, and those from it on (a run that resumes an earlier
/// checkpoint trains them again) go. False after a message.
static bool keepLinesBefore(const std::string &path, int64_t firstStep) {
  // A pipe, FIFO or terminal has no lines to keep, and reading one would
  // wait for its writer (for ever, where that is this run).
  struct stat status;
  if (::stat(path.c_str(), &status) == 0 && !S_ISREG(status.st_mode))
    return true;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) // nothing logged yet: nothing to keep
    return errno == ENOENT ||
           (std::fprintf(stderr, "error: cannot read %s: %s\n", path.c_str(),
                         std::strerror(errno)),
            false);
  constexpr size_t kLimit = size_t{1} << 30; // 30 M steps of lines
  std::string text;
  std::string why = readUpTo(fd, kLimit, text);
  ::close(fd);
  if (why.empty() && text.size() > kLimit)
    why = "larger than 1 GiB";
  if (!why.empty()) {
    std::fprintf(stderr, "error: cannot continue --loss-log %s: %s\n",
                 path.c_str(), why.c_str());
    return false;
  }
  size_t kept = 0;
  while (kept < text.size()) {
    size_t end = text.find('\n', kept);
    if (end == std::string::npos ||
        std::strtoll(text.c_str() + kept, nullptr, 10) >= firstStep)
      break;
    kept = end + 1;
  }
  if (kept == text.size())
    return true;
  AtomicFile file(path);
  file.write(std::string_view(text).substr(0, kept));
  if (std::string error = file.commit(); !error.empty()) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return false;
  }
  return true;
}

bool ProgressLog::openLossLog(const std::string &path) {
  lossLogPath = path;
  if (firstStep > 1 && !keepLinesBefore(path, firstStep))
    return false;
  // As fopen's "a" or "w", without waiting for ever on a FIFO that no
  // process reads.
  int fd = openWriter(path.c_str(), O_CREAT | (firstStep > 1 ? O_APPEND : O_TRUNC));
  lossLog = fd >= 0 ? ::fdopen(fd, firstStep > 1 ? "a" : "w") : nullptr;
  if (!lossLog) {
    int error = errno;
    if (fd >= 0)
      ::close(fd);
    std::fprintf(stderr, "error: cannot write %s: %s\n", path.c_str(),
                 openWriterError(error).c_str());
  }
  return lossLog != nullptr;
}

double ProgressLog::eta(const LoggedUpdate &update, double elapsed) const {
  double left = static_cast<double>(steps - update.step);
  // Epochs hold about the same number of steps: the run's so far (from
  // step 0, which a resumed run's epochs count from too).
  if (maxEpochs > 0 && update.epochs > 0)
    left = std::min(left,
                    std::ceil(static_cast<double>(update.step) *
                              static_cast<double>(maxEpochs) / update.epochs) -
                        static_cast<double>(update.step));
  double seconds = elapsed /
                   static_cast<double>(std::max<int64_t>(run.steps, 1)) *
                   std::max(left, 0.0);
  if (maxSeconds > 0)
    seconds = std::min(seconds, std::max(maxSeconds - elapsed, 0.0));
  return seconds;
}

std::string ProgressLog::position(const LoggedUpdate &update) const {
  char text[64];
  int length = std::snprintf(text, sizeof text, "step %6lld/%lld",
                             static_cast<long long>(update.step),
                             static_cast<long long>(steps));
  // The epoch the update trained in: the first ends at 1.0 passes.
  if (update.epochs >= 0)
    std::snprintf(
        text + length, sizeof text - length, "  epoch %lld",
        static_cast<long long>(std::max(1.0, std::ceil(update.epochs))));
  return text;
}

bool ProgressLog::record(const LoggedUpdate &update, Clock::time_point now) {
  run.add(update);
  interval.add(update);
  if (lossLog && (std::fprintf(lossLog, "%lld %.9g %lld\n",
                               static_cast<long long>(update.step), update.loss,
                               static_cast<long long>(update.tokens)) < 0 ||
                  std::fflush(lossLog) != 0)) {
    std::fprintf(stderr, "error: cannot write %s: %s\n", lossLogPath.c_str(),
                 std::strerror(errno));
    return false;
  }
  if (update.step % every == 0 || update.last || update.step == firstStep)
    return writeLine(update, now);
  if (terminal && now - lastDrawn >= kStatusPeriod)
    drawStatus(update, now);
  return true;
}

bool ProgressLog::writeLine(const LoggedUpdate &update, Clock::time_point now) {
  double elapsed = secondsBetween(start, now);
  double seconds = secondsBetween(intervalStart, now);
  // A step without target tokens has loss 0: the interval's mean is then
  // that of its steps.
  auto mean = [&](double weighted, float last) {
    return interval.tokens > 0 ? weighted / interval.tokens
                               : static_cast<double>(last);
  };
  double meanLoss = mean(interval.weightedLoss, update.loss);
  // The perplexity is the cross-entropy's, without the other terms.
  std::optional<double> meanCrossEntropy;
  if (interval.weightedCrossEntropy)
    meanCrossEntropy = mean(*interval.weightedCrossEntropy,
                            update.crossEntropy.value_or(0.0f));
  double perplexity = std::exp(meanCrossEntropy.value_or(meanLoss));
  char parts[96] = "";
  if (meanCrossEntropy)
    std::snprintf(parts, sizeof parts,
                  " (cross-entropy %.4f + other terms %.4f)",
                  *meanCrossEntropy, meanLoss - *meanCrossEntropy);
  double meanGradNorm =
      interval.gradNorms /
      static_cast<double>(std::max<int64_t>(interval.steps, 1));
  double tokensPerSecond = interval.tokens / std::max(seconds, 1e-9);
  double padding = 100.0 * static_cast<double>(interval.padded) /
                   static_cast<double>(std::max<int64_t>(interval.slots, 1));
  clearStatusLine();
  std::printf("%s  loss %.4f%s  ppl %8.3f  gnorm %7.3f  lr %.3e  tok/s %7.0f"
              "  pad %4.1f%%  elapsed %6.1fs  eta %6.1fs\n",
              position(update).c_str(), meanLoss, parts, perplexity,
              meanGradNorm, update.lr, tokensPerSecond, padding, elapsed,
              eta(update, elapsed));
  std::fflush(stdout);
  bool written = true;
  if (metrics) {
    MetricsRecord record("train", update.step);
    record.add("loss", meanLoss);
    if (meanCrossEntropy)
      record.add("cross_entropy", *meanCrossEntropy)
          .add("other_terms", meanLoss - *meanCrossEntropy);
    record.add("ppl", perplexity)
        .add("grad_norm", meanGradNorm)
        .add("lr", static_cast<double>(update.lr))
        .add("tokens_per_s", tokensPerSecond)
        .add("pad", padding / 100.0)
        .add("steps", interval.steps)
        .add("elapsed_s", elapsed);
    if (update.epochs >= 0)
      record.add("epochs", update.epochs);
    written = metrics->write(record);
  }
  interval = Totals();
  intervalStart = lastDrawn = now;
  return written;
}

void ProgressLog::drawStatus(const LoggedUpdate &update,
                             Clock::time_point now) {
  double seconds = std::max(secondsBetween(intervalStart, now), 1e-9);
  char numbers[128];
  std::snprintf(numbers, sizeof numbers,
                "  %.1f steps/s  tok/s %.0f  eta %.1fs",
                static_cast<double>(interval.steps) / seconds,
                static_cast<double>(interval.tokens) / seconds,
                eta(update, secondsBetween(start, now)));
  drawStatusLine(position(update) + numbers);
  lastDrawn = now;
}

void ProgressLog::finish() {
  double elapsed = secondsBetween(start, Clock::now());
  clearStatusLine();
  std::printf("trained %lld steps in %.1fs: %.1f ms/step, %.0f target tok/s\n",
              static_cast<long long>(run.steps), elapsed,
              1000.0 * elapsed /
                  static_cast<double>(std::max<int64_t>(run.steps, 1)),
              run.tokens / std::max(elapsed, 1e-9));
}

} // namespace tgc::runtime
