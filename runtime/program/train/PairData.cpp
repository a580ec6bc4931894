//===- PairData.cpp - sentence pairs as batches ---------------------------===//
#include "runtime/program/train/PairData.h"

#include "runtime/data/TokenCorpus.h"
#include "runtime/data/TokenFiles.h"
#include "runtime/program/train/Batcher.h"
#include "runtime/program/train/Interrupt.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <optional>

namespace tgc::runtime {
namespace {


class TaskData : public TrainingData {
public:
  TaskData(Task task, const BatchShape &shape) : task(task), shape(shape) {}

  Batch batch(uint32_t seed, uint64_t index) override {
    return makeBatch(task, seed, index, shape);
  }
  bool sharesWholeBatches() const override { return false; }
  Batch share(uint32_t seed, uint64_t index, int rank,
              int processes) override {
    BatchShape global = shape;
    global.batchSize *= processes;
    Batch whole = makeBatch(task, seed, index, global);
    Batch part = emptyBatch(shape);
    auto rows = [&](const std::vector<int32_t> &from, std::vector<int32_t> &to,
                    int64_t length) {
      std::copy_n(from.begin() + rank * shape.batchSize * length,
                  shape.batchSize * length, to.begin());
    };
    rows(whole.source, part.source, shape.sourceLength);
    rows(whole.targetIn, part.targetIn, shape.targetLength);
    rows(whole.targetOut, part.targetOut, shape.targetLength);
    return part;
  }
  std::vector<SentencePair> heldOut(int64_t count) override {
    // A Ctrl-C while drawing them ends the program as it would in the
    // evaluation that asked for them, or stops the draw of a validation
    // (whose InterruptScope returns).
    return heldOutPairs(task, count, shape,
                        [] { return interruptRequested(); });
  }
  int64_t validationSize() const override {
    // A task of a small vocabulary or short lengths holds out fewer
    // sentences, or none (a validation of none recorded a loss of 0).
    if (!heldOutCount)
      heldOutCount = static_cast<int64_t>(
          heldOutPairs(task, kTaskValidationPairs, shape, nullptr).size());
    return *heldOutCount;
  }
  std::string describe() const override {
    return std::string("task ") + taskName(task);
  }
  bool texts(const std::vector<std::vector<int32_t>> &sentences,
             std::vector<std::string> &out) const override {
    taskTexts(task, sentences, out);
    return true;
  }

private:
  Task task;
  mutable std::optional<int64_t> heldOutCount;
  BatchShape shape;
};

/// Pairs read from token-id text files.
class VectorPairs : public PairList {
public:
  explicit VectorPairs(std::vector<SentencePair> pairs) : pairs(std::move(pairs)) {}
  size_t size() const override { return pairs.size(); }
  std::span<const int32_t> source(size_t i) const override { return pairs[i].source; }
  std::span<const int32_t> target(size_t i) const override { return pairs[i].target; }

private:
  std::vector<SentencePair> pairs;
};

/// Pairs of a memory-mapped tgc-data corpus: nothing is copied.
class MappedPairs : public PairList {
public:
  explicit MappedPairs(TokenCorpus corpus) : corpus(std::move(corpus)) {}
  size_t size() const override { return corpus.size(); }
  std::span<const int32_t> source(size_t i) const override { return corpus.source(i); }
  std::span<const int32_t> target(size_t i) const override { return corpus.target(i); }

private:
  TokenCorpus corpus;
};

class CorpusData : public TrainingData {
public:
  /// `readFingerprint`: what text files held as read (their pairs that no
  /// bucket takes included); empty: the pairs' own (a .tok corpus keeps
  /// them all).
  CorpusData(const CompiledModel &model, std::unique_ptr<PairList> train,
             std::vector<SentencePair> valid, std::string files,
             std::unique_ptr<VocabularyTool> vocabulary, int64_t maxTokens,
             std::string readFingerprint = {})
      : train(std::move(train)), valid(std::move(valid)),
        files(std::move(files)), vocabulary(std::move(vocabulary)),
        readFingerprint(std::move(readFingerprint)),
        batcher(model, *this->train, maxTokens),
        plan("buckets " + describeBuckets(model) +
             (maxTokens > 0 ? ", at most " + std::to_string(maxTokens) +
                                  " tokens a batch"
                            : "")) {}

