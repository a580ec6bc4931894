//===- TrainMain.cpp - the phases of a generated program's run -----------===//
//
// Allocates the state and the arena the compiled model asks for, fills the
// parameters from the seed (runtime/program/train/Initializers.h, as the
// interpreter does) or a checkpoint, runs the step on the data's batches
// with the warmup schedule, logging every --log-every steps, validating
// every --valid-every steps and saving checkpoints, and at the end
// translates held-out sentences greedily with the compiled predict. With
// --translate it translates text with beam search instead
// (TranslateText.h). trainMain reads as the list of these phases; each is a
// function below or a part of Run (Run.h).
//
//===----------------------------------------------------------------------===//
#include "runtime/program/main/TrainMain.h"

#include "common/RunFiles.h"
#include "runtime/program/checkpoint/Checkpoint.h"
#include "runtime/program/checkpoint/ManifestCheck.h"
#include "runtime/data/TokenCorpus.h"
#include "runtime/program/decode/GenerateText.h"
#include "runtime/program/decode/ScoreCorpus.h"
#include "runtime/program/decode/TranslateText.h"
#include "runtime/program/main/CompiledStepBackend.h"
#include "runtime/program/main/ProgramFiles.h"
#include "runtime/program/main/Run.h"
#include "runtime/program/main/ThreadDefaults.h"
#include "runtime/program/parallel/ShardedOptimizer.h"
#include "runtime/program/train/Batcher.h"
#include "runtime/program/train/Interrupt.h"
#include "runtime/program/train/LmData.h"
#include "runtime/program/train/ModelState.h"
#include "runtime/program/train/Options.h"
#include "runtime/program/train/PairData.h"
#include "runtime/program/train/TrainingData.h"
#include "runtime/program/train/VocabularyTool.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <sys/stat.h>

