//===- Validation.h - a validation pass over held-out pairs -----*- C++ -*-===//
//
// What `--valid-every` computes on the validation set: the plain (not label
// smoothed) loss and perplexity of the references, and the BLEU of the
// model's translations (greedy, or beam search with --valid-beam), with the
// compiled @predict and decoder. Which validation is the best, and early
// stopping, are the program's (main/RunEvaluation.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_PROGRAM_VALIDATION_H
#define TGC_RUNTIME_PROGRAM_VALIDATION_H

#include "runtime/data/Bleu.h"
#include "runtime/program/checkpoint/Checkpoint.h"
#include "runtime/program/decode/Translate.h"
#include "runtime/program/train/TrainingData.h"

#include <optional>
#include <span>

namespace tgc::runtime {

struct ValidationResult {
  ValidationLoss loss;
  BleuScore bleu;
  int64_t sentences = 0;
  /// "valid step S: loss L  ppl P  on T tokens of N sentences; greedy BLEU
  /// = ..." (or "beam K BLEU").
  std::string format(int64_t step, int64_t beam) const;
};

/// Where a validation stands among the run's validations so far.
enum class ValidationVerdict {
  Best,    ///< better than every earlier one: keep it (<checkpoint>.best)
  NotBest, ///< not better; training goes on
  Stop,    ///< not better, and --patience validations in a row were not
};

/// Records a validation (its per-token loss and BLEU) at `step` in
/// `history` (the best BLEU and loss so far, -1 before any, and the
/// validations since the best; a checkpoint keeps them across resumes). The
/// best is the highest BLEU, or the lowest loss with `byLoss`; `patience` 0
/// never stops. `replayUntil`: the step of a <checkpoint>.best saved after
/// the resumed checkpoint (0: none), whose best `history` holds already. The
/// run replays the validations that led to it: up to that step one that is
/// not better counts as no stale validation, and at that step (the best's,
/// in the run that saved it) none are stale.
ValidationVerdict recordValidation(CheckpointInfo &history, double loss,
                                   double bleu, bool byLoss, int64_t patience,
                                   int64_t step = 0, int64_t replayUntil = 0);

/// True, after saying "validation stopped by SIG...", when a signal is
/// pending: a validation's loops (and the draw of its data) ask it between
/// batches, and the training loop saves the step and ends.
bool validationInterrupted();

/// Validates `pairs`, translating with `search` (greedy when its beam is
/// 1); nullopt after a message (the beam does not fit a bucket, the
/// vocabulary's tool failed, or a SIGINT/SIGTERM stopped it: then
/// pendingInterrupt() is set).
std::optional<ValidationResult>
validate(const CompiledModel &model, float *state, char *arena,
         std::span<const SentencePair> pairs, const TrainingData &data,
         const BeamOptions &search);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_PROGRAM_VALIDATION_H