  Batch batch(uint32_t seed, uint64_t index) override {
    return batcher.batch(seed, index);
  }
  // A global batch is `processes` of the corpus's (share).
  std::optional<double> epochsAfter(uint32_t seed, uint64_t batches,
                                    int processes) override {
    return batcher.epochsAfter(seed,
                               batches * static_cast<uint64_t>(processes));
  }
  std::string batchPlan() const override { return plan; }
  uint64_t batchesBefore(uint32_t seed, double epochs) override {
    return batcher.batchesBefore(seed, epochs);
  }
  std::vector<SentencePair> heldOut(int64_t count) override {
    count = std::min<int64_t>(count, valid.size());
    return {valid.begin(), valid.begin() + count};
  }
  int64_t validationSize() const override {
    return static_cast<int64_t>(valid.size());
  }
  std::string describe() const override { return files; }
  std::string contentFingerprint() const override {
    if (!readFingerprint.empty())
      return readFingerprint;
    // FNV-1a over every token and pair length (a tenth of a second per
    // hundred million tokens).
    uint64_t hash = 0xcbf29ce484222325ull;
    auto mix = [&hash](uint64_t word) { hash = (hash ^ word) * 0x100000001b3ull; };
    for (size_t i = 0; i < train->size(); ++i)
      for (std::span<const int32_t> side : {train->source(i), train->target(i)}) {
        mix(side.size());
        for (int32_t token : side)
          mix(static_cast<uint32_t>(token));
      }
    return std::to_string(train->size()) + " training pairs, hash " +
           std::to_string(hash);
  }
  bool texts(const std::vector<std::vector<int32_t>> &sentences,
             std::vector<std::string> &out) const override {
    return corpusTexts(vocabulary.get(), sentences, out);
  }
  bool hasVocabulary() const override { return vocabulary != nullptr; }
  uint64_t vocabularyHash() const override { return textVocabulary; }
  Batcher &batches() { return batcher; }
  uint64_t textVocabulary = 0; ///< see TrainingData::vocabularyHash

private:
  std::unique_ptr<PairList> train;
  std::vector<SentencePair> valid;
  std::string files;
  std::unique_ptr<VocabularyTool> vocabulary;
  std::string readFingerprint;
  Batcher batcher;
  std::string plan;
};

/// The longest lengths of any bucket: what the text readers may keep.
BatchShape readerShape(const CompiledModel &model) {
  BatchShape shape{0, 0, 0, static_cast<int32_t>(model.vocabulary)};
  for (int b = 0; b < model.numBuckets; ++b) {
    shape.sourceLength = std::max(shape.sourceLength, model.buckets[b].sourceLength);
    shape.targetLength = std::max(shape.targetLength, model.buckets[b].targetLength);
  }
  return shape;
}

bool readTextCorpus(const std::string &source, const std::string &target,
                    const BatchShape &shape, ParallelCorpus &corpus) {
  if (std::string why = readParallelTokenFiles(source, target, shape, corpus);
      !why.empty()) {
    std::fprintf(stderr, "error: %s\n", why.c_str());
    return false;
  }
  std::printf("%s + %s: %lld pairs", source.c_str(), target.c_str(),
              static_cast<long long>(corpus.pairs.size()));
  if (corpus.skippedEmpty || corpus.skippedTooLong)
    std::printf(" (skipped %lld with an empty side, %lld longer than the "
                "model's lengths %lld/%lld with EOS)",
                static_cast<long long>(corpus.skippedEmpty),
                static_cast<long long>(corpus.skippedTooLong),
                static_cast<long long>(shape.sourceLength),
                static_cast<long long>(shape.targetLength));
  std::printf("\n");
  return true;
}

/// A corpus's pairs that fit the model, copied (validation sets are small).
std::vector<SentencePair> fittingPairs(const CompiledModel &model,
                                       const PairList &pairs) {
  std::vector<SentencePair> kept;
  for (size_t i = 0; i < pairs.size(); ++i)
    if (bucketFor(model, pairs.source(i).size(), pairs.target(i).size()) >= 0)
      kept.push_back({{pairs.source(i).begin(), pairs.source(i).end()},
                      {pairs.target(i).begin(), pairs.target(i).end()}});
  return kept;
}

} // namespace

std::vector<SentencePair> fittingCorpusPairs(const CompiledModel &model,
                                             TokenCorpus corpus,
                                             size_t &skipped) {
  MappedPairs mapped(std::move(corpus));
  std::vector<SentencePair> kept = fittingPairs(model, mapped);
  skipped = mapped.size() - kept.size();
  return kept;
}

std::unique_ptr<TrainingData> openPairData(const TrainOptions &options,
                                           const CompiledModel &model) {
  if (options.trainSource.empty() && options.trainData.empty()) {
    Task task = options.task.value_or(Task::Reverse);
    const CompiledBucket &largest = largestBucket(model);
    BatchShape shape{largest.batchSize, largest.sourceLength,
                     largest.targetLength, static_cast<int32_t>(model.vocabulary)};
    if (std::string why = validateBatchShape(task, shape); !why.empty()) {
      std::fprintf(stderr, "error: the model cannot take task '%s': %s\n",
                   taskName(task), why.c_str());
      return nullptr;
    }
    return std::make_unique<TaskData>(task, shape);
  }
  if (std::string why = batchRowsProblem(model, options.maxTokens);
      !why.empty()) {
    std::fprintf(stderr, "error: %s\n", why.c_str());
    return nullptr;
  }
  std::unique_ptr<VocabularyTool> vocabulary;
  if (!options.vocabulary.empty() &&
      !(vocabulary = openVocabulary(options.vocabulary, model)))
    return nullptr;

  std::unique_ptr<PairList> train;
  std::vector<SentencePair> valid;
  std::string files, readFingerprint;
  // Pairs in the files, before any bucket refuses one (text files: lines
  // with both sides).
  uint64_t trainPairs = 0;
  uint64_t textVocabulary = vocabulary ? vocabulary->hash() : 0;
  if (!options.trainData.empty()) {
    std::optional<TokenCorpus> corpus = openCorpus(options.trainData, model);
    if (!corpus)
      return nullptr;
    if (vocabulary && corpus->vocabularyHash() != vocabulary->hash()) {
      std::fprintf(stderr, "error: %s\n",
                   checkVocabulary(*corpus, vocabulary->hash(),
                                   corpus->vocabularySize(), options.vocabulary)
                       .c_str());
      return nullptr;
    }
    const uint64_t trainHash = corpus->vocabularyHash();
    const uint32_t trainSize = corpus->vocabularySize();
    textVocabulary = trainHash;
    train = std::make_unique<MappedPairs>(std::move(*corpus));
    trainPairs = train->size();
    files = "corpus " + options.trainData;
    if (!options.validData.empty()) {
      std::optional<TokenCorpus> validCorpus = openCorpus(options.validData, model);
      if (!validCorpus)
        return nullptr;
      // Ids of another vocabulary would be validated as these (a BLEU of
      // nothing, and a .best chosen by it).
      if (validCorpus->vocabularyHash() != trainHash) {
        std::fprintf(stderr, "error: %s\n",
                     checkVocabulary(*validCorpus, trainHash, trainSize,
                                     options.trainData)
                         .c_str());
        return nullptr;
      }
      size_t skipped = 0;
      valid = fittingCorpusPairs(model, std::move(*validCorpus), skipped);
      std::printf("%s: %zu validation pairs (skipped %zu longer than every "
                  "bucket)\n",
                  options.validData.c_str(), valid.size(), skipped);
    }
  } else {
    BatchShape shape = readerShape(model);
    ParallelCorpus text, validText;
    if (!readTextCorpus(options.trainSource, options.trainTarget, shape, text))
      return nullptr;
    if (!options.validSource.empty() &&
        !readTextCorpus(options.validSource, options.validTarget, shape,
                        validText))
      return nullptr;
    VectorPairs validPairs(std::move(validText.pairs));
    valid = fittingPairs(model, validPairs);
    train = std::make_unique<VectorPairs>(std::move(text.pairs));
    trainPairs = static_cast<uint64_t>(text.lines - text.skippedEmpty);
    files = "files " + options.trainSource + " " + options.trainTarget;
    readFingerprint = std::to_string(text.lines) + " training pairs, hash " +
                      std::to_string(text.contentHash);
  }
  auto data = std::make_unique<CorpusData>(
      model, std::move(train), std::move(valid), files, std::move(vocabulary),
      options.maxTokens, std::move(readFingerprint));
  data->textVocabulary = textVocabulary;
  Batcher &batcher = data->batches();
  if (batcher.kept() == 0) {
    // A corpus of no pair at all is not a question of sizes.
    if (trainPairs == 0)
      std::fprintf(stderr, "error: %s: no sentence pair to train on\n",
                   files.c_str());
    else
      std::fprintf(stderr, "error: %s: no pair fits the model's buckets (%s)\n",
                   files.c_str(), describeBuckets(model).c_str());
    return nullptr;
  }
  std::printf("batches: %zu pairs in %d bucket%s (%s, batch x source x "
              "target)%s; padding %.1f%% of the first epoch's positions\n",
              batcher.kept(), model.numBuckets, model.numBuckets > 1 ? "s" : "",
              describeBuckets(model).c_str(),
              batcher.skipped()
                  ? (", skipped " + std::to_string(batcher.skipped()) +
                     " longer than every bucket").c_str()
                  : "",
              100.0 * batcher.epochPadding(options.seed.value_or(1)));
  if (options.maxTokens > 0)
    std::printf("%s (the step computes every compiled row)\n",
                describeBatchRows(model, options.maxTokens).c_str());
  return data;
}

} // namespace tgc::runtime
