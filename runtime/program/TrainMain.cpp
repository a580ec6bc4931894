//===- TrainMain.cpp - main() of every generated training binary ---------===//
//
// Allocates the state and the arena the compiled model asks for, fills the
// parameters from the seed (runtime/program/Initializers.h, as the interpreter does)
// or a checkpoint, runs the step on the data's batches with the warmup
// schedule, logging every --log-every steps, validating every --valid-every
// steps and saving checkpoints, and at the end translates held-out sentences
// greedily with the compiled predict. With --translate it translates text
// with beam search instead (TranslateText.h).
//
//===----------------------------------------------------------------------===//
#include "runtime/data/Bleu.h"
#include "runtime/program/CheckpointHistory.h"
#include "runtime/program/CompiledStep.h"
#include "runtime/program/StepProfile.h"
#include "runtime/program/ThreadDefaults.h"
#include "runtime/program/Interrupt.h"
#include "runtime/program/ManifestCheck.h"
#include "runtime/program/Metrics.h"
#include "runtime/program/ModelState.h"
#include "runtime/program/Options.h"
#include "runtime/program/ParameterChecksum.h"
#include "runtime/program/ProcessGroup.h"
#include "runtime/program/ShardedOptimizer.h"
#include "runtime/program/TrainingData.h"
#include "runtime/program/TrainingLoop.h"
#include "runtime/program/Translate.h"
#include "runtime/program/TranslateText.h"
#include "runtime/program/Validation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

using namespace tgc;
using namespace tgc::runtime;

namespace {

/// Restores --resume's checkpoint into `memory`; false after a message.
bool loadCheckpoint(const TrainOptions &options, ModelState &memory,
                    CheckpointInfo &info) {
  std::vector<CheckpointTensor> tensors = memory.tensors();
  if (std::string why = readCheckpoint(options.resume, info, tensors);
      !why.empty()) {
    std::fprintf(stderr, "error: %s\n", why.c_str());
    return false;
  }
  return true;
}

/// The bucket `batch` was packed for; null after a message when there is
/// none (a bug: the batcher packs only the model's bucket shapes).
const CompiledBucket *bucketOf(const CompiledModel &model, const Batch &batch) {
  for (int b = 0; b < model.numBuckets; ++b)
    if (model.buckets[b].batchSize == batch.batchSize &&
        model.buckets[b].sourceLength == batch.sourceLength &&
        model.buckets[b].targetLength == batch.targetLength)
      return &model.buckets[b];
  std::fprintf(stderr, "internal error: no bucket of shape %lldx%lldx%lld\n",
               static_cast<long long>(batch.batchSize),
               static_cast<long long>(batch.sourceLength),
               static_cast<long long>(batch.targetLength));
  return nullptr;
}

/// False after "error: GPU failure <when>: <the first CUDA error>" once a
/// GPU model's device has failed (deviceFailed); always true on the CPU.
/// Asked before anything the device computed is used or saved.
bool deviceOk(const std::string &when) {
  std::string why;
  if (!deviceFailed || !deviceFailed(why))
    return true;
  std::fprintf(stderr, "error: GPU failure %s: %s\n", when.c_str(),
               why.c_str());
  return false;
}

/// The compiled step of the bucket each batch was packed for.
struct CompiledStepBackend final : StepBackend {
  const CompiledModel &model;
  ModelState &memory;
  /// --profile: steps run through it, op by op with the clock.
  StepProfile *profile = nullptr;
  /// Data-parallel runs: what the step's gradients and tokens are summed
  /// with, and the sharded optimizer that sums and applies them.
  decltype(StepFrame::allReduceSum) allReduceSum = nullptr;
  decltype(StepFrame::optimizerStep) optimizerStep = nullptr;

  CompiledStepBackend(const CompiledModel &model, ModelState &memory)
      : model(model), memory(memory) {}

  bool runStep(const Batch &batch, const StepInput &input,
               StepOutcome &outcome) override {
    const CompiledBucket *bucket = bucketOf(model, batch);
    if (!bucket)
      return false;
    StepFrame frame = frameOf(batch, input);
    if (profile)
      profile->run(*bucket, frame);
    else
      bucket->trainStep(frame);
    if (!deviceOk("in step " + std::to_string(input.step)))
      return false;
    outcome = {frame.loss, frame.tokens, frame.gradNorm};
    return true;
  }