namespace tgc::runtime {
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

/// Whether --resume's checkpoint may go on in this program: its manifest
/// (what made the program that wrote it) differs at most in what does not
/// change the model, or --force-resume. False after a message; a note only
/// from rank 0 (`leads`), an error from every process.
bool checkManifest(const TrainOptions &options, const CompiledModel &model,
                   const CheckpointInfo &resumed, bool leads) {
  if (resumed.manifest.empty())
    return true; // written before checkpoints recorded manifests
  ManifestDifference difference =
      compareManifests(resumed.manifest, model.manifest ? model.manifest : "");
  if (difference.empty())
    return true;
  bool refuse = difference.configDiffers && !options.forceResume;
  if (!refuse && !leads)
    return true;
  std::fprintf(stderr, "%s: checkpoint %s was written by another program%s:\n%s",
               refuse ? "error" : "note", options.resume.c_str(),
               refuse ? " with another config (--force-resume to go on)" : "",
               difference.format().c_str());
  return !refuse;
}

/// Opens a GPU model's device; false after a message.
bool openDevice(const CompiledModel &model) {
  std::string why;
  if (!model.device->open(why)) {
    std::fprintf(stderr, "error: no usable GPU (%s); %s needs one\n",
                 why.c_str(), model.name);
    return false;
  }
  return deviceOk("while opening the GPU");
}

/// --resume: the checkpoint's state into `memory` and its record into
/// `resumed`, if it may go on in this program. False after a message.
bool loadForResume(TrainOptions &options, const CompiledModel &model,
                   ModelState &memory, CheckpointInfo &resumed, bool leads) {
  if (!loadCheckpoint(options, memory, resumed))
    return false;
  if (const char *variable = memory.firstNonFinite()) {
    std::fprintf(stderr,
                 "error: checkpoint %s holds a NaN or an infinity in %s: "
                 "it cannot be resumed from\n",
                 options.resume.c_str(), variable);
    return false;
  }
  if (!checkManifest(options, model, resumed, leads))
    return false;
  // Without data flags, a resumed run goes on with the checkpoint's task.
  if (!options.task && options.trainSource.empty() &&
      resumed.data.starts_with("task "))
    options.task = parseTask(resumed.data.substr(5));
  return true;
}

/// The checkpoint's parameters read token ids of the vocabulary it was
/// trained on: text of another vocabulary (the same size, so that the
/// compiled model takes it), or any text after a task's ids, gave words
/// without meaning and exit 0. An empty string, or why --translate,
/// --generate or --score must not run (files they cannot open are left to
/// them to report).
std::string trainedVocabularyProblem(const TrainOptions &options,
                                     const CompiledModel &model,
                                     const CheckpointInfo &trained) {
  std::string error;
  const std::string what = !options.score.empty()
                               ? "--score " + options.score
                               : "--vocab " + options.vocabulary;
  if (trained.data.starts_with("task "))
    return "checkpoint " + options.resume + " was trained on the token ids "
           "of " + trained.data + ", which are no words of " + what;
  uint64_t given = 0;
  if (!options.score.empty()) {
    std::optional<TokenCorpus> corpus = TokenCorpus::open(options.score, error);
    if (!corpus)
      return "";
    given = corpus->vocabularyHash();
  } else {
    std::unique_ptr<VocabularyTool> vocabulary = VocabularyTool::open(
        options.vocabulary, model.toolsDirectory ? model.toolsDirectory : "",
        model.vocabulary, error);
    if (!vocabulary)
      return "";
    given = vocabulary->hash();
  }
  char hashes[96];
  if (trained.vocabularyHash && given && given != trained.vocabularyHash) {
    std::snprintf(hashes, sizeof hashes, "0x%016" PRIx64 ", not 0x%016" PRIx64,
                  given, trained.vocabularyHash);
    return what + " is text of another vocabulary than checkpoint " +
           options.resume + " was trained on (hash " + hashes + ")";
  }
  return "";
}

/// --translate: the text through beam search (or greedy); --generate: a
/// language model's continuations of prompts; --score: a corpus's loss; on
/// rank 0 alone. Returns the exit code.
int runTranslation(const CompiledModel &model, const TrainOptions &options,
                   ModelState &memory, ProcessGroup *group,
                   const CheckpointInfo &trained) {
  if (group && group->rank() != 0)
    return 0; // one translation is enough
  if (std::string why = trainedVocabularyProblem(options, model, trained);
      !why.empty()) {
    if (!options.forceResume) {
      std::fprintf(stderr, "error: %s (--force-resume to go on)\n", why.c_str());
      return 1;
    }
    std::fprintf(stderr, "note: %s; going on (--force-resume)\n", why.c_str());
  }
  if (model.device) {
    model.device->upload(memory.state());
    if (!deviceOk("while uploading the parameters"))
      return 1;
  }
  int code = !options.score.empty()    ? scoreCorpus(model, options, memory)
             : !options.generate.empty() ? generateText(model, options, memory)
                                         : translateText(model, options, memory);
  return deviceOk(options.score.empty() ? "while decoding" : "while scoring")
             ? code
             : 1;
}

/// The data `options` ask for, able to serve --valid-every; null after a
/// message.
std::unique_ptr<TrainingData> openRunData(const TrainOptions &options,
                                          const CompiledModel &model) {
  // A language model validates its loss over every window of --valid-data:
  // what chooses and searches translations does not apply (it was ignored).
  if (isLanguageModel(model) &&
      (options.validSentences || options.validBeam ||
       options.bestBy == TrainOptions::BestBy::Bleu)) {
    std::fprintf(stderr,
                 "error: %s is a language model: its validation is the loss "
                 "over every window of --valid-data; --valid-sentences, "
                 "--valid-beam and --best-by bleu go with translation\n",
                 model.name);
    return nullptr;
  }
  std::unique_ptr<TrainingData> data = isLanguageModel(model)
                                           ? openLmData(options, model)
                                           : openPairData(options, model);
  if (!data)
    return nullptr;
  if (options.validEvery > 0 && !model.buckets[0].predict) {
    std::fprintf(stderr, "error: --valid-every needs @predict, and %s was "
                         "compiled without it\n", model.name);
    return nullptr;
  }
  if (options.validEvery > 0 && data->validationSize() == 0) {
    const std::string &given = !options.validData.empty()
                                   ? options.validData
                                   : options.validSource;
    if (given.empty() && data->describe().starts_with("task "))
      std::fprintf(stderr,
                   "error: --valid-every: %s holds out no sentence at the "
                   "model's vocabulary and lengths (a sentence is held out "
                   "by its source): give a validation set (--valid-source "
                   "and --valid-target)\n",
                   data->describe().c_str());
    else if (given.empty())
      std::fprintf(stderr, "error: --valid-every needs a validation set: "
                           "--valid-data, or --valid-source and "
                           "--valid-target\n");
    else // given, and empty for this model (it asked for the file again)
      std::fprintf(stderr,
                   "error: --valid-every: the validation set %s gives "
                   "nothing to validate on: %s\n",
                   given.c_str(),
                   data->languageModel()
                       ? "it holds fewer tokens than one window (the "
                         "context and the next token)"
                       : "none of its pairs fits the model's buckets");
    return nullptr;
  }
  return data;
}

/// --shard-optimizer: `sharded` over the run's processes; false after a
/// message where it cannot be.
bool shareOptimizer(Run &run, std::optional<ShardedOptimizer> &sharded) {
  if (!run.options.shardOptimizer)
    return true;
  if (!run.group)
    std::printf("note: --shard-optimizer shares the optimizer between the "
                "processes of mpirun; one process keeps it whole\n");
  else if (run.model.device) {
    std::fprintf(stderr, "error: --shard-optimizer runs on CPU programs; a "
                         "GPU program keeps the optimizer whole\n");
    return false;
  } else if (run.model.gradientFloats > kMaxShardedFloats) {
    std::fprintf(stderr,
                 "error: --shard-optimizer: the model's %lld trainable floats "
                 "are past the %lld that MPI's int counts reach; train "
                 "without it (each process then keeps the optimizer whole)\n",
                 static_cast<long long>(run.model.gradientFloats),
                 static_cast<long long>(kMaxShardedFloats));
    return false;
  } else {
    sharded.emplace(*run.group);
    sharded->activate();
    run.sharded = &*sharded;
  }
  return true;
}

/// Claims the run's checkpoints, opens --metrics and fills the state (from
/// the seed, or goes on from `resumed`), on the device too. False after a
/// message.
bool startRun(Run &run, const char *program, const CheckpointInfo &resumed) {
  const TrainOptions &options = run.options;
  run.checkpointPath = checkpointPathFor(options, program);
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
        return false;
      }
  // Claimed first: a run in progress on the path is the better message. A
  // resumed run with nothing to train (it may just dump or evaluate X.best,
  // which goes on in X) is not asked about a checkpoint that exists and is
  // not the one it resumed: it does not write it.
  struct stat existing;
  run.replaceChecked = options.resume.empty() ||
                       resumed.step < options.steps ||
                       isSameFile(options.resume, run.checkpointPath) ||
                       ::stat(run.checkpointPath.c_str(), &existing) != 0;
  if (run.replaceChecked && run.leads() &&
      !checkReplacedCheckpoints(options, run.checkpointPath))
    return false;
  run.seed = options.seed.value_or(1);
  if (!options.metrics.empty() && run.leads() &&
      !run.metrics.open(options.metrics))
    return false;
  if (!options.resume.empty() ? !run.resume(resumed)
                              : !run.memory.initialize(run.seed))
    return false;
  if (options.resume.empty()) {
    run.validations.run = run.runId();
    if (options.validEvery > 0) // validating: none done yet
      run.validations.validatedStep = 0;
  }
  if (run.model.device) {
    run.model.device->upload(run.memory.state());
    if (!deviceOk("while uploading the parameters"))
      return false;
  }
  return true;
}

