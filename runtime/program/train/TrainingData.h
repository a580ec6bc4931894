//===- TrainingData.h - where a training binary's batches come from -*- C++ -*-===//
//
// The interface of a run's data, whatever it is: a translation model's
// sentence pairs (PairData.h) or a language model's windows (LmData.h),
// each from a built-in task or from files. Either way batch number i is a
// pure function of (seed, i), so a resumed run sees exactly the batches it
// would have seen. Also what both kinds share: opening a corpus and the
// vocabulary, checked against the model, and sentences as text.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_TRAIN_TRAININGDATA_H
#define TGC_RUNTIME_TRAIN_TRAININGDATA_H

#include "runtime/data/Tasks.h"
#include "runtime/data/TokenCorpus.h"
#include "runtime/program/CompiledStep.h"
#include "runtime/program/train/Options.h"
#include "runtime/program/train/VocabularyTool.h"

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tgc::runtime {

class TrainingData {
public:
  virtual ~TrainingData() = default;
  /// The training batch number `index` (0-based), in one bucket's shape.
  virtual Batch batch(uint32_t seed, uint64_t index) = 0;
  /// Process `rank`'s share of global batch `index` in a data-parallel run
  /// of `processes`, in one bucket's shape. A task's global batch is
  /// `processes` times the bucket's rows, of which each process takes its
  /// consecutive block (the rows one process with the whole batch would
  /// see); a corpus's is `processes` consecutive batches, one each.
  virtual Batch share(uint32_t seed, uint64_t index, int rank, int processes) {
    return batch(seed, index * static_cast<uint64_t>(processes) +
                           static_cast<uint64_t>(rank));
  }
  /// Whether a global batch is whole batches of batch() (a corpus's: the
  /// data goes on from the batches drawn, whatever the processes), not
  /// rows of one generated batch (a task's).
  virtual bool sharesWholeBatches() const { return true; }
  /// Passes over the training data once the first `batches` global batches
  /// of a run of `processes` are drawn (2.5: half of the third); none for a
  /// task, whose batches are generated without end. A function of the
  /// seed and the batch count, as the batches are: a resumed run continues
  /// its epochs.
  virtual std::optional<double> epochsAfter(uint32_t seed, uint64_t batches,
                                            int processes) {
    return std::nullopt;
  }
  /// What a corpus's batches depend on besides its pairs and the seed
  /// ("buckets 4x4x4, 4x8x8, at most 16 tokens a batch"); empty for a task.
  /// A checkpoint records it: a run resumed under another plan goes on
  /// from the same place in the epochs (batchesBefore), not from a count
  /// of the other plan's batches.
  virtual std::string batchPlan() const { return {}; }
  /// The first batch after `epochs` passes over the data (2.5: half of
  /// the third epoch drawn), where epochsAfter has a value.
  virtual uint64_t batchesBefore(uint32_t seed, double epochs) { return 0; }
  /// Up to `count` held-out pairs, the same in every run.
  virtual std::vector<SentencePair> heldOut(int64_t count) = 0;
  /// The held-out pairs validation uses by default: the whole validation
  /// set, or a task's first kTaskValidationPairs held-out sentences (which
  /// may be fewer for a small one: a sentence is held out by its source).
  virtual int64_t validationSize() const = 0;
  /// "task reverse", or the files: what a checkpoint records.
  virtual std::string describe() const = 0;
  /// What the training pairs are, whatever their files are called: equal
  /// for equal data (up to hash collisions). The processes of a
  /// data-parallel run compare it (main/RunAgreement.cpp).
  virtual std::string contentFingerprint() const { return describe(); }
  /// How sentences read: detokenized text with a vocabulary, else their
  /// tokens ("7 seventeen", "s4 s9", "17 4 230"). False after a message
  /// when the vocabulary's tool failed.
  virtual bool texts(const std::vector<std::vector<int32_t>> &sentences,
                     std::vector<std::string> &out) const = 0;
  /// Whether text() is detokenized text that BLEU can score.
  virtual bool hasVocabulary() const { return false; }
  /// The SentencePiece vocabulary the training text is in (its hash, as
  /// TokenCorpus::vocabularyHash and VocabularyTool::hash give it); 0 for
  /// a task's token ids or files of ids. Checkpoints record it.
  virtual uint64_t vocabularyHash() const { return 0; }
  /// A language model's data (LmData.h): validation sums the loss over
  /// validationBatches() and there is nothing to translate.
  virtual bool languageModel() const { return false; }
  /// A language model's validation batches, in the largest bucket's shape:
  /// every window of the validation stream in order, or the held-out
  /// prompts of a task. Empty for a translation model.
  virtual std::vector<Batch> validationBatches() { return {}; }
};

/// The largest of `model`'s buckets (the last): a task's batch shape.
/// Whether `model` is a language model: no source side (its buckets have
/// source length 0; LmData.h).
bool isLanguageModel(const CompiledModel &model);

const CompiledBucket &largestBucket(const CompiledModel &model);

/// Opens a tgc-data corpus for `model`: sentence pairs for a translation
/// model, documents for a language model, of the model's vocabulary;
/// nullopt after a message naming the file.
std::optional<TokenCorpus> openCorpus(const std::string &path,
                                      const CompiledModel &model);

/// A task's sentences as their tokens read ("7 seventeen", "s4 s9").
void taskTexts(Task task, const std::vector<std::vector<int32_t>> &sentences,
               std::vector<std::string> &out);

/// A corpus's sentences as detokenized text with `vocabulary`, else as
/// their ids ("17 4 230"); false after a message when the vocabulary's tool
/// failed.
bool corpusTexts(const VocabularyTool *vocabulary,
                 const std::vector<std::vector<int32_t>> &sentences,
                 std::vector<std::string> &out);


/// Loads --vocab and checks it is the one the model was compiled for; null
/// after a message.
std::unique_ptr<VocabularyTool> openVocabulary(const std::string &path,
                                               const CompiledModel &model);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_TRAIN_TRAININGDATA_H
