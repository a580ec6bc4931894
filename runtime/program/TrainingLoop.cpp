//===- TrainingLoop.cpp - the one training loop ---------------------------===//
#include "runtime/program/TrainingLoop.h"

#include "runtime/kernels/KernelTypes.h"
#include "runtime/program/Interrupt.h"
#include "runtime/program/ProgressLog.h"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <optional>
#include <vector>

namespace tgc::runtime {

namespace {

/// One update: `updateFreq` batches, their losses and tokens summed.
struct Update {
  float loss = 0, gradNorm = 0;
  int32_t tokens = 0;
  int64_t padded = 0, slots = 0;
};

/// The phase of batch k of n in one update (KernelTypes.h: UpdatePhase).
int32_t phaseOf(int64_t k, int64_t n) {
  if (n == 1)
    return kUpdate;
  return k == 0      ? kAccumulateFirst
         : k + 1 < n ? kAccumulate
                     : kAccumulateUpdate;
}

/// Prints why training stops at a non-finite value.
void reportNonFinite(const char *what, float value, int64_t step) {
  std::fprintf(stderr,
               "error: the %s is %s at step %lld: training stops, and nothing "
               "is saved from this step on\n",
               what, std::isnan(value) ? "NaN" : "infinite",
               static_cast<long long>(step));
}

} // namespace

int runTrainingLoop(const TrainingLoop &loop) {
  ProgressLog log(loop.firstStep, loop.lastStep, loop.logEvery);
  if (!loop.lossLog.empty() && !log.openLossLog(loop.lossLog))
    return 1;
  log.setMetrics(loop.metrics);
  installInterruptHandlers();
  const int64_t n = std::max<int64_t>(loop.updateFreq, 1);
  std::vector<Batch> batches(static_cast<size_t>(n));
  for (int64_t step = loop.firstStep; step <= loop.lastStep; ++step) {
    // The update's batches first: each one's gradient weighs its share of
    // the update's target tokens.
    int64_t tokens = 0;
    for (int64_t k = 0; k < n; ++k) {
      batches[k] =
          loop.batch(loop.seed, static_cast<uint64_t>((step - 1) * n + k));
      tokens += batches[k].targetTokens();
    }
    Update update;
    for (int64_t k = 0; k < n; ++k) {
      const Batch &batch = batches[k];
      StepInput input{loop.seed, step,
                      static_cast<float>(loop.schedule.learningRate(step)),
                      (step - 1) * n + k + 1};
      input.gradWeight =
          n == 1 ? 1.0f
                 : static_cast<float>(
                       static_cast<double>(batch.targetTokens()) /
                       static_cast<double>(std::max<int64_t>(tokens, 1)));
      input.updatePhase = phaseOf(k, n);
      input.clipNorm = loop.clipNorm;
      StepOutcome outcome;
      if (!loop.backend.runStep(batch, input, outcome))
        return 1;
      update.loss += n == 1 ? outcome.loss : input.gradWeight * outcome.loss;
      update.tokens += outcome.tokens;
      update.gradNorm = outcome.gradNorm;
      update.padded +=
          batch.slots() - batch.sourceTokens() - batch.targetTokens();
      update.slots += batch.slots();
      bool lossFinite = std::isfinite(outcome.loss);
      if (!lossFinite || !std::isfinite(outcome.gradNorm)) {
        log.finish();
        if (lossFinite)
          reportNonFinite("gradient norm", outcome.gradNorm, step);
        else
          reportNonFinite("loss", outcome.loss, step);
        if (loop.onNonFinite)
          loop.onNonFinite(batch, input);
        return 1;
      }
    }
    float lr = static_cast<float>(loop.schedule.learningRate(step));
    if (!log.record(step, update.loss, update.gradNorm, lr, update.tokens,
                    update.padded, update.slots))
      return 1;
    // Looked at after the step and again after its validation or save,
    // which a signal may have cut short.
    auto interrupted = [&]() -> std::optional<int> {
      int signal = pendingInterrupt();
      if (!signal)
        return std::nullopt;
      log.finish();
      std::string resume = loop.onInterrupt ? loop.onInterrupt(step) : "";
      std::fprintf(stderr, "interrupted by %s after step %lld%s\n",
                   signal == SIGINT ? "SIGINT" : "SIGTERM",
                   static_cast<long long>(step), resume.c_str());
      return 128 + signal;
    };
    if (std::optional<int> code = interrupted())
      return *code;
    AfterStep next = loop.afterStep ? loop.afterStep(step) : AfterStep::Continue;
    if (next == AfterStep::Fail)
      return 1;
    if (std::optional<int> code = interrupted())
      return *code;
    if (next == AfterStep::Stop)
      break;
  }
  log.finish();
  return 0;
}

} // namespace tgc::runtime