/// "batch 4", or the buckets a corpus is batched into (a task fills the
/// largest), and --update-freq's batches per update.
std::string describeBatches(const Run &run) {
  const CompiledModel &model = run.model;
  std::string text =
      model.numBuckets > 1 && run.hasEpochs()
          ? "buckets " + describeBuckets(model) + " (batch x source x target)"
          : "batch " +
                std::to_string(model.buckets[model.numBuckets - 1].batchSize);
  if (run.options.maxTokens > 0)
    text += ", at most " + std::to_string(run.options.maxTokens) +
            " tokens a batch (--max-tokens)";
  if (run.options.updateFreq > 1)
    text += ", " + std::to_string(run.options.updateFreq) +
            " batches an update (--update-freq)";
  return text;
}

/// "1000 steps", and the limits that may end the run sooner.
std::string describeLength(const TrainOptions &options) {
  std::string text = std::to_string(options.steps) + " steps";
  if (options.maxEpochs > 0)
    text += " or " + std::to_string(options.maxEpochs) +
            (options.maxEpochs == 1 ? " epoch" : " epochs");
  if (options.maxSeconds > 0) {
    char time[48];
    std::snprintf(time, sizeof time, " or %lld:%02lld:%02lld of training",
                  static_cast<long long>(options.maxSeconds / 3600),
                  static_cast<long long>(options.maxSeconds / 60 % 60),
                  static_cast<long long>(options.maxSeconds % 60));
    text += time;
  }
  return text;
}

