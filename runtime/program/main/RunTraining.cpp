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
#include <cstdlib>
#include <optional>
#include <string_view>

namespace tgc::runtime {

WarmupSchedule compiledSchedule(const CompiledModel &model,
                                const TrainOptions &options) {
  WarmupSchedule s{model.scheduleDModel, model.scheduleWarmup,
                   model.scheduleFactor};
  s.kind = static_cast<LrScheduler>(model.scheduleKind);
  s.peak = model.schedulePeak;
  s.minimum = model.scheduleMinimum;
  s.lastStep = options.steps;
  return s;
}

WarmupSchedule runSchedule(const CompiledModel &model,
                           const TrainOptions &options) {
  WarmupSchedule s = compiledSchedule(model, options);
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

std::string scheduleProblem(const CompiledModel &model,
                            const TrainOptions &options) {
  const TrainOptions &o = options;
  if (!o.lrScheduler && !o.warmup && !o.lrFactor && !o.lr && !o.minLr)
    return {}; // the model's own schedule, which tgc checked
  const WarmupSchedule s = runSchedule(model, options);
  const bool decays =
      s.kind == LrScheduler::Cosine || s.kind == LrScheduler::Linear;
  const char *kindSource = o.lrScheduler ? "--lr-scheduler" : "the model's";
  char text[320];
  if (o.lrFactor && s.peak > 0) {
    std::snprintf(text, sizeof text,
                  "--lr-factor scales the paper's schedule, and %s's has a "
                  "peak of its own (%g), which it would leave as it is: give "
                  "--lr for another peak",
                  model.name, s.peak);
    return text;
  }
  if (o.minLr && !decays) {
    std::snprintf(text, sizeof text,
                  "--min-lr goes with a cosine or linear schedule, and this "
                  "run's is %s (%s): give --lr-scheduler cosine or linear",
                  lrSchedulerName(s.kind), kindSource);
    return text;
  }
  if (s.warmupSteps == 0 && s.kind == LrScheduler::InverseSqrt && s.peak <= 0)
    return "--warmup 0 needs --lr with the inverse_sqrt schedule (the "
           "paper's peak is taken at the end of the warmup)";
  if (decays && s.minimum >= s.peakRate()) {
    if (o.minLr && o.lr)
      return "--min-lr must be below --lr";
    const char *peakSource = o.lr       ? "--lr"
                             : s.peak > 0 ? "the model's peak"
                                          : "the paper's, from the factor and "
                                            "the warmup";
    std::snprintf(text, sizeof text,
                  "the learning rate's peak, %g (%s), is not above its "
                  "minimum, %g (%s): give a lower --min-lr or a higher --lr",
                  s.peakRate(), peakSource, s.minimum,
                  o.minLr ? "--min-lr" : "the model's");
    return text;
  }
  if (decays && s.warmupSteps >= s.lastStep) {
    std::snprintf(text, sizeof text,
                  "a %s schedule warms up for %lld steps (%s) and ends at "
                  "step %lld (--steps): it would only rise; give a --warmup "
                  "below --steps",
                  lrSchedulerName(s.kind),
                  static_cast<long long>(s.warmupSteps),
                  o.warmup ? "--warmup" : "the model's",
                  static_cast<long long>(s.lastStep));
    return text;
  }
  return {};
}

std::vector<Run::Hyperparameter> Run::hyperparameters() const {
  const TrainOptions &o = options;
  return {{"--label-smoothing", "label smoothing", model.labelSmoothing,
           o.labelSmoothing},
          {"--adam-betas", "adam beta1", model.adamBeta1, o.adamBeta1},
          {"--adam-betas", "adam beta2", model.adamBeta2, o.adamBeta2},
          {"--adam-eps", "adam eps", model.adamEps, o.adamEps},
          {"--dropout", "dropout", model.dropout, o.dropout},
          {"--attention-dropout", "attention dropout", model.attentionDropout,
           o.attentionDropout}};
}

StepHyperparameters Run::stepHyperparameters() const {
  StepHyperparameters h;
  auto set = [](std::optional<float> &out, const std::optional<double> &in) {
    if (in)
      out = static_cast<float>(*in);
  };
  set(h.labelSmoothing, options.labelSmoothing);
  set(h.adamBeta1, options.adamBeta1);
  set(h.adamBeta2, options.adamBeta2);
  set(h.adamEps, options.adamEps);
  set(h.dropout, options.dropout);
  set(h.attentionDropout, options.attentionDropout);
  return h;
}

std::string Run::hyperparameterText(bool theModels) const {
  std::string text;
  char number[64];
  std::vector<Hyperparameter> all = hyperparameters();
  if (theModels)
    for (Hyperparameter &h : all)
      h.given.reset();
  for (size_t i = 0; i < all.size(); ++i) {
    const Hyperparameter &h = all[i];
    if (!h.model.taken)
      continue;
    // Adam's betas as one pair, as --adam-betas spells them.
    if (std::string_view(h.name) == "adam beta1" && i + 1 < all.size()) {
      std::snprintf(number, sizeof number, "adam betas (%g, %g)", h.value(),
                    all[++i].value());
      text += (text.empty() ? "" : "; ") + std::string(number);
      continue;
    }
    std::snprintf(number, sizeof number, " %g", h.value());
    text += (text.empty() ? "" : "; ") + std::string(h.name) + number;
  }
  return text;
}

bool Run::checkHyperparameters() const {
  for (const Hyperparameter &h : hyperparameters()) {
    if (h.model.mixed && h.given) {
      std::fprintf(stderr,
                   "error: %s %g: %s has %s at different compiled values, "
                   "which one flag cannot set (it would run them as "
                   "compiled); recompile it with the values wanted, or leave "
                   "the flag out\n",
                   h.flag, *h.given, model.name, h.name);
      return false;
    }
    if (h.model.taken || !h.given || *h.given == 0)
      continue;
    // Adam's are always taken; the others are absent when the model has
    // none of them (a rate 0 compiles the dropout away).
    std::fprintf(stderr,
                 "error: %s %g: %s was compiled without %s, so it has none "
                 "to set at run time; recompile it with a nonzero %s (its "
                 "config), or leave the flag out\n",
                 h.flag, *h.given, model.name, h.name, h.name);
    return false;
  }
  return true;
}

bool Run::checkSameParameters(int64_t step) {
  if (!group)
    return true;
  // A GPU that failed since the step is said here; the exchange below
  // still runs (every process takes part in it), and the votes after the
  // step stop them all.
  bool downloaded = true;
  if (model.device) {
    model.device->download(memory.state());
    downloaded = deviceOk("while reading the parameters at step " +
                          std::to_string(step));
  }
  // Sharded, the processes hold different parts of the moments: the
  // parameters alone are compared.
  uint64_t mine = sharded ? trainableChecksum(model, memory.state())
                          : parameterChecksum(memory.state(), model.stateFloats);
  uint64_t min = 0, max = 0;
  group->minMax(mine, min, max, "the parameter checksums");
  if (!downloaded)
    return false;
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

bool Run::usesCudaGraphs() const {
  if (!model.device || group)
    return false;
  return options.cudaGraphs.value_or(!options.profile);
}

StepProfile *Run::startProfile(std::optional<StepProfile> &profile) {
  if (!model.buckets[0].profileStep) {
    std::printf("note: --profile: this program was built without its "
                "profiling step; its steps run as usual\n");
    return nullptr;
  }
  profile.emplace(model);
  if (!model.device)
    return &*profile;
  std::string why;
  if (!model.device->startProfile ||
      !model.device->startProfile(&profile->kernels(), why)) {
    std::printf("note: --profile cannot record the GPU's work (%s); the steps "
                "run as usual\n",
                model.device->startProfile ? why.c_str()
                                           : "the program has no recorder");
    profile.reset();
    return nullptr;
  }
  if (usesCudaGraphs())
    std::printf("note: --profile with --cuda-graphs records the replayed "
                "steps' kernels whole, not each op's time (that is --profile "
                "alone)\n");
  else
    std::printf("note: --profile runs a GPU program's steps op by op and "
                "times each op by its kernels as the device ran them\n");
  return &*profile;
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
  backend.cudaGraphs = usesCudaGraphs();
  // Said only when asked for: the default is quietly off where it cannot be.
  const bool asked = options.cudaGraphs.value_or(false);
  if (asked && !model.device)
    std::printf("note: --cuda-graphs replays the steps of GPU programs only\n");
  else if (asked && group)
    std::printf("note: --cuda-graphs: a data-parallel step runs op by op "
                "(its all-reduce reads the global tokens on the host)\n");
  std::optional<StepProfile> profile;
  if (options.profile)
    backend.profile = startProfile(profile);
  backend.profileWhole = backend.profile && backend.cudaGraphs;
  TrainingLoop loop{backend};
  loop.batch = [this](uint32_t seed, uint64_t index) {
    const int rank = group ? group->rank() : 0;
    // A corpus's batches follow one another from where the resumed
    // checkpoint's processes left them.
    if (data.sharesWholeBatches())
      return data.batch(seed, drawnAtResume +
                                  (index - static_cast<uint64_t>(
                                               resumedStep * updatesPerStep())) *
                                      static_cast<uint64_t>(processes()) +
                                  static_cast<uint64_t>(rank));
    return group ? data.share(seed, index, rank, processes())
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
  loop.hyper = stepHyperparameters();
  if (hasEpochs()) {
    // The loop counts this run's global batches from step 0.
    loop.epochs = [this](uint64_t batches) {
      return *data.epochsAfter(seed, batchesDrawn(static_cast<int64_t>(
                                         batches / updatesPerStep())),
                               1);
    };
    loop.maxEpochs = options.maxEpochs;
  }
  loop.maxSeconds = static_cast<double>(options.maxSeconds);
  loop.lossLog = leads() ? options.lossLog : std::string();
  loop.metrics = metrics.isOpen() ? &metrics : nullptr;
  // --metrics opens with a "run" record (at the step it starts after): the
  // schedule, so that `tgc-data curves` draws every step's rate, and the
  // hyperparameters in force, those the step takes (the label smoothing,
  // which training's loss has and validation's not, always). A failed
  // write is the loop's to stop on (its first record fails too), so that
  // every process of a data-parallel run stops at the same step.
  if (loop.metrics) {
    MetricsRecord record = scheduleRecord(loop.schedule, stepsDone);
    const char *keys[] = {"label_smoothing", "adam_beta1", "adam_beta2",
                          "adam_eps",        "dropout",    "attention_dropout"};
    // Each float as its shortest decimal (0.1, not 0.100000001).
    auto shortest = [](float value) {
      char text[32];
      std::snprintf(text, sizeof text, "%.7g", static_cast<double>(value));
      return std::strtod(text, nullptr);
    };
    std::vector<Hyperparameter> all = hyperparameters();
    for (size_t i = 0; i < all.size(); ++i)
      if (all[i].model.taken || i == 0)
        record.add(keys[i], shortest(all[i].value()));
    record.add("weight_decay", shortest(weightDecay()));
    if (options.maxTokens > 0)
      record.add("max_tokens", options.maxTokens);
    metrics.write(record);
  }
  loop.onLoss = [this](float loss) { runningLoss.add(loss); };
  auto validates = [this](int64_t step, bool last) {
    return options.validEvery > 0 && (step % options.validEvery == 0 || last);
  };
  auto savesAlong = [this](int64_t step, bool last) {
    return options.saveEvery > 0 && step % options.saveEvery == 0 && !last;
  };
  loop.afterStep = [=, this](int64_t step, bool last) {
    stepsDone = step;
    if ((step % options.logEvery == 0 || last) && !checkSameParameters(step))
      return AfterStep::Fail;
    AfterStep next =
        validates(step, last) ? validate(step) : AfterStep::Continue;
    // The save along whatever rank 0's verdict (the loop shares it after
    // this): every process takes the same collectives (a sharded
    // optimizer's moments come together), where rank 0 alone skipping the
    // save left the others in them (MPI_ERR_TRUNCATE, the step unsaved).
    if (savesAlong(step, last) && !save(step, /*last=*/false))
      return AfterStep::Fail;
    return next;
  };
  loop.afterStepRunsLong = [=](int64_t step, bool last) {
    return validates(step, last) || savesAlong(step, last);
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
  // The run this one resumes was stopped during a validation step, before
  // its validation: that validation comes first (a signal during it ends
  // the run before its first step, and the next resume owes it still).
  if (validationOwed) {
    int signal = 0;
    AfterStep next = owedValidation("where this run validates", signal);
    if (next == AfterStep::Fail)
      return 1;
    if (signal)
      return interruptedBeforeTraining(signal);
    if (next == AfterStep::Stop) { // --patience: nothing more to train
      beginRunEnd();
      return save(stepsDone, /*last=*/true) ? -1 : 1;
    }
  }
  int code = runTrainingLoop(loop);
  if (profile)
    profile->print(stdout);
  if (code != 0)
    return code;
  beginRunEnd();
  return save(stepsDone, /*last=*/true) ? -1 : 1;
}

} // namespace tgc::runtime
