//===- Run.h - one training run of a generated program ----------*- C++ -*-===//
//
// What a run holds once trainMain (TrainMain.cpp) has set it up: the model,
// its flags, data and state, the checkpoint it owns, the validations so far
// and, in a data-parallel run, its process group. Its phases live in files
// of their own: training (RunTraining.cpp), checkpoints and resuming
// (RunCheckpoints.cpp), validation and the final evaluation
// (RunEvaluation.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_PROGRAM_RUN_H
#define TGC_RUNTIME_PROGRAM_RUN_H

#include "runtime/program/CompiledStep.h"
#include "runtime/program/checkpoint/Checkpoint.h"
#include "runtime/program/decode/Translate.h"
#include "runtime/program/main/StepProfile.h"
#include "runtime/program/parallel/ProcessGroup.h"
#include "runtime/program/parallel/ShardedOptimizer.h"
#include "runtime/program/train/Divergence.h"
#include "runtime/program/train/Metrics.h"
#include "runtime/program/train/ModelState.h"
#include "runtime/program/train/Options.h"
#include "runtime/program/train/TrainingData.h"
#include "runtime/program/train/TrainingLoop.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace tgc::runtime {

/// The learning-rate schedule `model` declares, decaying to --steps.
WarmupSchedule compiledSchedule(const CompiledModel &model,
                                const TrainOptions &options);
/// That schedule with the run's --lr-scheduler, --warmup, --lr-factor, --lr
/// and --min-lr.
WarmupSchedule runSchedule(const CompiledModel &model,
                           const TrainOptions &options);
