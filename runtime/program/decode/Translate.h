//===- Translate.h - decoding and validation with the compiled @predict -*- C++ -*-===//
//
// @predict gives the logits of every target position for a batch of
// sources and target prefixes (BOS, then the tokens chosen so far). The
// causal mask makes position t depend on positions <= t only, so the padding
// after a prefix does not change them. A sentence is decoded in the bucket
// with the longest target among those whose source length holds it (the
// output's length is not known before); validation loss uses the smallest
// bucket that holds the pair.
//
// Greedy decoding appends the most likely token (padding and BOS are never
// chosen) until EOS or the bucket's target length. Beam search keeps the
// `beam` best prefixes per sentence by log-probability; a prefix ends when
// EOS is among the `beam` best candidates, and the finished ones compete by
// score / lp, lp = ((5 + length) / 6)^alpha (Wu et al. 2016, as the paper
// does with beam 4, alpha 0.6; length counts EOS). A sentence stops when a
// finished one beats the best live prefix's bound (its score over the
// largest lp). With beam 1 it is greedy decoding (no length penalty, which
// would let a hypothesis that went on past the first EOS win).
//
// Both run the incremental decoder when the model has one (@encode once per
// batch, then @decode_step on each row's newest token; beam search moves
// the self-attention caches' rows with their hypotheses), else @predict on
// every whole prefix per token. Decoding::Full forces the latter; both
// give the same tokens in f32 programs (in bf16 @predict's attention reads
// rounded keys and values, the cache's stays f32: near-ties may differ).
//
// All three poll interruptRequested() (Interrupt.h) once per batch and per
// position: a SIGINT or SIGTERM exits, or, inside a returning
// InterruptScope, makes them return what they have so far.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_TRAIN_TRANSLATE_H
#define TGC_RUNTIME_TRAIN_TRANSLATE_H

#include "runtime/data/Tasks.h"
#include "runtime/program/CompiledStep.h"

#include <span>
#include <string>
#include <vector>

namespace tgc::runtime {

/// How the next token's logits are computed.
enum class Decoding {
  Incremental, ///< @decode_step with caches (if compiled; else Full)
  Full,        ///< @predict over the whole prefix, per token
};

/// The most symbols an output of a source of `symbols` can have: its
/// decoding bucket's target length less EOS's position (0 where no bucket
/// holds it). Both searches end every output there. A beam search decodes
/// in the buckets whose batch holds its `beam` hypotheses, where one holds
/// the source.
int64_t longestOutput(const CompiledModel &model, size_t symbols,
                      int64_t beam = 1);

/// The greedy output (symbols, without EOS) for each pair's source; each
/// source must fit a bucket.
/// `maxRows`: at most this many sentences a decoder call (0: the bucket's
/// batch).
std::vector<std::vector<int32_t>>
translateGreedy(const CompiledModel &model, float *state, char *arena,
                std::span<const SentencePair> pairs,
                Decoding decoding = Decoding::Incremental,
                int64_t maxRows = 0);

struct BeamOptions {
  int64_t beam = 4;
  double alpha = 0.6;
  Decoding decoding = Decoding::Incremental;
  /// At most this many sentences a decoder call (0: as many as the
  /// bucket's batch holds, beam rows each).
  int64_t maxSentences = 0;
};

/// A finished hypothesis: its symbols (without EOS), the sum of its
/// tokens' log-probabilities (EOS included) and that over the length
/// penalty, by which hypotheses rank.
struct ScoredHypothesis {
  std::vector<int32_t> tokens;
  double logProbability = 0, score = 0;
};

/// The `nbest` best finished hypotheses of each source, best first (fewer
/// where the search ended with fewer: it stops once `nbest` finished ones
/// beat every live prefix); nbest <= options.beam.
std::vector<std::vector<ScoredHypothesis>>
translateBeamNBest(const CompiledModel &model, float *state, char *arena,
                   std::span<const std::vector<int32_t>> sources,
                   const BeamOptions &options, int64_t nbest,
                   std::string &error);

/// Beam search outputs for `sources` (symbols each, fitting a bucket's
/// source length). Fails with a message when the beam exceeds a bucket's
/// batch.
std::vector<std::vector<int32_t>>
translateBeam(const CompiledModel &model, float *state, char *arena,
              std::span<const std::vector<int32_t>> sources,
              const BeamOptions &options, std::string &error);

/// Negative log-likelihood of the pairs' targets (plain: no label
/// smoothing, and none of the terms a model may add to the cross-entropy in
/// its training loss) and the tokens it sums over (symbols + EOS).
struct ValidationLoss {
  double nll = 0;
  int64_t tokens = 0;
  double perTokenLoss() const { return tokens ? nll / tokens : 0.0; }
};
ValidationLoss validationLoss(const CompiledModel &model, float *state,
                              char *arena, std::span<const SentencePair> pairs);

/// Adds the negative log-likelihood of `batch`'s targets (bucket
/// `bucketIndex`'s shape) under @predict to `total`.
void addBatchLoss(const CompiledModel &model, int bucketIndex, float *state,
                  char *arena, const Batch &batch, ValidationLoss &total);

/// How a language model picks each next token: greedy (the most likely)
/// when `temperature` is 0, else a draw from softmax(logits / temperature)
/// over the `topK` most likely tokens (0: all) and within those the
/// smallest set whose probability reaches `topP` (1: all). The draws of
/// prompt i come from a generator seeded by (seed, i): the same seed gives
/// the same text, however the prompts are batched.
struct Sampling {
  double temperature = 0.0;
  int64_t topK = 0;
  double topP = 1.0;
  uint32_t seed = 1;
};

/// A language model's continuation of each prompt (no source: the prompt
/// is the start of target_in), until EOS, `maxNewTokens` or the end of the
/// context: with the incremental decoder (@decode_step one position at a
/// time, keys and values cached, the prompt's positions first) where it was
/// compiled and `decoding` allows, else recomputing the whole prefix with
/// @predict per token; both pick the same tokens in f32 (in bf16 near-ties
/// may differ, as for translation). A prompt longer than the
/// context keeps its last context - 1 tokens.
std::vector<std::vector<int32_t>>
continuePrompts(const CompiledModel &model, float *state, char *arena,
                std::span<const std::vector<int32_t>> prompts,
                int64_t maxNewTokens, const Sampling &sampling = {},
                Decoding decoding = Decoding::Incremental);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_TRAIN_TRANSLATE_H
