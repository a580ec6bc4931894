//===- RunTraining.cpp - a run's training phase --------------------------===//
//
// The run's steps through the one training loop (train/TrainingLoop.h): the
// compiled step as its backend, the data-parallel sums, and the hooks that
// validate, save and compare the processes' parameters between steps.
//
//===----------------------------------------------------------------------===//
#include "runtime/program/main/Run.h"

#include "runtime/program/main/CompiledStepBackend.h"
#include "runtime/program/main/StepProfile.h"
#include "runtime/program/parallel/ParameterChecksum.h"

#include <cstdio>
#include <optional>

namespace tgc::runtime {

WarmupSchedule Run::modelSchedule() const {
  WarmupSchedule s{model.scheduleDModel, model.scheduleWarmup,
                   model.scheduleFactor};
  s.kind = static_cast<LrScheduler>(model.scheduleKind);
  s.peak = model.schedulePeak;
  s.minimum = model.scheduleMinimum;
  s.lastStep = options.steps;
  return s;
}

WarmupSchedule Run::learningRates() const {
  WarmupSchedule s = modelSchedule();
  if (options.lrScheduler)
    s.kind = *options.lrScheduler;
  if (options.warmup)
    s.warmupSteps = *options.warmup;
  if (options.lrFactor)
    s.factor = *options.lrFactor;
  if (options.lr)
    s.peak = *options.lr;
  if (options.minLr)
    s.minimum = *options.minLr;
  s.lastStep = options.steps;
  return s;
}

bool Run::checkSameParameters(int64_t step) {
  if (!group)
    return true;
  if (model.device)
    model.device->download(memory.state());
  // Sharded, the processes hold different parts of the moments: the
  // parameters alone are compared.
  uint64_t mine = 0;
  if (sharded) {
    for (int v = 0; v < model.numVariables; ++v)
      if (model.variables[v].trainable)
        mine = mine * 0x100000001b3ull ^
               parameterChecksum(memory.state() + model.variables[v].offset,
                                 model.variables[v].size);
  } else {
    mine = parameterChecksum(memory.state(), model.stateFloats);
  }
  uint64_t min = 0, max = 0;
  group->minMax(mine, min, max);
  if (min == max)
    return true;
  std::fprintf(stderr,
               "error: rank %d: the %d processes' parameters differ at step "
               "%lld (checksum %016llx; the processes hold %016llx to "
               "%016llx): they no longer train one model; every process "
               "stops\n",
               group->rank(), group->size(), static_cast<long long>(step),
               static_cast<unsigned long long>(mine),
               static_cast<unsigned long long>(min),
               static_cast<unsigned long long>(max));
  return false;
}

int Run::train() {
  CompiledStepBackend backend{model, memory};
  if (group && sharded) {
    backend.allReduceSum = &ShardedOptimizer::countTokens;
    backend.optimizerStep = &ShardedOptimizer::step;
  } else if (group)
    backend.allReduceSum = model.device && model.device->allReduceSum
                               ? model.device->allReduceSum
                               : allReduceHostSum;
  std::optional<StepProfile> profile;
  if (options.profile && model.buckets[0].profileStep)
    backend.profile = &profile.emplace(model);
  else if (options.profile)
    std::printf("note: --profile times the ops of CPU programs only\n");
  TrainingLoop loop{backend};
  loop.batch = [this](uint32_t seed, uint64_t index) {
    return group ? data.share(seed, index, group->rank(), group->size())
                 : data.batch(seed, index);
  };
  loop.group = group;
  loop.schedule = learningRates();
  loop.seed = seed;
  loop.firstStep = stepsDone + 1;
  loop.lastStep = options.steps;
  loop.logEvery = options.logEvery;
  loop.updateFreq = options.updateFreq;
  loop.clipNorm = options.clipNorm;
  loop.weightDecay = weightDecay();
  if (epochsAfter(0)) {
    loop.epochs = [this](uint64_t batches) {
      return *data.epochsAfter(seed, batches, processes());
    };
    loop.maxEpochs = options.maxEpochs;
  }
  loop.maxSeconds = static_cast<double>(options.maxSeconds);
  loop.lossLog = leads() ? options.lossLog : std::string();
  loop.metrics = metrics.isOpen() ? &metrics : nullptr;
  // The schedule first, so that `tgc-data curves` draws every step's rate,
  // and the label smoothing, which training's loss has and validation's not.
  if (loop.metrics &&
      !metrics.write(scheduleRecord(loop.schedule, stepsDone)
                         .add("label_smoothing", model.labelSmoothing)))
    return 1;
  loop.onLoss = [this](float loss) { runningLoss.add(loss); };
  loop.afterStep = [this](int64_t step, bool last) {
    stepsDone = step;
    if ((step % options.logEvery == 0 || last) && !checkSameParameters(step))
      return AfterStep::Fail;
    if (options.validEvery > 0 && (step % options.validEvery == 0 || last)) {
      AfterStep next = validate(step);
      if (next != AfterStep::Continue)
        return next;
    }
    bool periodic =
        options.saveEvery > 0 && step % options.saveEvery == 0 && !last;
    return !periodic || save(step, /*last=*/false) ? AfterStep::Continue
                                                   : AfterStep::Fail;
  };
  loop.onNonFinite = [&backend](const Batch &batch, const StepInput &input) {
    backend.explainNonFinite(batch, input);
  };
  loop.onInterrupt = [this](int64_t step) {
    stepsDone = step;
    return save(step, /*last=*/true)
               ? "; continue with --resume " + checkpointPath
               : std::string();
  };
  int code = runTrainingLoop(loop);
  if (profile)
    profile->print(stdout);
  if (code != 0)
    return code;
  return save(stepsDone, /*last=*/true) ? -1 : 1;
}

} // namespace tgc::runtime
