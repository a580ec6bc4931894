//===- Validation.cpp - a validation pass over held-out pairs -------------===//
#include "runtime/program/decode/Validation.h"

#include "runtime/program/Progress.h"
#include "runtime/program/train/Interrupt.h"

#include <cmath>
#include <cstdio>

namespace tgc::runtime {

std::string ValidationResult::format(int64_t step, int64_t beam) const {
  char head[160];
  std::snprintf(head, sizeof head,
                "valid step %lld: loss %.4f  ppl %.3f  on %lld tokens of "
                "%lld sentences; ",
                static_cast<long long>(step), loss.perTokenLoss(),
                std::exp(loss.perTokenLoss()),
                static_cast<long long>(loss.tokens),
                static_cast<long long>(sentences));
  std::string search =
      beam > 1 ? "beam " + std::to_string(beam) + " " : std::string("greedy ");
  return head + search + bleu.format();
}

ValidationVerdict recordValidation(CheckpointInfo &history, double loss,
                                   double bleu, bool byLoss, int64_t patience,
                                   int64_t step, int64_t replayUntil) {
  // A NaN (or infinite) validation is never the best: as the first, it was
  // "lower" than none, saved as .best, and no later one could beat it.
  const bool finite = std::isfinite(loss) && std::isfinite(bleu);
  bool lowerLoss =
      finite && (history.bestLoss < 0 || loss < history.bestLoss);
  bool higherBleu = finite && bleu > history.bestBleu;
  if (lowerLoss)
    history.bestLoss = loss;
  if (higherBleu)
    history.bestBleu = bleu;
  if (byLoss ? lowerLoss : higherBleu) {
    history.staleValidations = 0;
    return ValidationVerdict::Best;
  }
  if (replayUntil > 0 && step <= replayUntil) {
    if (step == replayUntil)
      history.staleValidations = 0;
    return ValidationVerdict::NotBest;
  }
  ++history.staleValidations;
  return patience > 0 && history.staleValidations >= patience
             ? ValidationVerdict::Stop
             : ValidationVerdict::NotBest;
}

bool validationInterrupted() {
  if (!pendingInterrupt())
    return false;
  std::fprintf(stderr, "validation stopped by %s\n",
               signalName(pendingInterrupt()));
  return true;
}

std::optional<ValidationResult>
validate(const CompiledModel &model, float *state, char *arena,
         std::span<const SentencePair> pairs, const TrainingData &data,
         const BeamOptions &search) {
  // A signal stops the validation at the next batch; the training loop's
  // own interrupt handling takes it from there.
  InterruptScope scope("validating", /*returns=*/true);
  noteProgress(); // the pairs are drawn; decoding signs as it goes
  ValidationResult result;
  result.sentences = static_cast<int64_t>(pairs.size());
  result.loss = validationLoss(model, state, arena, pairs);
  if (validationInterrupted())
    return std::nullopt;
  std::vector<std::vector<int32_t>> outputs, targets;
  if (search.beam > 1) {
    std::vector<std::vector<int32_t>> sources;
    for (const SentencePair &pair : pairs)
      sources.push_back(pair.source);
    std::string error;
    outputs = translateBeam(model, state, arena, sources, search, error);
    if (!error.empty()) {
      std::fprintf(stderr, "error: validation: %s\n", error.c_str());
      return std::nullopt;
    }
  } else {
    outputs = translateGreedy(model, state, arena, pairs, search.decoding);
  }
  if (validationInterrupted())
    return std::nullopt;
  for (const SentencePair &pair : pairs)
    targets.push_back(pair.target);
  std::vector<std::string> hypotheses, references;
  if (!data.texts(outputs, hypotheses) || !data.texts(targets, references))
    return std::nullopt;
  noteProgress();
  result.bleu = corpusBleu(hypotheses, references);
  noteProgress();
  return result;
}

} // namespace tgc::runtime
