//===- ScoreCorpus.h - the binary's --score mode -----------------*- C++ -*-===//
//
// The loss and perplexity per token of a whole corpus under a checkpoint's
// parameters, nothing trained: what fairseq's eval-lm and validate, and
// Marian's scorer, report for a test set. A language model scores every
// window of the corpus's token stream in order, as its validation does (the
// tokens after the last whole window are left out and counted); a
// translation model scores every sentence pair that fits a bucket (the
// others are counted). The loss is the plain negative log-likelihood:
// no label smoothing, no extra terms of the training loss.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_DECODE_SCORECORPUS_H
#define TGC_RUNTIME_DECODE_SCORECORPUS_H

#include "runtime/program/CompiledStep.h"
#include "runtime/program/train/ModelState.h"
#include "runtime/program/train/Options.h"

namespace tgc::runtime {

/// Scores --score's corpus and prints one line; returns the exit code.
int scoreCorpus(const CompiledModel &model, const TrainOptions &options,
                ModelState &memory);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_DECODE_SCORECORPUS_H