/// The run's first line: the model, data, batches, seed, length, memory and
/// threads (and processes).
void printRunHeader(const Run &run) {
  const CompiledModel &model = run.model;
  const TrainOptions &options = run.options;
  std::string threads = describeThreads();
  if (run.group)
    threads += std::string(threads.empty() ? "" : "; ") +
               std::to_string(run.group->size()) +
               " processes (data parallel: a global batch of " +
               std::to_string(run.globalBatch() /
                              std::max<int64_t>(options.updateFreq, 1)) +
               ")";
  std::printf("%s: %s, %s, seed %u, %s; state %.2f MiB, arena %lld bytes "
              "(%.2f MiB)%s%s\n",
              model.name, run.data.describe().c_str(),
              describeBatches(run).c_str(), run.seed,
              describeLength(options).c_str(),
              model.stateFloats * 4.0 / (1 << 20),
              static_cast<long long>(model.arenaBytes),
              model.arenaBytes / double(1 << 20), threads.empty() ? "" : "; ",
              threads.c_str());
  if (run.ownSchedule())
    std::printf("learning rate: %s (the model's: %s)\n",
                run.learningRates().describe().c_str(),
                run.modelSchedule().describe().c_str());
  if (run.weightDecay() != 0 || options.weightDecay)
    std::printf("weight decay: %g (AdamW; the model's: %g)\n",
                run.weightDecay(), model.weightDecay);
  if (run.ownHyperparameters())
    std::printf("hyperparameters: %s (the model's: %s)\n",
                run.hyperparameterText().c_str(),
                run.hyperparameterText(true).c_str());
  // A corpus of subword ids without its vocabulary: BLEU counts the ids,
  // a figure no other tool's BLEU compares with.
  if (run.data.vocabularyHash() != 0 && !run.data.hasVocabulary() &&
      !run.data.languageModel() &&
      (options.validEvery > 0 || options.evalSentences > 0))
    std::printf("note: BLEU here is over the corpus's subword ids (no "
                "--vocab): give --vocab V.model for BLEU over words, as "
                "tgc-data bleu and sacreBLEU count\n");
}

/// --dump-parameters: every variable, each process to its own file (so
/// that they can be compared). False after a message.
bool dumpRunParameters(Run &run) {
  if (run.sharded)
    run.sharded->gatherMoments(); // rank 0's dump holds every moment
  if (run.model.device) {
    run.model.device->download(run.memory.state());
    if (!deviceOk("before dumping the parameters"))
      return false;
  }
  std::string path = run.options.dumpParameters;
  if (run.group && run.group->rank() != 0)
    path += ".rank" + std::to_string(run.group->rank());
  return run.memory.dumpParameters(path);
}

} // namespace

