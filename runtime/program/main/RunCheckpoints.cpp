//===- RunCheckpoints.cpp - a run's checkpoints and its resume -----------===//
//
// What a run saves (rank 0 only, finite states that have not diverged
// only, the sharded moments gathered first, --keep-last's history) and how
// it continues a checkpoint's run: the same data and seed, said when the
// processes or the global batch differ.
//
//===----------------------------------------------------------------------===//
#include "runtime/program/main/Run.h"

#include "runtime/data/TokenCorpus.h"
#include "runtime/program/checkpoint/CheckpointHistory.h"
#include "runtime/program/main/CompiledStepBackend.h"
#include "runtime/program/train/StatusLine.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>
#include <string>
#include <vector>

namespace tgc::runtime {

namespace {

/// "label smoothing was 0.1; this run's is 0.2" for each item of the
/// "; "-separated Run::hyperparameterText()s that differs, by its name.
std::vector<std::string> hyperparameterChanges(const std::string &was,
                                               const std::string &now) {
  auto items = [](const std::string &text) {
    std::vector<std::string> out;
    size_t begin = 0;
    while (begin <= text.size()) {
      size_t end = text.find("; ", begin);
      if (end == std::string::npos)
        end = text.size();
      if (end > begin)
        out.push_back(text.substr(begin, end - begin));
      begin = end + 2;
    }
    return out;
  };
  // An item's name: the words before its value (a digit or '(').
  auto nameOf = [](const std::string &item) {
    size_t at = item.find_first_of("0123456789(");
    return at == std::string::npos || at == 0 ? item : item.substr(0, at - 1);
  };
  std::vector<std::string> changes, before = items(was), after = items(now);
  for (const std::string &old : before) {
    std::string name = nameOf(old);
    std::string current = "none";
    for (const std::string &item : after)
      if (nameOf(item) == name)
        current = item.substr(std::min(item.size(), name.size() + 1));
    std::string value = old.substr(std::min(old.size(), name.size() + 1));
    if (value != current)
      changes.push_back(name + " was " + value + "; this run's is " + current);
  }
  for (const std::string &item : after) {
    bool known = false;
    for (const std::string &old : before)
      known = known || nameOf(old) == nameOf(item);
    if (!known)
      changes.push_back(nameOf(item) + " was not recorded; this run's is " +
                        item.substr(std::min(item.size(),
                                             nameOf(item).size() + 1)));
  }
  return changes;
}

} // namespace

bool Run::resume(const CheckpointInfo &info) {
  // The data is what its files hold, not their names (a corpus moved, or
  // named another way, goes on); other data goes on only when forced, and
  // from its own start.
  const bool sameData = info.dataFingerprint.empty()
                            ? info.data == data.describe()
                            : info.dataFingerprint == dataFingerprint();
  const bool otherData = !sameData;
  if (otherData && !options.forceResume) {
    std::fprintf(stderr,
                 "error: checkpoint %s was trained on %s%s; this run would "
                 "use %s%s (--force-resume to go on with this data)\n",
                 options.resume.c_str(), info.data.c_str(),
                 info.dataFingerprint.empty() ||
                         info.dataFingerprint == info.data
                     ? ""
                     : (" (" + info.dataFingerprint + ")").c_str(),
                 data.describe().c_str(),
                 dataFingerprint() == data.describe()
                     ? ""
                     : (" (" + dataFingerprint() + ")").c_str());
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
  if (!validations.run) // an older checkpoint: its run goes on as a new one
    validations.run = runId();
  resumedStep = info.step;
  validationOwed = options.validEvery > 0 && info.validatedStep >= 0 &&
                   info.step > info.validatedStep &&
                   info.step % options.validEvery == 0;
  drawnAtResume = info.batchesDrawn
                      ? info.batchesDrawn
                      : static_cast<uint64_t>(info.step * updatesPerStep() *
                                              processes()); // older checkpoint
  if (otherData) // its batches from its first on
    drawnAtResume = 0;
  std::printf("resumed from %s at step %lld\n", options.resume.c_str(),
              static_cast<long long>(stepsDone));
  if (otherData && leads())
    std::printf("note: the checkpoint was trained on %s; this run goes on "
                "with %s (--force-resume), from its first batch\n",
                info.data.c_str(), data.describe().c_str());
  else if (info.data != data.describe() && leads())
    std::printf("note: the checkpoint was trained on %s, which holds what "
                "this run's %s does\n",
                info.data.c_str(), data.describe().c_str());
  // Batches of another plan (other buckets, another --max-tokens): a count
  // of them means nothing here; the corpus goes on from the same place in
  // its epochs.
  const bool replanned = !otherData && !info.batchPlan.empty() &&
                         info.epochs >= 0 && hasEpochs() &&
                         info.batchPlan != data.batchPlan();
  if (replanned) {
    drawnAtResume = data.batchesBefore(seed, info.epochs);
    if (leads())
      std::printf("note: the checkpoint's batches were %s; this run's are "
                  "%s: the corpus goes on from the same place, %.3f epochs "
                  "in\n",
                  info.batchPlan.c_str(), data.batchPlan().c_str(),
                  info.epochs);
  }
  // Another number of processes goes on from the same step, a corpus from
  // the batches drawn (batchesDrawn); another global batch changes what a
  // task's step trains on (said, not refused).
  if (info.processes > 0 && leads() &&
      (info.processes != processes() || info.globalBatch != globalBatch()))
    std::printf("note: the checkpoint was written by %d process%s with a "
                "global batch of %lld sentences; this run has %d with %lld%s\n",
                info.processes, info.processes == 1 ? "" : "es",
                static_cast<long long>(info.globalBatch), processes(),
                static_cast<long long>(globalBatch()),
                replanned ? ": the corpus goes on from the same place in "
                            "its epochs"
                : data.sharesWholeBatches()
                    ? ": the corpus goes on from the batches drawn"
                : info.globalBatch == globalBatch()
                    ? " (the same batches)"
                    : ": the steps to come train on other batches");
  // A schedule is a run-time choice: another one goes on (said).
  if (!info.schedule.empty() && info.schedule != trainingRates() &&
      leads())
    std::printf("note: the learning-rate schedule was %s; this run's is %s\n",
                info.schedule.c_str(), trainingRates().c_str());
  // So are the step's hyperparameters: each that changed is named.
  if (!info.hyperparameters.empty() && leads())
    for (const std::string &change :
         hyperparameterChanges(info.hyperparameters, hyperparameterText()))
      std::printf("note: %s\n", change.c_str());
  // With --overwrite too (--resume X.step3000 --overwrite, as the refusal
  // of an existing checkpoint suggests): the .best may hold a better
  // validation than the resumed step's, which a worse one must not replace.
  if (options.validEvery > 0)
    rememberSavedBest();
  return true;
}

uint64_t Run::runId() const {
  // Two runs started alike train alike: one's .best is the other's too.
  // Alike in all that shapes the training: a run that --overwrite started
  // over with another --clip-norm, --update-freq or --max-tokens, on a
  // regenerated corpus under the same names or with another program was
  // taken for the one whose .best it found (its first best was not saved).
  std::string start = std::to_string(seed) + "\n" + data.describe() + "\n" +
                      dataFingerprint() + "\n" + memory.configText() + "\n" +
                      trainingRates() + "\n" + hyperparameterText() + "\n" +
                      (model.manifest ? model.manifest : "") + "\n" +
                      std::to_string(globalBatch()) + " " +
                      std::to_string(options.maxTokens) + " " +
                      std::to_string(options.clipNorm);
  return std::max<uint64_t>(fnv1a64(start), 1);
}

void Run::rememberSavedBest() {
  // <checkpoint>.best may hold a better validation than the resumed state
  // knows of: one saved after its step, by a run that went on from it (and
  // diverged, or was stopped). A validation must beat that one to replace
  // it, as it must beat the resumed checkpoint's own best.
  // Rank 0 validates, writes the .best and decides (the training loop
  // shares its verdict): it alone reads the .best, which may be on its
  // machine alone.
  if (!leads())
    return;
  const std::string best = checkpointPath + ".best";
  struct stat status;
  if (::stat(best.c_str(), &status) != 0 || !S_ISREG(status.st_mode))
    return;
  CheckpointInfo saved;
  if (std::string why = readCheckpointInfo(best, saved); !why.empty()) {
    std::printf("note: %s; a best validation replaces it\n", why.c_str());
    return;
  }
  // Left by another run (one that --overwrite started over since): not
  // this run's best. (0: written before runs were recorded.)
  if (saved.run && saved.run != validations.run) {
    std::printf("note: %s (step %lld) was saved by another run; this run's "
                "first best validation replaces it\n",
                best.c_str(), static_cast<long long>(saved.step));
    return;
  }
  char better[96] = "";
  if (saved.bestLoss >= 0 &&
      (validations.bestLoss < 0 || saved.bestLoss < validations.bestLoss)) {
    validations.bestLoss = saved.bestLoss;
    std::snprintf(better, sizeof better, "loss %.4f", saved.bestLoss);
  }
  // A language model's validations record no BLEU (0).
  if (saved.bestBleu > validations.bestBleu && !data.languageModel()) {
    validations.bestBleu = saved.bestBleu;
    size_t used = std::strlen(better);
    std::snprintf(better + used, sizeof better - used, "%sBLEU %.2f",
                  used ? ", " : "", saved.bestBleu);
  }
  if (!*better)
    return;
  std::printf("note: %s (step %lld) holds a better validation than the "
              "resumed checkpoint knew (%s): only a better one replaces it\n",
              best.c_str(), static_cast<long long>(saved.step), better);
  // Saved by this run's own continuation (stopped before its next save):
  // this run replays the validations up to it, which patience must not
  // count as stale (they were each a best there).
  if (saved.step > stepsDone)
    savedBestAhead = saved.step;
}

std::string Run::divergence() {
  if (std::string why = runningLoss.divergence(); !why.empty())
    return why;
  float value = 0;
  if (const char *parameter = memory.firstBeyond(kParameterBound, value)) {
    char text[256];
    std::snprintf(text, sizeof text, "parameter %s holds %g, beyond +-%g",
                  parameter, value, static_cast<double>(kParameterBound));
    return text;
  }
  return {};
}

std::string Run::heldState(int64_t step) const {
  char text[160];
  std::snprintf(text, sizeof text, "%lld %.17g %.17g %lld %lld",
                static_cast<long long>(step), validations.bestBleu,
                validations.bestLoss,
                static_cast<long long>(validations.staleValidations),
                static_cast<long long>(validations.validatedStep));
  return text;
}

Run::Saved Run::save(int64_t step, const std::string &path, bool last) {
  if (!leads())
    return Saved::Written; // rank 0 writes the run's checkpoints
  // What follows (the save's line, a warning) is a line of its own.
  clearStatusLine();
  const bool toCheckpoint = path == checkpointPath;
  if (last && toCheckpoint && checkpointHolds == heldState(step)) {
    std::printf("checkpoint %s holds step %lld already\n", path.c_str(),
                static_cast<long long>(step));
    return Saved::Kept;
  }
  if (model.device) {
    model.device->download(memory.state());
    // Garbage must not replace a good checkpoint.
    if (!deviceOk("before saving " + path))
      return Saved::Failed;
  }
  if (const char *variable = memory.firstNonFinite()) {
    std::fprintf(stderr,
                 "error: %s holds a NaN or an infinity at step %lld: %s is "
                 "not written (what is there is kept)\n",
                 variable, static_cast<long long>(step), path.c_str());
    return Saved::Failed;
  }
  if (std::string why = divergence(); !why.empty()) {
    std::fprintf(stderr,
                 "%s: training has diverged at step %lld (%s): %s is not "
                 "written and keeps what it holds%s\n",
                 last ? "error" : "warning", static_cast<long long>(step),
                 why.c_str(), path.c_str(), last ? "" : "; training goes on");
    return last ? Saved::Failed : Saved::Kept;
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
  info.schedule = trainingRates();
  info.hyperparameters = hyperparameterText();
  info.batchesDrawn = batchesDrawn(step);
  info.batchPlan = data.batchPlan();
  info.dataFingerprint = dataFingerprint();
  info.vocabularyHash = data.vocabularyHash();
  info.epochs = epochsAfter(step).value_or(-1);
  std::vector<CheckpointTensor> tensors = memory.tensors();
  if (std::string why = writeCheckpoint(path, info, tensors); !why.empty()) {
    std::fprintf(stderr, "error: %s\n", why.c_str());
    return Saved::Failed;
  }
  std::printf("saved checkpoint %s at step %lld\n", path.c_str(),
              static_cast<long long>(step));
  if (toCheckpoint)
    checkpointHolds = heldState(step);
  return Saved::Written;
}

bool Run::save(int64_t step, bool last) {
  if (sharded)
    sharded->gatherMoments();
  Saved saved = save(step, checkpointPath, last);
  if (sharded)
    sharded->releaseMoments();
  // The history links the file as it is: only a state just written.
  if (saved != Saved::Written || options.keepLast == 0 || !leads())
    return saved != Saved::Failed;
  std::string why = keepInHistory(checkpointPath, step, options.keepLast);
  if (!why.empty())
    std::fprintf(stderr, "error: %s\n", why.c_str());
  return why.empty();
}

} // namespace tgc::runtime
