//===- TrainingLoopTest.cpp - the one training loop, with a stand-in step -===//
//
// runtime/program/train/TrainingLoop.h driven by a scripted StepBackend:
// what each step is given, the interval means of the log (read back from
// --metrics), early stopping, and a non-finite loss ending the run; and the
// bookkeeping of validations (Validation.h: --best-by, --patience).
//
//===----------------------------------------------------------------------===//
#include "runtime/program/decode/Validation.h"
#include "runtime/program/train/Interrupt.h"
#include "runtime/program/train/TrainingLoop.h"

#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <cstdlib>
#include <unistd.h>
#include <fstream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

using namespace tgc::runtime;

namespace {

/// Returns the scripted loss and token count of each step and records what
/// the loop gave it.
class ScriptedStep final : public StepBackend {
public:
  explicit ScriptedStep(std::vector<StepOutcome> script)
      : script(std::move(script)) {}
  bool runStep(const Batch &batch, const StepInput &input,
               StepOutcome &outcome) override {
    inputs.push_back(input);
    batchRows.push_back(batch.batchSize);
    outcome = script.at(static_cast<size_t>(input.step - 1));
    return true;
  }
  std::vector<StepOutcome> script;
  std::vector<StepInput> inputs;
  std::vector<int64_t> batchRows;
};

TrainingLoop loopOver(ScriptedStep &step, int64_t lastStep) {
  TrainingLoop loop{step};
  loop.batch = [](uint32_t, uint64_t index) {
    Batch batch;
    batch.batchSize = static_cast<int64_t>(index) + 1; // tells batches apart
    return batch;
  };
  loop.schedule = {32, 100, 1.0};
  loop.seed = 7;
  loop.lastStep = lastStep;
  loop.logEvery = 2;
  return loop;
}

/// A file of this test process's in the test's temporary directory, removed
/// when the test ends (a concurrent run of the suite has its own).
struct ScratchFile {
  explicit ScratchFile(const std::string &name)
      : path(::testing::TempDir() + "/" + std::to_string(::getpid()) + "-" +
             name) {
    std::remove(path.c_str());
  }
  ~ScratchFile() { std::remove(path.c_str()); }
  std::string path;
};

std::vector<std::string> lines(const std::string &path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

TEST(TrainingLoop, GivesEachStepItsBatchSeedAndRate) {
  ScriptedStep step({{1.f, 1}, {1.f, 1}, {1.f, 1}});
  EXPECT_EQ(runTrainingLoop(loopOver(step, 3)), 0);
  ASSERT_EQ(step.inputs.size(), 3u);
  tgc::WarmupSchedule schedule{32, 100, 1.0};
  for (int64_t s = 1; s <= 3; ++s) {
    const StepInput &input = step.inputs[s - 1];
    EXPECT_EQ(input.step, s);
    EXPECT_EQ(input.seed, 7u);
    EXPECT_FLOAT_EQ(input.lr, static_cast<float>(schedule.learningRate(s)));
    EXPECT_EQ(step.batchRows[s - 1], s); // batch index = step - 1
  }
}

// The schedules a run's flags choose (common/Schedule.h): each rises
// linearly to its peak at the end of the warmup, then falls as its kind
// says; without flags the paper's formula is used as it is.
TEST(LearningRateSchedule, EachKindPeaksAtTheWarmupAndEndsWhereItSays) {
  tgc::WarmupSchedule paper{512, 4000, 1.0};
  EXPECT_DOUBLE_EQ(paper.learningRate(4000), paper.peakRate());
  EXPECT_DOUBLE_EQ(paper.peakRate(), 1.0 / std::sqrt(512.0 * 4000.0));
  tgc::WarmupSchedule s = paper;
  s.peak = 1e-3;
  s.warmupSteps = 100;
  s.minimum = 1e-5;
  s.lastStep = 1100;
  for (tgc::LrScheduler kind :
       {tgc::LrScheduler::InverseSqrt, tgc::LrScheduler::Cosine,
        tgc::LrScheduler::Linear, tgc::LrScheduler::Constant}) {
    s.kind = kind;
    SCOPED_TRACE(tgc::lrSchedulerName(kind));
    EXPECT_DOUBLE_EQ(s.learningRate(50), 5e-4);
    EXPECT_DOUBLE_EQ(s.learningRate(100), 1e-3);
  }
  s.kind = tgc::LrScheduler::InverseSqrt;
  EXPECT_DOUBLE_EQ(s.learningRate(400), 5e-4); // 1e-3 * sqrt(100 / 400)
  s.kind = tgc::LrScheduler::Constant;
  EXPECT_DOUBLE_EQ(s.learningRate(5000), 1e-3);
  s.kind = tgc::LrScheduler::Cosine;
  EXPECT_NEAR(s.learningRate(600), (1e-3 + 1e-5) / 2, 1e-15);
  EXPECT_DOUBLE_EQ(s.learningRate(1100), 1e-5);
  EXPECT_DOUBLE_EQ(s.learningRate(2000), 1e-5);
  s.kind = tgc::LrScheduler::Linear;
  EXPECT_NEAR(s.learningRate(350), 1e-5 + 0.75 * (1e-3 - 1e-5), 1e-15);
  EXPECT_DOUBLE_EQ(s.learningRate(1100), 1e-5);
  EXPECT_EQ(s.describe(), "linear, peak 0.001 at step 100 to 1e-05 at step 1100");
  // A run whose last step is the warmup's end (or before it) reaches the
  // peak there; it used to drop to the minimum at that step.
  s.lastStep = 100;
  for (tgc::LrScheduler kind : {tgc::LrScheduler::Cosine, tgc::LrScheduler::Linear}) {
    s.kind = kind;
    EXPECT_DOUBLE_EQ(s.learningRate(99), 9.9e-4);
    EXPECT_DOUBLE_EQ(s.learningRate(100), 1e-3);
  }
  s.lastStep = 20;
  EXPECT_DOUBLE_EQ(s.learningRate(20), 2e-4);
}

TEST(TrainingLoop, LogsTheIntervalsTokenWeightedMean) {
  ScratchFile file("loop-metrics.jsonl");
  const std::string &path = file.path;
  MetricsFile metrics;
  ASSERT_TRUE(metrics.open(path));
  // Lines at steps 1, 2 and 4: means of {1}, {2} and {3, 4} weighted by
  // tokens: (3*10 + 4*30) / 40 = 3.75.
  ScriptedStep step({{1.f, 5}, {2.f, 5}, {3.f, 10}, {4.f, 30}});
  TrainingLoop loop = loopOver(step, 4);
  loop.metrics = &metrics;
  EXPECT_EQ(runTrainingLoop(loop), 0);
  std::vector<std::string> records = lines(path);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_NE(records[0].find("\"kind\": \"train\", \"step\": 1, \"loss\": 1,"),
            std::string::npos)
      << records[0];
  EXPECT_NE(records[1].find("\"step\": 2, \"loss\": 2,"), std::string::npos)
      << records[1];
  EXPECT_NE(records[2].find("\"step\": 4, \"loss\": 3.75,"), std::string::npos)
      << records[2];
  EXPECT_NE(records[2].find("\"steps\": 2,"), std::string::npos) << records[2];
  // A loss that is all cross-entropy is not split.
  EXPECT_EQ(records[2].find("cross_entropy"), std::string::npos) << records[2];
}

TEST(TrainingLoop, SplitsALossWithOtherTermsAndTakesThePerplexityOfItsCrossEntropy) {
  ScratchFile file("loop-split-metrics.jsonl");
  const std::string &path = file.path;
  MetricsFile metrics;
  ASSERT_TRUE(metrics.open(path));
  // Cross-entropy plus 0.25 of other terms; the line at step 4 weighs
  // steps 3 and 4 by tokens: cross-entropy (3*10 + 4*30) / 40 = 3.75.
  ScriptedStep step({{1.25f, 10, 0.f, 1.f},
                     {2.25f, 10, 0.f, 2.f},
                     {3.25f, 10, 0.f, 3.f},
                     {4.25f, 30, 0.f, 4.f}});
  TrainingLoop loop = loopOver(step, 4);
  loop.metrics = &metrics;
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(runTrainingLoop(loop), 0);
  std::string log = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(log.find("step      4/4  loss 4.0000 (cross-entropy 3.7500 + other "
                     "terms 0.2500)  ppl   42.521  gnorm"),
            std::string::npos)
      << log;
  std::vector<std::string> records = lines(path);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_NE(records[2].find("\"step\": 4, \"loss\": 4, \"cross_entropy\": "
                            "3.75, \"other_terms\": 0.25, \"ppl\": 42.52108"),
            std::string::npos)
      << records[2];
}

TEST(TrainingLoop, StopsEarlyWhenAfterStepSaysSo) {
  ScriptedStep step({{1.f, 1}, {1.f, 1}, {1.f, 1}, {1.f, 1}});
  TrainingLoop loop = loopOver(step, 4);
  std::vector<int64_t> seen;
  loop.afterStep = [&](int64_t s, bool) {
    seen.push_back(s);
    return s == 2 ? AfterStep::Stop : AfterStep::Continue;
  };
  EXPECT_EQ(runTrainingLoop(loop), 0);
  EXPECT_EQ(step.inputs.size(), 2u);
  EXPECT_EQ(seen, (std::vector<int64_t>{1, 2}));
}

// A record that fails after a step (a validation's, on a full disk) ends the
// run once the step is saved: the trained steps are not lost.
TEST(TrainingLoop, FailAfterSavingSavesTheStepThenFails) {
  ScriptedStep step({{1.f, 1}, {1.f, 1}, {1.f, 1}});
  TrainingLoop loop = loopOver(step, 3);
  loop.afterStep = [&](int64_t s, bool) {
    return s == 2 ? AfterStep::FailAfterSaving : AfterStep::Continue;
  };
  std::vector<int64_t> saved;
  loop.onInterrupt = [&](int64_t s) {
    saved.push_back(s);
    return std::string("; continue with --resume x.ckpt");
  };
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(runTrainingLoop(loop), 1);
  std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(saved, (std::vector<int64_t>{2}));
  EXPECT_EQ(step.inputs.size(), 2u);
  EXPECT_NE(said.find("note: the run stopped after step 2; continue with "
                      "--resume x.ckpt"),
            std::string::npos)
      << said;
}

TEST(TrainingLoop, StopsAfterTheStepThatCompletesMaxEpochs) {
  ScriptedStep step({{1.f, 1}, {1.f, 1}, {1.f, 1}, {1.f, 1}, {1.f, 1}});
  TrainingLoop loop = loopOver(step, 5);
  loop.updateFreq = 2;
  loop.epochs = [](uint64_t batches) { return batches / 3.0; }; // 3 a pass
  loop.maxEpochs = 1;
  std::vector<std::pair<int64_t, bool>> seen;
  loop.afterStep = [&](int64_t s, bool last) {
    seen.emplace_back(s, last);
    return AfterStep::Continue;
  };
  EXPECT_EQ(runTrainingLoop(loop), 0);
  // Step 2 draws batches 2 and 3: the first pass is then done.
  EXPECT_EQ(seen,
            (std::vector<std::pair<int64_t, bool>>{{1, false}, {2, true}}));
}

TEST(TrainingLoop, StopsAfterTheStepThatReachesMaxSeconds) {
  ScriptedStep step({{1.f, 1}, {1.f, 1}, {1.f, 1}});
  TrainingLoop loop = loopOver(step, 3);
  loop.maxSeconds = 1e-9; // out of time after the first step
  std::vector<std::pair<int64_t, bool>> seen;
  loop.afterStep = [&](int64_t s, bool last) {
    seen.emplace_back(s, last);
    return AfterStep::Continue;
  };
  EXPECT_EQ(runTrainingLoop(loop), 0);
  EXPECT_EQ(seen, (std::vector<std::pair<int64_t, bool>>{{1, true}}));
}

TEST(TrainingLoop, ReportsEachUpdatesLossBeforeAfterStep) {
  ScriptedStep step({{1.5f, 1}, {2.5f, 1}, {0.5f, 1}});
  TrainingLoop loop = loopOver(step, 3);
  std::vector<std::string> events;
  loop.onLoss = [&](float loss) {
    events.push_back("loss " + std::to_string(loss));
  };
  loop.afterStep = [&](int64_t s, bool) {
    events.push_back("after " + std::to_string(s));
    return AfterStep::Continue;
  };
  EXPECT_EQ(runTrainingLoop(loop), 0);
  EXPECT_EQ(events, (std::vector<std::string>{"loss 1.500000", "after 1",
                                              "loss 2.500000", "after 2",
                                              "loss 0.500000", "after 3"}));
}

TEST(TrainingLoop, ANonFiniteLossEndsTheRunBeforeAfterStep) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  float inf = std::numeric_limits<float>::infinity();
  for (float bad : {nan, inf}) {
    ScriptedStep step({{1.f, 1}, {bad, 1}, {1.f, 1}});
    TrainingLoop loop = loopOver(step, 3);
    std::vector<int64_t> after, nonFinite;
    loop.afterStep = [&](int64_t s, bool) {
      after.push_back(s);
      return AfterStep::Continue;
    };
    loop.onNonFinite = [&](const Batch &, const StepInput &input) {
      nonFinite.push_back(input.step);
    };
    EXPECT_EQ(runTrainingLoop(loop), 1);
    EXPECT_EQ(after, (std::vector<int64_t>{1})); // step 2 is never saved
    EXPECT_EQ(nonFinite, (std::vector<int64_t>{2}));
    EXPECT_EQ(step.inputs.size(), 2u);
  }
}

// A finite gradient norm past what Adam takes (the optimizer made no
// update) ends the run as a non-finite one does, saving nothing; there is no
// NaN for onNonFinite to look for. Clipped below the bound, it trains on.
TEST(TrainingLoop, ANormPastWhatAdamTakesEndsTheRun) {
  for (float clip : {0.0f, 1.0f}) {
    StepOutcome huge{1.f, 1, 1e20f};
    ScriptedStep step({{1.f, 1, 1.f}, huge, {1.f, 1, 1.f}});
    TrainingLoop loop = loopOver(step, 3);
    loop.clipNorm = clip;
    std::vector<int64_t> after;
    int nonFinite = 0;
    loop.afterStep = [&](int64_t s, bool) {
      after.push_back(s);
      return AfterStep::Continue;
    };
    loop.onNonFinite = [&](const Batch &, const StepInput &) { ++nonFinite; };
    if (clip > 0) {
      EXPECT_EQ(runTrainingLoop(loop), 0);
      EXPECT_EQ(after, (std::vector<int64_t>{1, 2, 3}));
    } else {
      ::testing::internal::CaptureStderr();
      EXPECT_EQ(runTrainingLoop(loop), 1);
      std::string said = ::testing::internal::GetCapturedStderr();
      EXPECT_NE(said.find("error: the gradient norm is 1e+20 at step 2, past "
                          "the 1.8e+19 an Adam update takes"),
                std::string::npos)
          << said;
      EXPECT_NE(said.find("note: --clip-norm C"), std::string::npos) << said;
      EXPECT_EQ(after, (std::vector<int64_t>{1}));
    }
    EXPECT_EQ(nonFinite, 0);
  }
}

TEST(TrainingLoop, AFailedStepEndsTheRun) {
  struct Failing final : StepBackend {
    bool runStep(const Batch &, const StepInput &, StepOutcome &) override {
      return false;
    }
  } failing;
  TrainingLoop loop{failing};
  loop.batch = [](uint32_t, uint64_t) { return Batch(); };
  loop.lastStep = 3;
  EXPECT_EQ(runTrainingLoop(loop), 1);
}

TEST(Metrics, WritesNonFiniteNumbersAsNull) {
  std::string json = MetricsRecord("valid", 12)
                         .add("loss", std::nan(""))
                         .add("bleu", 27.5)
                         .add("tokens", int64_t{300})
                         .json();
  EXPECT_EQ(json, "{\"kind\": \"valid\", \"step\": 12, \"loss\": null, "
                  "\"bleu\": 27.5, \"tokens\": 300}");
}

TEST(Metrics, RunRecordGivesTheSchedule) {
  tgc::WarmupSchedule schedule;
  schedule.kind = tgc::LrScheduler::Cosine;
  schedule.peak = 1e-3;
  schedule.warmupSteps = 100;
  schedule.minimum = 1e-5;
  schedule.lastStep = 5000;
  EXPECT_EQ(scheduleRecord(schedule, 40).json(),
            "{\"kind\": \"run\", \"step\": 40, \"lr_scheduler\": \"cosine\", "
            "\"lr_peak\": 0.001, \"lr_warmup\": 100, \"lr_min\": 1e-05, "
            "\"lr_last_step\": 5000, \"lr_schedule\": \"cosine, peak 0.001 at "
            "step 100 to 1e-05 at step 5000\"}");
  // The paper's schedule: its peak, which gives every step's rate.
  tgc::WarmupSchedule paper;
  std::string json = scheduleRecord(paper, 0).json();
  EXPECT_NE(json.find("\"lr_scheduler\": \"inverse_sqrt\", \"lr_peak\": "
                      "0.000698771243, \"lr_warmup\": 4000"),
            std::string::npos)
      << json;
}

TEST(Validation, BestByBleuKeepsTheHighestAndCountsTheRest) {
  CheckpointInfo history;
  EXPECT_EQ(recordValidation(history, 3.0, 10.0, false, 0),
            ValidationVerdict::Best);
  // A lower loss does not make a BLEU-best, but is remembered.
  EXPECT_EQ(recordValidation(history, 2.0, 9.0, false, 0),
            ValidationVerdict::NotBest);
  EXPECT_EQ(history.bestLoss, 2.0);
  EXPECT_EQ(history.bestBleu, 10.0);
  EXPECT_EQ(history.staleValidations, 1);
  // Equal is not better.
  EXPECT_EQ(recordValidation(history, 2.5, 10.0, false, 0),
            ValidationVerdict::NotBest);
  EXPECT_EQ(recordValidation(history, 2.5, 12.0, false, 0),
            ValidationVerdict::Best);
  EXPECT_EQ(history.staleValidations, 0);
}

TEST(Validation, ANonFiniteValidationIsNeverTheBest) {
  // As the first it was "lower" than none: saved as .best, and no later
  // validation could beat it.
  for (bool byLoss : {true, false}) {
    CheckpointInfo history;
    EXPECT_EQ(recordValidation(history, NAN, 0.0, byLoss, 0),
              ValidationVerdict::NotBest);
    EXPECT_EQ(recordValidation(history, INFINITY, 5.0, byLoss, 0),
              ValidationVerdict::NotBest);
    EXPECT_EQ(recordValidation(history, 3.0, 10.0, byLoss, 0),
              ValidationVerdict::Best);
    EXPECT_EQ(history.bestLoss, 3.0);
    EXPECT_EQ(recordValidation(history, NAN, NAN, byLoss, 2),
              ValidationVerdict::NotBest);
    EXPECT_EQ(history.bestLoss, 3.0);
    EXPECT_EQ(history.bestBleu, 10.0);
  }
}

// A signal that comes after the run owns its checkpoint but before the loop
// starts (resuming, initializing) stops it before its first step, with
// 128 + the signal. In a child process: the flag, once set, stays set.
TEST(TrainingLoopDeathTest, ASignalDuringTheSetUpStopsBeforeTheFirstStep) {
  ScriptedStep step({{1.f, 1}});
  TrainingLoop loop = loopOver(step, 1);
  loop.firstStep = 4;
  loop.lastStep = 9;
  EXPECT_EXIT(
      {
        installInterruptHandlers();
        std::raise(SIGINT);
        int code = runTrainingLoop(loop);
        std::exit(step.inputs.empty() ? code : 99);
      },
      testing::ExitedWithCode(128 + SIGINT), "interrupted by SIGINT before step 4");
}

TEST(Validation, BestByLossAndPatience) {
  CheckpointInfo history;
  EXPECT_EQ(recordValidation(history, 3.0, 0.0, true, 2),
            ValidationVerdict::Best);
  EXPECT_EQ(recordValidation(history, 3.5, 50.0, true, 2),
            ValidationVerdict::NotBest);
  EXPECT_EQ(recordValidation(history, 3.0, 60.0, true, 2),
            ValidationVerdict::Stop); // two in a row without a lower loss
  // A resumed run goes on counting from the checkpoint's history.
  CheckpointInfo resumed = history;
  resumed.staleValidations = 1;
  EXPECT_EQ(recordValidation(resumed, 2.0, 0.0, true, 2),
            ValidationVerdict::Best);
}

// A run resumed from step 30 whose .best (loss 1.0) was saved at step 55 by
// the run it replays: up to step 55 a validation that is not better is no
// stale one, at 55 (the best's own step) none are stale, then they count.
TEST(Validation, ReplayedValidationsBeforeTheSavedBestAreNotStale) {
  CheckpointInfo history;
  history.bestLoss = 1.0;
  history.staleValidations = 1;
  for (int64_t step : {35, 40, 45, 50})
    EXPECT_EQ(recordValidation(history, 1.5, 0.0, true, 2, step, 55),
              ValidationVerdict::NotBest);
  EXPECT_EQ(history.staleValidations, 1);
  EXPECT_EQ(recordValidation(history, 1.0, 0.0, true, 2, 55, 55),
            ValidationVerdict::NotBest);
  EXPECT_EQ(history.staleValidations, 0);
  EXPECT_EQ(recordValidation(history, 1.2, 0.0, true, 2, 60, 55),
            ValidationVerdict::NotBest);
  EXPECT_EQ(recordValidation(history, 1.1, 0.0, true, 2, 65, 55),
            ValidationVerdict::Stop);
  // A better one is a best whenever it comes.
  EXPECT_EQ(recordValidation(history, 0.5, 0.0, true, 2, 40, 55),
            ValidationVerdict::Best);
}

} // namespace
