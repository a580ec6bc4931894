//===- TrainingLoop.cpp - the one training loop ---------------------------===//
#include "runtime/program/train/TrainingLoop.h"

#include "runtime/kernels/KernelTypes.h"
#include "runtime/program/train/Interrupt.h"
#include "runtime/program/train/ProgressLog.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <optional>
#include <vector>

namespace tgc::runtime {

namespace {

/// One update: `updateFreq` batches, their losses and tokens summed.
struct Update {
  double lossSum = 0; ///< per-token losses times tokens (weighted runs)
  double crossEntropySum = 0; ///< the same of the cross-entropy parts
  float loss = 0, gradNorm = 0;
  std::optional<float> crossEntropy; ///< StepOutcome::crossEntropy
  /// Summed over the update's batches and processes: past 2^31 at 4096
  /// batches of 25k tokens on 21 processes.
  int64_t tokens = 0;
  int64_t padded = 0, slots = 0;

  /// The loss (and its cross-entropy part) per target token of the sums.
  void average() {
    double count = std::max<double>(tokens, 1.0);
    loss = static_cast<float>(lossSum / count);
    if (crossEntropy)
      crossEntropy = static_cast<float>(crossEntropySum / count);
  }
};

/// The phase of batch k of n in one update (KernelTypes.h: UpdatePhase).
int32_t phaseOf(int64_t k, int64_t n) {
  if (n == 1)
    return kUpdate;
  return k == 0      ? kAccumulateFirst
         : k + 1 < n ? kAccumulate
                     : kAccumulateUpdate;
}

/// What ends the run after a step, if anything.
enum class Limit { None, Steps, Epochs, Time };

/// Prints why a limit ended the run before its last step.
void reportLimit(Limit limit, const TrainingLoop &loop, int64_t step,
                 double elapsed) {
  if (limit == Limit::Epochs)
    std::printf("stopping after step %lld: %lld epoch%s done (--max-epochs)\n",
                static_cast<long long>(step),
                static_cast<long long>(loop.maxEpochs),
                loop.maxEpochs == 1 ? "" : "s");
  else
    std::printf("stopping after step %lld: --max-time reached after %.1fs "
                "of training\n",
                static_cast<long long>(step), elapsed);
}

/// Prints why training stops at a non-finite value.
void reportNonFinite(const char *what, float value, int64_t step) {
  std::fprintf(stderr,
               "error: the %s is %s at step %lld: training stops, and nothing "
               "is saved from this step on\n",
               what, std::isnan(value) ? "NaN" : "infinite",
               static_cast<long long>(step));
}

/// A finite gradient norm that Adam does not take (adamTakes): its update
/// was not made.
void reportTooLarge(float norm, float clip, int64_t step) {
  std::fprintf(stderr,
               "error: the gradient norm is %.3g at step %lld, past the %.3g "
               "an Adam update takes (its f32 second moment would overflow): "
               "training stops, and nothing is saved from this step on\n",
               norm, static_cast<long long>(step), largestAdamNorm());
  if (!(clip > 0))
    std::fprintf(stderr, "note: --clip-norm C scales the gradient to norm C "
                         "first\n");
}

} // namespace

int runTrainingLoop(const TrainingLoop &loop) {
  ProgressLog log(loop.firstStep, loop.lastStep, loop.logEvery);
  if (!loop.lossLog.empty() && !log.openLossLog(loop.lossLog))
    return 1;
  log.setMetrics(loop.metrics);
  log.setLimits(loop.epochs ? loop.maxEpochs : 0, loop.maxSeconds);
  installInterruptHandlers();
  ProcessGroup *group = loop.group;
  if (group)
    log.setPlainLines();
  // A signal during the set-up stops the run before its first step (a
  // group agrees on signals after each step, so that all stop together).
  if (int signal = pendingInterrupt(); signal && !group) {
    log.finish();
    std::fprintf(stderr, "interrupted by %s before step %lld\n",
                 signalName(signal), static_cast<long long>(loop.firstStep));
    return 128 + signal;
  }
  const int64_t n = std::max<int64_t>(loop.updateFreq, 1);
  std::vector<Batch> batches(static_cast<size_t>(n));
  // Target tokens of each batch of the update, of every process's share.
  std::vector<double> batchTokens(static_cast<size_t>(n));
  for (int64_t step = loop.firstStep; step <= loop.lastStep; ++step) {
    // The update's batches first: each one's gradient weighs its share of
    // the update's target tokens. In a group the step itself sums the
    // gradients and tokens of one batch (StepFrame::allReduceSum) and
    // divides the weight by the tokens: several batches need their global
    // token counts beforehand, one does not.
    for (int64_t k = 0; k < n; ++k) {
      batches[k] =
          loop.batch(loop.seed, static_cast<uint64_t>((step - 1) * n + k));
      batchTokens[k] = static_cast<double>(batches[k].targetTokens());
    }
    if (group && n > 1)
      group->sum(batchTokens.data(), n, "the update's token counts");
    double updateTokens = 0;
    for (double tokens : batchTokens)
      updateTokens += tokens;
    // One process, one batch: the weight is 1 (the step as it always was).
    const bool weighted = n > 1 || group;
    Update update;
    for (int64_t k = 0; k < n; ++k) {
      const Batch &batch = batches[k];
      StepInput input{loop.seed, step,
                      static_cast<float>(loop.schedule.learningRate(step)),
                      (step - 1) * n + k + 1};
      input.gradWeight =
          n == 1 ? 1.0f
                 : static_cast<float>(batchTokens[k] /
                                      std::max(updateTokens, 1.0));
      input.updatePhase = phaseOf(k, n);
      input.clipNorm = loop.clipNorm;
      input.weightDecay = loop.weightDecay;
      input.hyper = loop.hyper;
      input.firstExample = group ? group->rank() * batch.batchSize : 0;
      StepOutcome outcome;
      if (!loop.backend.runStep(batch, input, outcome)) {
        if (group)
          group->abort(1); // the others would wait for this one
        return 1;
      }
      update.loss = outcome.loss;
      update.crossEntropy = outcome.crossEntropy;
      if (outcome.tokens > 0) { // a share without tokens has no loss
        update.lossSum += static_cast<double>(outcome.loss) * outcome.tokens;
        update.crossEntropySum +=
            static_cast<double>(outcome.crossEntropy.value_or(0.0f)) *
            outcome.tokens;
      }
      update.tokens += outcome.tokens;
      update.gradNorm = outcome.gradNorm;
      update.padded +=
          batch.slots() - batch.sourceTokens() - batch.targetTokens();
      update.slots += batch.slots();
      // In a group the loss is judged once summed (below), so that every
      // process stops at the same step; the norm is of the summed gradient.
      bool lossFinite = group || std::isfinite(outcome.loss);
      if (lossFinite && std::isfinite(outcome.gradNorm) &&
          !adamTakes(outcome.gradNorm, loop.clipNorm)) {
        log.finish();
        reportTooLarge(outcome.gradNorm, loop.clipNorm, step);
        return 1; // no NaN for onNonFinite to find: the state is finite
      }
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
    // The loss per target token of the update's batches.
    if (weighted)
      update.average();
    // The clock, once per step: the log's status line and --max-time.
    ProgressLog::Clock::time_point now = ProgressLog::Clock::now();
    double elapsed =
        std::chrono::duration<double>(now - log.startTime()).count();
    bool timeUp = loop.maxSeconds > 0 && elapsed >= loop.maxSeconds;
    // A group's totals: the global batch's loss (and cross-entropy part)
    // and tokens, its padding, and whether any process was interrupted or is
    // out of time.
    int agreedSignal = pendingInterrupt();
    if (group) {
      double totals[7] = {update.lossSum,
                          update.crossEntropySum,
                          static_cast<double>(update.tokens),
                          static_cast<double>(update.padded),
                          static_cast<double>(update.slots),
                          agreedSignal ? 1.0 : 0.0,
                          timeUp ? 1.0 : 0.0};
      group->sum(totals, 7, "the update's loss and tokens");
      update.lossSum = totals[0];
      update.crossEntropySum = totals[1];
      update.tokens = static_cast<int64_t>(totals[2]);
      update.padded = static_cast<int64_t>(totals[3]);
      update.slots = static_cast<int64_t>(totals[4]);
      update.average();
      if (totals[5] > 0 && !agreedSignal)
        agreedSignal = SIGTERM;
      timeUp = totals[6] > 0;
      if (!std::isfinite(update.loss)) {
        log.finish();
        reportNonFinite("loss", update.loss, step);
        return 1;
      }
    }
    double epochs =
        loop.epochs ? loop.epochs(static_cast<uint64_t>(step * n)) : -1.0;
    Limit limit = step == loop.lastStep ? Limit::Steps
                  : loop.epochs && loop.maxEpochs > 0 &&
                          epochs >= static_cast<double>(loop.maxEpochs)
                      ? Limit::Epochs
                  : timeUp ? Limit::Time
                           : Limit::None;
    LoggedUpdate logged;
    logged.step = step;
    logged.loss = update.loss;
    logged.crossEntropy = update.crossEntropy;
    logged.gradNorm = update.gradNorm;
    logged.lr = static_cast<float>(loop.schedule.learningRate(step));
    logged.tokens = update.tokens;
    logged.padded = update.padded;
    logged.slots = update.slots;
    logged.epochs = epochs;
    logged.last = limit != Limit::None;
    // The log's disk may be full while the checkpoint's is not: the
    // trained steps are saved before the run ends, by every process of a
    // group at once (the verdict is shared below).
    const bool recorded = log.record(logged, now);
    if (loop.onLoss)
      loop.onLoss(update.loss);
    // Looked at after the step and again after its validation or save,
    // which a signal may have cut short.
    auto interrupted = [&](int signal) -> std::optional<int> {
      if (!signal)
        return std::nullopt;
      log.finish();
      std::string resume = loop.onInterrupt ? loop.onInterrupt(step) : "";
      if (!group || group->rank() == 0) // one message for the run
        std::fprintf(stderr, "interrupted by %s after step %lld%s\n",
                     signal == SIGINT ? "SIGINT" : "SIGTERM",
                     static_cast<long long>(step), resume.c_str());
      return 128 + signal;
    };
    if (std::optional<int> code = interrupted(agreedSignal))
      return *code;
    // Rank 0 may validate or save at length now: every process first says
    // it has finished the step, then waits for rank 0's verdict for as long
    // as rank 0 shows progress (ProcessGroup::beginFirstsWork).
    const bool runsLong = group && loop.afterStepRunsLong &&
                          loop.afterStepRunsLong(step, logged.last);
    if (runsLong)
      group->beginFirstsWork("the end of the step");
    // afterStep in every process whatever this one recorded: its
    // collectives (the parameters' checksums, a sharded optimizer's
    // moments) need them all. A failed record (a full disk under
    // --loss-log or --metrics) skipped it in that process alone, whose
    // vote then met the others' checksums.
    AfterStep next = loop.afterStep ? loop.afterStep(step, logged.last)
                                    : AfterStep::Continue;
    if (!recorded && next != AfterStep::Fail)
      next = AfterStep::FailAfterSaving;
    int lateSignal = pendingInterrupt();
    if (group) {
      // Rank 0 validates and saves: its verdict is everyone's, and so is
      // any process's interrupt.
      double votes[4] = {next == AfterStep::Fail ? 1.0 : 0.0,
                         next == AfterStep::FailAfterSaving ? 1.0 : 0.0,
                         next == AfterStep::Stop ? 1.0 : 0.0,
                         lateSignal ? 1.0 : 0.0};
      const char *what = "the decisions after the step";
      if (runsLong)
        group->sumAfterFirstsWork(votes, 4, what);
      else
        group->sum(votes, 4, what);
      next = votes[0] > 0   ? AfterStep::Fail
             : votes[1] > 0 ? AfterStep::FailAfterSaving
             : votes[2] > 0 ? AfterStep::Stop
                            : AfterStep::Continue;
      if (votes[3] > 0 && !lateSignal)
        lateSignal = SIGTERM;
    }
    if (next == AfterStep::Fail)
      return 1;
    if (next == AfterStep::FailAfterSaving) {
      log.finish();
      std::string resume = loop.onInterrupt ? loop.onInterrupt(step) : "";
      if (!resume.empty() && (!group || group->rank() == 0))
        std::fprintf(stderr, "note: the run stopped after step %lld%s\n",
                     static_cast<long long>(step), resume.c_str());
      // The run ends with an error, which stops every process (MPI_Abort,
      // Main.cpp): not before rank 0 has saved (the others, done first,
      // killed it during its save, or before its note).
      if (group) {
        double saved = 0;
        group->sum(&saved, 1, "the end of the run's last save");
      }
      return 1;
    }
    if (std::optional<int> code = interrupted(lateSignal))
      return *code;
    if (next == AfterStep::Stop)
      break;
    if (limit == Limit::Epochs || limit == Limit::Time) {
      if (!group || group->rank() == 0)
        reportLimit(limit, loop, step, elapsed);
      break;
    }
  }
  log.finish();
  return 0;
}

} // namespace tgc::runtime