/// Why those flags cannot shape this model's schedule (one that does
/// nothing to it, or a minimum not below the peak), or empty. Checked
/// against the schedule in force, not the paper's: GPT-2's is cosine with a
/// peak of its own.
std::string scheduleProblem(const CompiledModel &model,
                            const TrainOptions &options);

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
  /// The step of a <checkpoint>.best saved after the resumed checkpoint's
  /// step (0: none): the validations up to it replay the run that saved it
  /// (rememberSavedBest, recordValidation).
  int64_t savedBestAhead = 0;
  /// Where the resumed checkpoint left the training data (batchesDrawn).
  int64_t resumedStep = 0;
  uint64_t drawnAtResume = 0;
  /// The resumed checkpoint's step is one of this run's validation steps,
  /// and the run that saved it was stopped before validating it.
  bool validationOwed = false;
  /// Whether the run may replace what exists of its checkpoint
  /// (checkReplacedCheckpoints passed); not asked of a resumed run with
  /// nothing to train, which then saves nothing.
  bool replaceChecked = true;
  MetricsFile metrics;
  /// The training loss the loop reports, smoothed (Divergence.h).
  RunningLoss runningLoss;
  /// Data-parallel runs (null: one process); only rank 0 saves.
  ProcessGroup *group = nullptr;
  /// --shard-optimizer: each process holds 1/N of the Adam moments.
  ShardedOptimizer *sharded = nullptr;
  bool leads() const { return !group || group->rank() == 0; }
  /// What the training data holds (TrainingData::contentFingerprint: a
  /// pass over a corpus), computed once.
  const std::string &dataFingerprint() const {
    if (fingerprint.empty())
      fingerprint = data.contentFingerprint();
    return fingerprint;
  }
  mutable std::string fingerprint;

  /// Every --log-every steps and at the end of a data-parallel run: stops
  /// it when the processes' parameters differ (a checksum of the state),
  /// which would mean they no longer train one model. False after a
  /// message, on every process.
  bool checkSameParameters(int64_t step);

  /// Before the first step of a data-parallel run: whether every process
  /// runs the program, data and flags rank 0 does (RunAgreement.cpp). False
  /// on every process, after each says what differs on it.
  bool processesAgree();

  /// Continues `info`'s run if this one would see the same data; false
  /// after a message.
  bool resume(const CheckpointInfo &info);
  /// Takes <checkpoint>.best's validation as the one to beat where it is
  /// better than the resumed checkpoint's.
  void rememberSavedBest();
  /// The validation the resumed run owed (validationOwed), before the
  /// first step; every process takes rank 0's verdict. `which` says what
  /// step it is ("one where this run validates"). `signal`: the SIGINT or
  /// SIGTERM any process got meanwhile (0: none): the run then ends.
  AfterStep owedValidation(const char *which, int &signal);
  /// Ends a run that a signal stopped during its owed validation, before
  /// any step: its step saved again (with the validation, or owing it
  /// still), 128 + the signal.
  int interruptedBeforeTraining(int signal);
  /// A resumed run with nothing left to train whose checkpoint was saved
  /// before its run's final validation (a signal during its last step):
  /// that validation, then the checkpoint again. -1 when the run goes on
  /// to its evaluation, else the exit code.
  int settleFinalValidation();
  /// CheckpointInfo::run of a run that starts afresh now: a hash of all
  /// that shapes its training.
  uint64_t runId() const;

  int processes() const { return group ? group->size() : 1; }
  /// The model's learning-rate schedule with this run's --lr-scheduler,
  /// --lr, --lr-factor, --warmup and --min-lr, decaying to --steps.
  WarmupSchedule learningRates() const {
    return runSchedule(model, options);
  }
  /// The schedule the model declares, decaying to --steps.
  WarmupSchedule modelSchedule() const {
    return compiledSchedule(model, options);
  }
  /// AdamW's weight decay: --weight-decay, else the model's.
  float weightDecay() const {
    return options.weightDecay ? static_cast<float>(*options.weightDecay)
                               : model.weightDecay;
  }
  /// The schedule and, where not 0, AdamW's weight decay: what checkpoints
  /// record and a resume compares ("cosine, peak ..., weight decay 0.1").
  std::string trainingRates() const {
    std::string rates = learningRates().describe();
    if (float decay = weightDecay(); decay != 0) {
      char text[48];
      std::snprintf(text, sizeof text, ", weight decay %g", decay);
      rates += text;
    }
    return rates;
  }
  /// One run-time hyperparameter of the step: its flag, its name in
  /// messages, the model's entry and this run's flag (unset: the model's).
  struct Hyperparameter {
    const char *flag, *name;
    CompiledModel::Hyperparameter model;
    std::optional<double> given;
    float value() const {
      return given ? static_cast<float>(*given) : model.value;
    }
  };
  /// Every run-time hyperparameter, in the order the log names them.
  std::vector<Hyperparameter> hyperparameters() const;
  /// What the step is given: the flags set (the rest are the model's).
  StepHyperparameters stepHyperparameters() const;
  /// The values in force of those the step takes, e.g. "label smoothing
  /// 0.1, adam betas (0.9, 0.98), adam eps 1e-09, dropout 0.1": the startup
  /// line says it, checkpoints record it and a resume compares it.
  /// `theModels`: the model's values instead.
  std::string hyperparameterText(bool theModels = false) const;
  /// Whether a flag set one of them.
  bool ownHyperparameters() const {
    for (const Hyperparameter &h : hyperparameters())
      if (h.given)
        return true;
    return false;
  }
  /// False after a message when a flag sets what the model has none of
  /// (--dropout 0.1 on a model compiled without dropout).
  bool checkHyperparameters() const;
  /// Whether a flag changed the model's schedule.
  bool ownSchedule() const {
    return options.lrScheduler || options.lr || options.lrFactor ||
           options.warmup || options.minLr;
  }
  /// The training data's batches drawn by all processes once `step` is
  /// done: the resumed checkpoint's, then this run's processes' batches
  /// for each update (a corpus resumed on another number of processes, or
  /// with another --update-freq, goes on where it stopped).
  uint64_t batchesDrawn(int64_t step) const {
    step = std::max(step, resumedStep);
    return drawnAtResume + static_cast<uint64_t>(step - resumedStep) *
                               static_cast<uint64_t>(updatesPerStep()) *
                               static_cast<uint64_t>(processes());
  }
  int64_t updatesPerStep() const {
    return std::max<int64_t>(options.updateFreq, 1);
  }
  /// Passes over the training data after `step` (none for a task), a step
  /// of this run (not before its resumed checkpoint's).
  std::optional<double> epochsAfter(int64_t step) const {
    return data.epochsAfter(seed, batchesDrawn(step), 1);
  }
  /// Whether the training data has epochs (a corpus; not a task).
  bool hasEpochs() const { return data.epochsAfter(seed, 0, 1).has_value(); }
  /// Whether the run has trained its --max-epochs.
  bool epochsDone() const {
    std::optional<double> epochs = epochsAfter(stepsDone);
    return options.maxEpochs > 0 && epochs &&
           *epochs >= static_cast<double>(options.maxEpochs);
  }
  /// Whether the run stopped early: --patience validations without a
  /// better one (a resumed run that stopped there trains no further, as the
  /// run that stopped did not).
  bool patienceDone() const {
    return options.patience.value_or(0) > 0 &&
           validations.staleValidations >= *options.patience;
  }
  /// Sentences of one update over every process (the largest bucket's).
  int64_t globalBatch() const {
    return model.buckets[model.numBuckets - 1].batchSize * processes() *
           std::max<int64_t>(options.updateFreq, 1);
  }

  /// What a save did: wrote the file; kept what the file holds because
  /// training has diverged (Divergence.h), said on stderr; or failed, after
  /// an error (a NaN or an infinity in the state, a failed write).
  enum class Saved { Written, Kept, Failed };
  /// Writes the state to `path` unless it is not finite or has diverged
  /// (a diverged run must not replace a good checkpoint). `last`: the run
  /// ends after it, so a diverged state is an error, not a warning.
  Saved save(int64_t step, const std::string &path, bool last);
  /// Why the state has diverged (Divergence.h), or an empty string.
  std::string divergence();
  Decoding decoding() const {
    return options.fullDecoding ? Decoding::Full : Decoding::Incremental;
  }
  /// Saves the checkpoint and, with --keep-last, keeps it in the history.
  /// Every process calls it (a sharded optimizer's moments come together).
  /// False after an error (a kept checkpoint is one when `last`).
  bool save(int64_t step, bool last);
  /// The step and validations this run last wrote to the checkpoint (empty:
  /// none yet): a run that ends at the step it has just saved along
  /// (--patience at a --save-every step, a signal after that save) writes
  /// the same state no second time.
  std::string checkpointHolds;
  std::string heldState(int64_t step) const;

  /// Validation loss, perplexity and BLEU on the validation set; keeps
  /// <checkpoint>.best when the validation is the best (--best-by) and stops
  /// after --patience validations that are not.
  AfterStep validate(int64_t step);
  AfterStep validateOnFirst(int64_t step);
  /// A language model's validation: the loss over its validation batches.
  AfterStep validateLanguageModel(int64_t step);
  /// Records a validation's loss and BLEU (the best by loss with `byLoss`):
  /// saves <checkpoint>.best when it is the best so far, or stops the run
  /// after --patience validations without a better one.
  AfterStep afterValidation(int64_t step, double loss, double bleu,
                            bool byLoss);

  /// Trains up to --steps; returns the exit code, -1 to go on.
  int train();
  /// Whether the steps replay as CUDA graphs: --cuda-graphs, by default on
  /// for one process's GPU program, but for --profile alone (which times
  /// the ops one by one).
  bool usesCudaGraphs() const;
  /// --profile: the profile the steps run through (a GPU program's with
  /// its device's records), or null after a note when it cannot be had.
  StepProfile *startProfile(std::optional<StepProfile> &profile);

  /// Greedy translations of held-out sentences: samples and exact match.
  /// False after a message when the GPU failed.
  bool evaluate();

  /// Rank 0's last work (the final save, --dump-params, the evaluation),
  /// which the other processes wait for as for a validation
  /// (ProcessGroup::beginFirstsWork), from the first call on (later ones
  /// do nothing) to finishRun.
  void beginRunEnd();
  /// Every process's last exchange: whether rank 0's last work went well
  /// (`ok` there). Without a group, `ok`.
  bool finishRun(bool ok);
  bool runEndBegun = false;
};

} // namespace tgc::runtime

#endif // TGC_RUNTIME_PROGRAM_RUN_H
