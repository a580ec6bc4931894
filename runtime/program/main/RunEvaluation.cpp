//===- RunEvaluation.cpp - a run's validations and final evaluation ------===//
//
// --valid-every's validations (loss, perplexity, BLEU, <checkpoint>.best,
// --patience) and, after training, greedy translations of held-out
// sentences: samples, exact match and BLEU. Rank 0 decodes; the training
// loop shares its verdict with the other processes.
//
//===----------------------------------------------------------------------===//
#include "runtime/program/main/Run.h"

#include "runtime/data/Bleu.h"
#include "runtime/program/decode/Validation.h"
#include "runtime/program/Progress.h"
#include "runtime/program/main/CompiledStepBackend.h"
#include "runtime/program/train/Interrupt.h"
#include "runtime/program/train/LmWindows.h"
#include "runtime/program/train/StatusLine.h"

#include <cmath>
#include <csignal>
#include <cstdio>
#include <optional>
#include <vector>

namespace tgc::runtime {

AfterStep Run::owedValidation(const char *which, int &signal) {
  std::printf("note: step %lld, %s, was saved before its validation: "
              "validating it %s\n",
              static_cast<long long>(stepsDone), which,
              stepsDone < options.steps && !epochsDone() ? "first" : "now");
  std::fflush(stdout); // said before the wait (a log read through a pipe)
  if (group) // every process is here before rank 0 validates at length
    group->beginFirstsWork("the start of the resumed run");
  // Its step is on disk already (the run resumed it): a record that fails
  // fails the run, with nothing to save.
  AfterStep next = validate(stepsDone);
  if (next == AfterStep::FailAfterSaving)
    next = AfterStep::Fail;
  if (group) {
    double votes[2] = {next == AfterStep::Fail ? 1.0 : 0.0,
                       next == AfterStep::Stop ? 1.0 : 0.0};
    group->sumAfterFirstsWork(votes, 2, "the validation the resumed run owed");
    next = votes[0] > 0   ? AfterStep::Fail
           : votes[1] > 0 ? AfterStep::Stop
                          : AfterStep::Continue;
  }
  signal = pendingInterrupt();
  if (group) {
    // A signal to any process (mpirun's SIGTERM reaches each at its own
    // time), while it waited for rank 0 too, stops them all here, before
    // any trains a step.
    double signalled = signal ? 1.0 : 0.0;
    group->sum(&signalled, 1, "the signals during the owed validation");
    if (signalled > 0 && !signal)
      signal = SIGTERM;
  }
  return next;
}

int Run::interruptedBeforeTraining(int signal) {
  // Saved again at its step: with the validation when it ran to its end,
  // else owing it still.
  bool saved = save(stepsDone, /*last=*/true);
  if (leads())
    std::fprintf(stderr, "interrupted by %s before step %lld%s\n",
                 signalName(signal), static_cast<long long>(stepsDone + 1),
                 saved ? ("; continue with --resume " + checkpointPath).c_str()
                       : "");
  return 128 + signal;
}

int Run::settleFinalValidation() {
  if (options.validEvery <= 0 || validations.validatedStep < 0 ||
      validations.validatedStep >= stepsDone)
    return -1; // validated, or not validating (or not known)
  int signal = 0;
  AfterStep next = owedValidation("the last of its run", signal);
  if (next == AfterStep::Fail)
    return 1;
  // Rank 0 writes, and its file system decides; save() is every process's.
  bool maySave = replaceChecked;
  if (group) {
    double saves = leads() && replaceChecked ? 1.0 : 0.0;
    group->sum(&saves, 1, "whether the validation is saved");
    maySave = saves > 0;
  }
  if (!maySave) {
    if (leads())
      std::printf("note: the validation is not saved: %s is not the "
                  "--resume file (--checkpoint names where a run goes on)\n",
                  checkpointPath.c_str());
  } else {
    beginRunEnd();
    if (!save(stepsDone, /*last=*/true))
      return 1;
  }
  // Its validation ran to its end, or owes it still.
  if (signal) {
    if (leads())
      std::fprintf(stderr, "interrupted by %s at the end of the run\n",
                   signalName(signal));
    return 128 + signal;
  }
  return -1;
}

void Run::beginRunEnd() {
  if (group && !runEndBegun)
    group->beginFirstsWork("the end of the training");
  runEndBegun = true;
}

bool Run::finishRun(bool ok) {
  if (!group)
    return ok;
  beginRunEnd();
  double failed = ok ? 0.0 : 1.0;
  group->sumAfterFirstsWork(&failed, 1, "the end of the run");
  return failed == 0;
}

AfterStep Run::validate(int64_t step) {
  // A best checkpoint needs the moments whole (rank 0 decides alone).
  if (sharded)
    sharded->gatherMoments();
  AfterStep next = validateOnFirst(step);
  if (sharded)
    sharded->releaseMoments();
  return next;
}

AfterStep Run::validateOnFirst(int64_t step) {
  if (!leads())
    return AfterStep::Continue; // rank 0's verdict is shared by the loop
  clearStatusLine(); // its lines (and any message) are lines of their own
  // A signal while the held-out data is drawn (a task's draw polls it) stops
  // the validation, not the run: the loop saves this step and ends.
  InterruptScope scope("validating", /*returns=*/true);
  if (data.languageModel())
    return validateLanguageModel(step);
  std::vector<SentencePair> pairs =
      data.heldOut(options.validSentences.value_or(data.validationSize()));
  if (validationInterrupted())
    return AfterStep::Continue;
  BeamOptions search{options.validBeam.value_or(1), options.alpha,
                     decoding()};
  std::optional<ValidationResult> result = runtime::validate(
      model, memory.state(), memory.arena(), pairs, data, search);
  if (!deviceOk("while validating at step " + std::to_string(step)))
    return AfterStep::Fail;
  // Stopped by Ctrl-C: the loop saves this step's state and ends. Failed
  // (the text tool, a vocabulary): the state is good, and the loop saves
  // it before the run ends with the error.
  if (!result)
    return pendingInterrupt() ? AfterStep::Continue
                              : AfterStep::FailAfterSaving;
  std::printf("%s\n", result->format(step, search.beam).c_str());
  double loss = result->loss.perTokenLoss();
  if (metrics.isOpen() &&
      !metrics.write(MetricsRecord("valid", step)
                         .add("loss", loss)
                         .add("ppl", std::exp(loss))
                         .add("bleu", result->bleu.score)
                         .add("tokens", result->loss.tokens)
                         .add("sentences", result->sentences)))
    return AfterStep::FailAfterSaving; // the loop saves the step
  return afterValidation(step, loss, result->bleu.score,
                         options.bestBy == TrainOptions::BestBy::Loss);
}

AfterStep Run::afterValidation(int64_t step, double loss, double bleu,
                               bool byLoss) {
  validations.validatedStep = step;
  const double bestLoss = validations.bestLoss, bestBleu = validations.bestBleu;
  ValidationVerdict verdict =
      recordValidation(validations, loss, bleu, byLoss,
                       options.patience.value_or(0), step, savedBestAhead);
  if (verdict == ValidationVerdict::Best) {
    Saved saved = save(step, checkpointPath + ".best", /*last=*/false);
    // Not written (the state is not finite, or diverged): the .best on disk
    // is still the best, and a later validation must beat it, not this one.
    if (saved == Saved::Kept) {
      validations.bestLoss = bestLoss;
      validations.bestBleu = bestBleu;
    }
    return saved == Saved::Failed ? AfterStep::Fail : AfterStep::Continue;
  }
  if (verdict == ValidationVerdict::NotBest)
    return AfterStep::Continue;
  std::printf("stopping early at step %lld: no better %s in the last %lld "
              "validation(s) (--patience)\n",
              static_cast<long long>(step), byLoss ? "loss" : "BLEU",
              static_cast<long long>(validations.staleValidations));
  return AfterStep::Stop;
}

AfterStep Run::validateLanguageModel(int64_t step) {
  ValidationLoss loss;
  std::vector<Batch> batches = data.validationBatches();
  if (validationInterrupted())
    return AfterStep::Continue; // the loop saves this step and ends
  for (const Batch &batch : batches) {
    if (validationInterrupted())
      return AfterStep::Continue;
    addBatchLoss(model, model.numBuckets - 1, memory.state(), memory.arena(),
                 batch, loss);
  }
  if (!deviceOk("while validating at step " + std::to_string(step)))
    return AfterStep::Fail;
  double perToken = loss.perTokenLoss();
  std::printf("valid step %lld: loss %.4f  ppl %.3f  on %lld tokens of %zu "
              "batches\n",
              static_cast<long long>(step), perToken, std::exp(perToken),
              static_cast<long long>(loss.tokens), batches.size());
  if (metrics.isOpen() &&
      !metrics.write(MetricsRecord("valid", step)
                         .add("loss", perToken)
                         .add("ppl", std::exp(perToken))
                         .add("tokens", loss.tokens)))
    return AfterStep::FailAfterSaving; // the loop saves the step
  // A language model has no BLEU: the best is the lowest loss.
  return afterValidation(step, perToken, 0.0, /*byLoss=*/true);
}

bool Run::evaluate() {
  if (options.evalSentences == 0 || !leads())
    return true;
  if (!model.buckets[0].predict) {
    std::printf("no evaluation: the model was compiled without @predict\n");
    return true;
  }
  std::vector<SentencePair> pairs = data.heldOut(options.evalSentences);
  noteProgress(); // drawn; decoding signs as it goes
  if (pairs.empty()) {
    std::printf(data.languageModel()
                    ? "no evaluation: a language model's corpus has no "
                      "held-out prompts (its validation is --valid-data's "
                      "loss)\n"
                    : "no evaluation: no held-out sentences (give "
                      "--valid-source and --valid-target)\n");
    return true;
  }
  std::vector<std::vector<int32_t>> outputs;
  if (data.languageModel()) { // a task's prompts, continued greedily
    std::vector<std::vector<int32_t>> prompts;
    for (const SentencePair &pair : pairs)
      prompts.push_back(promptOf(pair));
    outputs = continuePrompts(model, memory.state(), memory.arena(), prompts,
                              model.buckets[model.numBuckets - 1].targetLength,
                              Sampling{}, decoding());
  } else {
    outputs = translateGreedy(model, memory.state(), memory.arena(), pairs,
                              decoding());
  }
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

} // namespace tgc::runtime
