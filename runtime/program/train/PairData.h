//===- PairData.h - a translation model's training data ---------*- C++ -*-===//
//
// A model with a source side trains on sentence pairs: a built-in task
// (runtime/data/Tasks.h) filling the largest bucket, a user's parallel
// token-id files (runtime/data/TokenFiles.h) or a corpus encoded by
// tgc-data (runtime/data/TokenCorpus.h), the files batched by token budget
// into the compiled buckets (Batcher.h). Its validation set is pairs too
// (loss and BLEU). A language model's data is LmData.h.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_TRAIN_PAIRDATA_H
#define TGC_RUNTIME_TRAIN_PAIRDATA_H

#include "runtime/program/train/TrainingData.h"

namespace tgc::runtime {

/// The data `options` ask for, for the translation model `model`; nullptr
/// after printing why not (an unusable task, a bad file, another
/// vocabulary).
std::unique_ptr<TrainingData> openPairData(const TrainOptions &options,
                                           const CompiledModel &model);

/// The sentence pairs of `corpus` that fit a bucket of `model`, copied;
/// `skipped` counts the others.
std::vector<SentencePair> fittingCorpusPairs(const CompiledModel &model,
                                             TokenCorpus corpus,
                                             size_t &skipped);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_TRAIN_PAIRDATA_H