int trainMain(const CompiledModel &model, int argc, char **argv,
              ProcessGroup *group) {
  TrainOptions options;
  int exitCode = 0;
  bool parsed = parseTrainOptions(argc, argv, options, exitCode);
  if (!parsed && exitCode != 0)
    return exitCode;
  // --help or --version, or --translate, --generate or --score, given to
  // some processes of an mpirun and not to the others: those would wait for
  // them in the first exchange (until the peer timeout). One exchange first
  // says whether every one does the same: prints only (0), decodes (1) or
  // trains (2).
  const bool printsOnly = !parsed || options.printVersion;
  const bool decodes = !options.translate.empty() ||
                       !options.generate.empty() || !options.score.empty();
  if (group && group->size() > 1) {
    uint64_t fewest = 0, most = 0;
    group->minMax(printsOnly ? 0 : decodes ? 1 : 2, fewest, most,
                  "whether every process trains");
    if (fewest != most && !printsOnly) {
      std::fprintf(stderr,
                   "error: rank %d of %d: another process of this run was "
                   "given %s; every process stops\n",
                   group->rank(), group->size(),
                   fewest == 0 ? "--help or --version and runs nothing"
                   : decodes   ? "no --translate, --generate or --score: it "
                                 "trains"
                               : "--translate, --generate or --score: it "
                                 "trains nothing");
      return 2;
    }
  }
  if (!parsed)
    return exitCode;
  if (options.printVersion) {
    std::printf("%s", model.manifest ? model.manifest : "");
    return 0;
  }
  if (std::string why = scheduleProblem(model, options); !why.empty()) {
    std::fprintf(stderr, "error: %s\n", why.c_str());
    return 2;
  }
  if (!checkProgramFiles(options, checkpointPathFor(options, argv[0])))
    return 1;
  if (model.device && !openDevice(model))
    return 1;
  if (options.fusedAttention && model.device &&
      model.device->setFusedAttention)
    model.device->setFusedAttention(true);
  else if (options.fusedAttention)
    std::printf("note: --fused-attention changes the attention of GPU "
                "programs only\n");
  std::unique_ptr<ModelState> allocated = ModelState::allocate(model);
  if (!allocated)
    return 1;
  ModelState &memory = *allocated;
  CheckpointInfo resumed;
  if (!options.resume.empty() &&
      !loadForResume(options, model, memory, resumed,
                     !group || group->rank() == 0))
    return 1;
  if (!options.translate.empty() || !options.generate.empty() ||
      !options.score.empty())
    return runTranslation(model, options, memory, group, resumed);
  std::unique_ptr<TrainingData> data = openRunData(options, model);
  if (!data)
    return 1;

  // Validation's beam search holds a sentence's hypotheses in one batch:
  // refused before the first step, not at the first validation (whose
  // error lost the steps before it).
  if (options.validEvery > 0 && !isLanguageModel(model))
    for (int b = 0; b < model.numBuckets; ++b)
      if (const CompiledBucket &bucket = model.buckets[b];
          options.validBeam.value_or(1) > bucket.batchSize) {
        std::fprintf(stderr,
                     "error: --valid-beam %lld exceeds the batch of bucket "
                     "%lldx%lldx%lld: a beam's hypotheses are rows of one "
                     "batch\n",
                     static_cast<long long>(*options.validBeam),
                     static_cast<long long>(bucket.batchSize),
                     static_cast<long long>(bucket.sourceLength),
                     static_cast<long long>(bucket.targetLength));
        return 2;
      }
  Run run{model, options, *data, memory};
  run.group = group;
  std::optional<ShardedOptimizer> sharded;
  if (!run.checkHyperparameters())
    return 2;
  if (!shareOptimizer(run, sharded) || !startRun(run, argv[0], resumed) ||
      !run.processesAgree())
    return 1;
  printRunHeader(run);

  if (run.epochsDone() || run.patienceDone() ||
      run.stepsDone >= options.steps) {
    if (run.patienceDone())
      std::printf("the checkpoint is at step %lld, after %lld validations "
                  "without a better one (--patience %lld): nothing to "
                  "train\n",
                  static_cast<long long>(run.stepsDone),
                  static_cast<long long>(run.validations.staleValidations),
                  static_cast<long long>(*options.patience));
    else if (run.epochsDone())
      std::printf("the checkpoint is at step %lld, after --max-epochs %lld: "
                  "nothing to train\n",
                  static_cast<long long>(run.stepsDone),
                  static_cast<long long>(options.maxEpochs));
    else
      std::printf("the checkpoint is at step %lld, --steps is %lld: "
                  "nothing to train\n",
                  static_cast<long long>(run.stepsDone),
                  static_cast<long long>(options.steps));
    if (int code = run.settleFinalValidation(); code >= 0)
      return code;
  } else if (int code = run.train(); code >= 0) {
    return code;
  }
  // Rank 0's last work (the others wait as long as it shows progress).
  run.beginRunEnd();
  if (!options.dumpParameters.empty() && !dumpRunParameters(run))
    return 1;
  if (!run.finishRun(run.evaluate()))
    return 1;
  // A signal after the loop's last look (during the final save's last
  // exchange, the parameter dump or an evaluation that polls nothing, as
  // with --eval-sentences 0) still ends the run as interrupted: the
  // checkpoint is whole, but the user asked the run to stop.
  if (int signal = pendingInterrupt()) {
    std::fprintf(stderr,
                 "interrupted by %s at the end of the run (its last "
                 "checkpoint is whole)\n",
                 signalName(signal));
    return 128 + signal;
  }
  return 0;
}

} // namespace tgc::runtime
