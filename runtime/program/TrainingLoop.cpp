//===- TrainingLoop.cpp - the one training loop ---------------------------===//
#include "runtime/program/TrainingLoop.h"

#include "runtime/program/Interrupt.h"
#include "runtime/program/ProgressLog.h"

#include <cmath>
#include <csignal>
#include <cstdio>

namespace tgc::runtime {

int runTrainingLoop(const TrainingLoop &loop) {
  ProgressLog log(loop.firstStep, loop.lastStep, loop.logEvery);
  if (!loop.lossLog.empty() && !log.openLossLog(loop.lossLog))
    return 1;
  log.setMetrics(loop.metrics);
  installInterruptHandlers();
  for (int64_t step = loop.firstStep; step <= loop.lastStep; ++step) {
    Batch batch = loop.batch(loop.seed, static_cast<uint64_t>(step - 1));
    StepInput input{loop.seed, step,
                    static_cast<float>(loop.schedule.learningRate(step))};
    StepOutcome outcome;
    if (!loop.backend.runStep(batch, input, outcome))
      return 1;
    if (!log.record(step, outcome.loss, input.lr, outcome.tokens,
                    batch.slots() - batch.sourceTokens() -
                        batch.targetTokens(),
                    batch.slots()))
      return 1;
    if (!std::isfinite(outcome.loss)) {
      log.finish();
      std::fprintf(stderr,
                   "error: the loss is %s at step %lld: training stops, and "
                   "nothing is saved from this step on\n",
                   std::isnan(outcome.loss) ? "NaN" : "infinite",
                   static_cast<long long>(step));
      if (loop.onNonFinite)
        loop.onNonFinite(batch, input);
      return 1;
    }
    if (int signal = pendingInterrupt()) {
      log.finish();
      std::string resume = loop.onInterrupt ? loop.onInterrupt(step) : "";
      std::fprintf(stderr, "interrupted by %s after step %lld%s\n",
                   signal == SIGINT ? "SIGINT" : "SIGTERM",
                   static_cast<long long>(step), resume.c_str());
      return 128 + signal;
    }
    AfterStep next = loop.afterStep ? loop.afterStep(step) : AfterStep::Continue;
    if (next == AfterStep::Fail)
      return 1;
    if (next == AfterStep::Stop)
      break;
  }
  log.finish();
  return 0;
}

} // namespace tgc::runtime