  /// After a non-finite loss (the step skipped Adam): names the first op of
  /// the step that produced a NaN or an infinity, re-running it on the same
  /// batch and state op by op, or the parameter that an earlier update
  /// already made non-finite.
  void explainNonFinite(const Batch &batch, const StepInput &input) {
    long long step = static_cast<long long>(input.step);
    if (model.device) {
      std::fprintf(stderr, "note: a GPU program cannot re-run step %lld op "
                           "by op; its CPU build (tgc without --target=cuda) "
                           "can\n", step);
      return;
    }
    if (const char *variable = memory.firstNonFinite()) {
      std::fprintf(stderr,
                   "note: %s already held a NaN or an infinity before step "
                   "%lld: the update of an earlier step (with a finite loss) "
                   "made it so\n",
                   variable, step);
      return;
    }
    const CompiledBucket *bucket = bucketOf(model, batch);
    if (!bucket || !bucket->checkStep)
      return;
    StepFrame frame = frameOf(batch, input);
    frame.allReduceSum = nullptr; // this process's own values, alone
    if (const char *op = bucket->checkStep(frame))
      std::fprintf(stderr, "note: the first NaN or infinity of step %lld comes "
                           "from %s\n", step, op);
    else
      std::fprintf(stderr, "note: re-running step %lld op by op gave no NaN "
                           "or infinity\n", step);
  }

  StepFrame frameOf(const Batch &batch, const StepInput &input) {
    StepFrame frame{};
    frame.state = memory.state();
    frame.arena = memory.arena();
    frame.sourceIds = batch.source.data();
    frame.targetInIds = batch.targetIn.data();
    frame.targetOutIds = batch.targetOut.data();
    frame.dropoutKey[0] = static_cast<int32_t>(input.seed);
    frame.dropoutKey[1] = static_cast<int32_t>(input.dropoutStep);
    frame.lr = input.lr;
    frame.step = static_cast<int32_t>(input.step);
    frame.gradWeight = input.gradWeight;
    frame.updatePhase = input.updatePhase;
    frame.clipNorm = input.clipNorm;
    frame.allReduceSum = allReduceSum;
    frame.optimizerStep = optimizerStep;
    frame.firstExample = input.firstExample;
    frame.batchTokens = static_cast<float>(batch.targetTokens());
    // The CPU's gradient accumulator, for the first accumulating step (a
    // GPU program keeps its own on the device).
    if (input.updatePhase != 0 && accumulator.empty() && !model.device)
      accumulator.assign(static_cast<size_t>(model.gradientFloats), 0.0f);
    frame.gradAccumulator = accumulator.empty() ? nullptr : accumulator.data();
    return frame;
  }

  std::vector<float> accumulator;
};

/// Whether --resume's checkpoint may go on in this program: its manifest
/// (what made the program that wrote it) differs at most in what does not
/// change the model, or --force-resume. False after a message.
bool checkManifest(const TrainOptions &options, const CompiledModel &model,
                   const CheckpointInfo &resumed) {
  if (resumed.manifest.empty())
    return true; // written before checkpoints recorded manifests
  ManifestDifference difference =
      compareManifests(resumed.manifest, model.manifest ? model.manifest : "");
  if (difference.empty())
    return true;
  bool refuse = difference.configDiffers && !options.forceResume;
  std::fprintf(stderr, "%s: checkpoint %s was written by another program%s:\n%s",
               refuse ? "error" : "note", options.resume.c_str(),
               refuse ? " with another config (--force-resume to go on)" : "",
               difference.format().c_str());
  return !refuse;
}

struct Run {
  const CompiledModel &model;
  const TrainOptions &options;
  TrainingData &data;
  ModelState &memory;
  std::string checkpointPath;
  uint32_t seed = 1;
  int64_t stepsDone = 0;
  /// The validations so far (best BLEU and loss, validations since the
  /// best), also those before a resume: what a checkpoint records.
  CheckpointInfo validations;
  MetricsFile metrics;
  /// Data-parallel runs (null: one process); only rank 0 saves.
  ProcessGroup *group = nullptr;
  /// --shard-optimizer: each process holds 1/N of the Adam moments.
  ShardedOptimizer *sharded = nullptr;
  bool leads() const { return !group || group->rank() == 0; }

