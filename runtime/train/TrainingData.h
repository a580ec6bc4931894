//===- TrainingData.h - where a training binary's batches come from -*- C++ -*-===//
//
// A built-in task (runtime/Tasks.h) or a user's parallel token-id files
// (runtime/TokenFiles.h). Either way batch number i is a pure function of
// (seed, i), so a resumed run sees exactly the batches it would have seen.
// Files are visited in a new random order every epoch.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_TRAIN_TRAININGDATA_H
#define TGC_RUNTIME_TRAIN_TRAININGDATA_H

#include "runtime/Tasks.h"
#include "runtime/train/Options.h"

#include <memory>
#include <string>
#include <vector>

namespace tgc::runtime {

class TrainingData {
public:
  virtual ~TrainingData() = default;
  /// The training batch number `index` (0-based).
  virtual Batch batch(uint32_t seed, uint64_t index) = 0;
  /// Up to `count` held-out pairs, the same in every run.
  virtual std::vector<SentencePair> heldOut(int64_t count) = 0;
  /// "task reverse", or the files: what a checkpoint records.
  virtual std::string describe() const = 0;
  /// How token `id` reads in a sample.
  virtual std::string tokenText(int32_t id) const = 0;
};

/// The data `options` ask for, for a model of `shape`; nullptr after
/// printing why not (an unusable task, a bad file).
std::unique_ptr<TrainingData> openTrainingData(const TrainOptions &options,
                                               const BatchShape &shape);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_TRAIN_TRAININGDATA_H
