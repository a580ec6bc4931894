//===- LmData.h - a language model's training data ---------------*- C++ -*-===//
//
// A language model (a model compiled without source_ids: its buckets have
// source length 0) trains on token windows: a corpus of documents cut into
// windows (LmWindows.h), or without one a built-in task's pairs as prompt
// and continuation (promptRows). Its validation is the loss over every
// validation window (or held-out prompt); it has no BLEU.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_TRAIN_LMDATA_H
#define TGC_RUNTIME_TRAIN_LMDATA_H

#include "runtime/program/train/TrainingData.h"

namespace tgc::runtime {

/// The data `options` ask for, for the language model `model`; nullptr
/// after printing why not.
std::unique_ptr<TrainingData> openLmData(const TrainOptions &options,
                                         const CompiledModel &model);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_TRAIN_LMDATA_H