  /// Every --log-every steps and at the end of a data-parallel run: stops
  /// it when the processes' parameters differ (a checksum of the state),
  /// which would mean they no longer train one model. False after a
  /// message, on every process.
  bool checkSameParameters(int64_t step) {
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

  /// Continues `info`'s run if this one would see the same data; false
  /// after a message.
  bool resume(const CheckpointInfo &info) {
    if (info.data != data.describe()) {
      std::fprintf(stderr,
                   "error: checkpoint %s was trained on %s; this run would "
                   "use %s\n",
                   options.resume.c_str(), info.data.c_str(),
                   data.describe().c_str());
      return false;
    }
    if (options.seed && *options.seed != info.seed) {
      std::fprintf(stderr,
                   "error: checkpoint %s continues seed %u, not --seed %u\n",
                   options.resume.c_str(), info.seed, *options.seed);
      return false;
    }
    seed = info.seed;
    stepsDone = info.step;
    validations = info;
    std::printf("resumed from %s at step %lld\n", options.resume.c_str(),
                static_cast<long long>(stepsDone));
    // Another number of processes goes on from the same step; another
    // global batch changes what a step trains on (said, not refused).
    if (info.processes > 0 && leads() &&
        (info.processes != processes() || info.globalBatch != globalBatch()))
      std::printf("note: the checkpoint was written by %d process%s with a "
                  "global batch of %lld sentences; this run has %d with %lld%s\n",
                  info.processes, info.processes == 1 ? "" : "es",
                  static_cast<long long>(info.globalBatch), processes(),
                  static_cast<long long>(globalBatch()),
                  info.globalBatch == globalBatch()
                      ? " (the same batches)"
                      : ": the steps to come train on other batches");
    return true;
  }

  int processes() const { return group ? group->size() : 1; }
  /// Sentences of one update over every process (the largest bucket's).
  int64_t globalBatch() const {
    return model.buckets[model.numBuckets - 1].batchSize * processes() *
           std::max<int64_t>(options.updateFreq, 1);
  }

  /// Writes the state to `path`, only when it is finite (a diverged run
  /// must not replace a good checkpoint). False after a message.
  bool save(int64_t step, const std::string &path) {
    if (!leads())
      return true; // rank 0 writes the run's checkpoints
    if (model.device) {
      model.device->download(memory.state());
      // Garbage must not replace a good checkpoint.
      if (!deviceOk("before saving " + path))
        return false;
    }
    if (const char *variable = memory.firstNonFinite()) {
      std::fprintf(stderr,
                   "error: %s holds a NaN or an infinity at step %lld: %s is "
                   "not written (what is there is kept)\n",
                   variable, static_cast<long long>(step), path.c_str());
      return false;
    }
    CheckpointInfo info = validations;
    info.model = model.name;
    info.config = memory.configText();
    info.step = step;
    info.seed = seed;
    info.data = data.describe();
    info.manifest = model.manifest ? model.manifest : "";
    info.processes = processes();
    info.globalBatch = globalBatch();
    std::vector<CheckpointTensor> tensors = memory.tensors();
    if (std::string why = writeCheckpoint(path, info, tensors); !why.empty()) {
      std::fprintf(stderr, "error: %s\n", why.c_str());
      return false;
    }
    std::printf("saved checkpoint %s at step %lld\n", path.c_str(),
                static_cast<long long>(step));
    return true;
  }
  Decoding decoding() const {
    return options.fullDecoding ? Decoding::Full : Decoding::Incremental;
  }
  /// Saves the checkpoint and, with --keep-last, keeps it in the history.
  /// Every process calls it (a sharded optimizer's moments come together).
  bool save(int64_t step) {
    if (sharded)
      sharded->gatherMoments();
    bool saved = save(step, checkpointPath);
    if (sharded)
      sharded->releaseMoments();
    if (!saved)
      return false;
    if (options.keepLast == 0 || !leads())
      return true;
    std::string why = keepInHistory(checkpointPath, step, options.keepLast);
    if (!why.empty())
      std::fprintf(stderr, "error: %s\n", why.c_str());
    return why.empty();
  }

  /// Validation loss, perplexity and BLEU on the validation set; keeps
  /// <checkpoint>.best when the validation is the best (--best-by) and stops
  /// after --patience validations that are not.
  AfterStep validate(int64_t step) {
    // A best checkpoint needs the moments whole (rank 0 decides alone).
    if (sharded)
      sharded->gatherMoments();
    AfterStep next = validateOnFirst(step);
    if (sharded)
      sharded->releaseMoments();
    return next;
  }
  AfterStep validateOnFirst(int64_t step) {
    if (!leads())
      return AfterStep::Continue; // rank 0's verdict is shared by the loop
    std::vector<SentencePair> pairs =
        data.heldOut(options.validSentences.value_or(data.validationSize()));
    BeamOptions search{options.validBeam.value_or(1), options.alpha,
                       decoding()};
    std::optional<ValidationResult> result = runtime::validate(
        model, memory.state(), memory.arena(), pairs, data, search);
    if (!deviceOk("while validating at step " + std::to_string(step)))
      return AfterStep::Fail;
    // Stopped by Ctrl-C: the loop saves this step's state and ends.
    if (!result)
      return pendingInterrupt() ? AfterStep::Continue : AfterStep::Fail;
    std::printf("%s\n", result->format(step, search.beam).c_str());
    double loss = result->loss.perTokenLoss();
    if (metrics.isOpen() &&
        !metrics.write(MetricsRecord("valid", step)
                           .add("loss", loss)
                           .add("ppl", std::exp(loss))
                           .add("bleu", result->bleu.score)
                           .add("tokens", result->loss.tokens)
                           .add("sentences", result->sentences)))
      return AfterStep::Fail;
    bool byLoss = options.bestBy == TrainOptions::BestBy::Loss;
    ValidationVerdict verdict =
        recordValidation(validations, loss, result->bleu.score, byLoss,
                         options.patience.value_or(0));
    if (verdict == ValidationVerdict::Best)
      return save(step, checkpointPath + ".best") ? AfterStep::Continue
                                                  : AfterStep::Fail;
    if (verdict == ValidationVerdict::NotBest)
      return AfterStep::Continue;
    std::printf("stopping early at step %lld: no better %s in the last %lld "
                "validation(s) (--patience)\n",
                static_cast<long long>(step), byLoss ? "loss" : "BLEU",
                static_cast<long long>(validations.staleValidations));
    return AfterStep::Stop;
  }

  /// Trains up to --steps; returns the exit code, -1 to go on.
  int train() {
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
    loop.schedule = {model.scheduleDModel, model.scheduleWarmup,
                     model.scheduleFactor};
    loop.seed = seed;
    loop.firstStep = stepsDone + 1;
    loop.lastStep = options.steps;
    loop.logEvery = options.logEvery;
    loop.updateFreq = options.updateFreq;
    loop.clipNorm = options.clipNorm;
    loop.lossLog = leads() ? options.lossLog : std::string();
    loop.metrics = metrics.isOpen() ? &metrics : nullptr;
    loop.afterStep = [this](int64_t step) {
      stepsDone = step;
      if ((step % options.logEvery == 0 || step == options.steps) &&
          !checkSameParameters(step))
        return AfterStep::Fail;
      if (options.validEvery > 0 &&
          (step % options.validEvery == 0 || step == options.steps)) {
        AfterStep next = validate(step);
        if (next != AfterStep::Continue)
          return next;
      }
      bool periodic = options.saveEvery > 0 &&
                      step % options.saveEvery == 0 && step != options.steps;
      return !periodic || save(step) ? AfterStep::Continue : AfterStep::Fail;
    };
    loop.onNonFinite = [&backend](const Batch &batch, const StepInput &input) {
      backend.explainNonFinite(batch, input);
    };
    loop.onInterrupt = [this](int64_t step) {
      stepsDone = step;
      return save(step) ? "; continue with --resume " + checkpointPath
                        : std::string();
    };
    int code = runTrainingLoop(loop);
    if (profile)
      profile->print(stdout);
    if (code != 0)
      return code;
    return save(stepsDone) ? -1 : 1;
  }

  /// Greedy translations of held-out sentences: samples and exact match.
  /// False after a message when the GPU failed.
  bool evaluate() {
    if (options.evalSentences == 0 || !leads())
      return true;
    if (!model.buckets[0].predict) {
      std::printf("no evaluation: the model was compiled without @predict\n");
      return true;
    }
    std::vector<SentencePair> pairs = data.heldOut(options.evalSentences);
    if (pairs.empty()) {
      std::printf("no evaluation: no held-out sentences (give "
                  "--valid-source and --valid-target)\n");
      return true;
    }
    std::vector<std::vector<int32_t>> outputs =
        translateGreedy(model, memory.state(), memory.arena(), pairs,
                        decoding());
    if (!deviceOk("while evaluating"))
      return false;
    std::vector<std::vector<int32_t>> sources, targets;
    for (const SentencePair &pair : pairs) {
      sources.push_back(pair.source);
      targets.push_back(pair.target);
    }
    std::vector<std::string> sourceText, outputText, targetText;
    if (!data.texts(sources, sourceText) || !data.texts(outputs, outputText) ||
        !data.texts(targets, targetText))
      return true; // as before: no samples, the run still succeeded
    int64_t exact = 0;
    for (size_t i = 0; i < pairs.size(); ++i) {
      bool right = outputs[i] == pairs[i].target;
      exact += right;
      if (static_cast<int64_t>(i) < options.samples)
        std::printf("  %s  ->  %s  [%s]\n", sourceText[i].c_str(),
                    outputText[i].c_str(),
                    right ? "ok" : ("expected " + targetText[i]).c_str());
    }
    std::printf("exact match on %zu held-out sentences (greedy): %lld/%zu = "
                "%.1f%%\n",
                pairs.size(), static_cast<long long>(exact), pairs.size(),
                100.0 * exact / pairs.size());
    if (data.hasVocabulary())
      std::printf("greedy %s\n",
                  corpusBleu(outputText, targetText).format().c_str());
    return true;
  }
};

/// About 6 FLOPs per trainable parameter and token of the largest bucket
/// (the forward's multiply-add, the backward's two): enough to tell a toy
/// step from a real one (ThreadDefaults.h).
double estimatedStepFlops(const CompiledModel &model) {
  const CompiledBucket &largest = model.buckets[model.numBuckets - 1];
  return 6.0 * static_cast<double>(model.gradientFloats) *
         static_cast<double>(largest.batchSize *
                             std::max(largest.sourceLength, largest.targetLength));
}

} // namespace

int trainMain(int argc, char **argv, ProcessGroup *group);

int main(int argc, char **argv) {
  chooseThreadDefaults(argv, estimatedStepFlops(kCompiledModel));
  // Before the first thread (MPI's, OpenMP's, CUDA's) exists, so that all
  // of them leave SIGINT and SIGTERM to the one thread that waits for them.
  watchInterruptSignals();
  // Under mpirun, one of a data-parallel run's processes (after the thread
  // defaults, which may restart the program).
  std::unique_ptr<ProcessGroup> group;
  if (!joinProcessGroup(argc, argv, group))
    return 1;
  if (group && group->rank() != 0)
    std::freopen("/dev/null", "w", stdout); // rank 0 logs; errors stay
  int code = trainMain(argc, argv, group.get());
  // A process that stops alone would leave the others waiting for it; an
  // interrupt (128 + the signal) stops them all at the same step.
  if (group && code != 0 && code < 128)
    group->abort(code);
  return code;
}

int trainMain(int argc, char **argv, ProcessGroup *group) {
  const CompiledModel &model = kCompiledModel;
  TrainOptions options;
  int exitCode = 0;
  if (!parseTrainOptions(argc, argv, options, exitCode))
    return exitCode;
  if (options.printVersion) {
    std::printf("%s", model.manifest ? model.manifest : "");
    return 0;
  }
  if (model.device) {
    std::string why;
    if (!model.device->open(why)) {
      std::fprintf(stderr, "error: no usable GPU (%s); %s needs one\n",
                   why.c_str(), model.name);
      return 1;
    }
    if (!deviceOk("while opening the GPU"))
      return 1;
  }
  std::unique_ptr<ModelState> allocated = ModelState::allocate(model);
  if (!allocated)
    return 1;
  ModelState &memory = *allocated;
  CheckpointInfo resumed;
  if (!options.resume.empty()) {
    if (!loadCheckpoint(options, memory, resumed))
      return 1;
    if (const char *variable = memory.firstNonFinite()) {
      std::fprintf(stderr,
                   "error: checkpoint %s holds a NaN or an infinity in %s: "
                   "it cannot be resumed from\n",
                   options.resume.c_str(), variable);
      return 1;
    }
    if (!checkManifest(options, model, resumed))
      return 1;
    // Without data flags, a resumed run goes on with the checkpoint's task.
    if (!options.task && options.trainSource.empty() &&
        resumed.data.starts_with("task "))
      options.task = parseTask(resumed.data.substr(5));
  }
  if (!options.translate.empty()) {
    if (group && group->rank() != 0)
      return 0; // one translation is enough
    if (model.device) {
      model.device->upload(memory.state());
      if (!deviceOk("while uploading the parameters"))
        return 1;
    }
    int code = translateText(model, options, memory);
    return deviceOk("while translating") ? code : 1;
  }
  std::unique_ptr<TrainingData> data = openTrainingData(options, model);
  if (!data)
    return 1;
  if (options.validEvery > 0 && !model.buckets[0].predict) {
    std::fprintf(stderr, "error: --valid-every needs @predict, and %s was "
                         "compiled without it\n", model.name);
    return 1;
  }
  if (options.validEvery > 0 && data->validationSize() == 0) {
    std::fprintf(stderr, "error: --valid-every needs a validation set: "
                         "--valid-data, or --valid-source and "
                         "--valid-target\n");
    return 1;
  }

  Run run{model, options, *data, memory};
  run.group = group;
  std::optional<ShardedOptimizer> sharded;
  if (options.shardOptimizer) {
    if (!group)
      std::printf("note: --shard-optimizer shares the optimizer between the "
                  "processes of mpirun; one process keeps it whole\n");
    else if (model.device || options.updateFreq > 1) {
      std::fprintf(stderr, "error: --shard-optimizer runs on CPU programs and "
                           "without --update-freq\n");
      return 1;
    } else {
      sharded.emplace(*group);
      sharded->activate();
      run.sharded = &*sharded;
    }
  }
  run.checkpointPath = !options.checkpoint.empty() ? options.checkpoint
                       : !options.resume.empty()   ? options.resume
                                                   : std::string(argv[0]) + ".ckpt";
  // From the claim on, the run owns its checkpoint path (a lock file): a
  // signal ends it through the training loop, which releases the lock and
  // exits with 128 + the signal, never by the signal's default action.
  installInterruptHandlers();
  // Owned from the start (a lock; regular files only), so that a second run
  // on the same path is refused now, not at its first save.
  for (const std::string &path :
       {run.checkpointPath, options.validEvery > 0
                                ? run.checkpointPath + ".best"
                                : std::string()})
    if (!path.empty() && run.leads())
      if (std::string why = claimCheckpoint(path); !why.empty()) {
        std::fprintf(stderr, "error: %s\n", why.c_str());
        return 1;
      }
  run.seed = options.seed.value_or(1);
  if (!options.metrics.empty() && run.leads() &&
      !run.metrics.open(options.metrics))
    return 1;
  if (!options.resume.empty() ? !run.resume(resumed) : !memory.initialize(run.seed))
    return 1;
  if (model.device) {
    model.device->upload(memory.state());
    if (!deviceOk("while uploading the parameters"))
      return 1;
  }
  std::string threads = describeThreads();
  if (group)
    threads += std::string(threads.empty() ? "" : "; ") +
               std::to_string(group->size()) +
               " processes (data parallel: a global batch of " +
               std::to_string(run.globalBatch() /
                              std::max<int64_t>(options.updateFreq, 1)) +
               ")";
  std::printf("%s: %s, batch %lld, seed %u, %lld steps; state %.2f MiB, "
              "arena %lld bytes (%.2f MiB)%s%s\n",
              model.name, data->describe().c_str(),
              static_cast<long long>(model.buckets[model.numBuckets - 1].batchSize),
              run.seed,
              static_cast<long long>(options.steps),
              model.stateFloats * 4.0 / (1 << 20),
              static_cast<long long>(model.arenaBytes),
              model.arenaBytes / double(1 << 20), threads.empty() ? "" : "; ",
              threads.c_str());

  if (run.stepsDone < options.steps) {
    if (int code = run.train(); code >= 0)
      return code;
  } else {
    std::printf("the checkpoint is at step %lld, --steps is %lld: nothing "
                "to train\n",
                static_cast<long long>(run.stepsDone),
                static_cast<long long>(options.steps));
  }
  if (!options.dumpParameters.empty()) {
    if (run.sharded)
      run.sharded->gatherMoments(); // rank 0's dump holds every moment
    if (model.device) {
      model.device->download(memory.state());
      if (!deviceOk("before dumping the parameters"))
        return 1;
    }
    // Each process its own file, so that they can be compared.
    std::string path = options.dumpParameters;
    if (group && group->rank() != 0)
      path += ".rank" + std::to_string(group->rank());
    if (!memory.dumpParameters(path))
      return 1;
  }
  return run.evaluate() ? 0 : 1;
}
