//===- LmData.cpp - a language model's training data ---------------------===//
#include "runtime/program/train/LmData.h"

#include "runtime/data/TokenCorpus.h"
#include "runtime/program/train/Interrupt.h"
#include "runtime/program/train/LmWindows.h"
#include "runtime/program/train/VocabularyTool.h"

#include <cstdio>
#include <optional>

namespace tgc::runtime {
namespace {

/// A task's pairs as prompt and continuation: each pair's sides have at
/// most half the context (with their EOS), so that both fit one window.
class LmTaskData : public TrainingData {
public:
  LmTaskData(Task task, const BatchShape &pairShape, int64_t context)
      : task(task), pairShape(pairShape), context(context) {}

  Batch batch(uint32_t seed, uint64_t index) override {
    return rows(taskPairs(makeBatch(task, seed, index, pairShape)));
  }
  bool sharesWholeBatches() const override { return false; }
  Batch share(uint32_t seed, uint64_t index, int rank,
              int processes) override {
    // As a translation model's task: the rows one process with the whole
    // global batch would see, a block each.
    BatchShape global = pairShape;
    global.batchSize *= processes;
    std::vector<SentencePair> all =
        taskPairs(makeBatch(task, seed, index, global));
    std::vector<SentencePair> mine(all.begin() + rank * pairShape.batchSize,
                                   all.begin() + (rank + 1) * pairShape.batchSize);
    return rows(mine);
  }
  std::vector<SentencePair> heldOut(int64_t count) override {
    return heldOutPairs(task, count, pairShape, [] { return interruptRequested(); });
  }
  int64_t validationSize() const override {
    // Fewer held-out sentences, or none, for a small task (PairData.cpp).
    if (!heldOutCount)
      heldOutCount = static_cast<int64_t>(
          heldOutPairs(task, kTaskValidationPairs, pairShape, nullptr).size());
    return *heldOutCount;
  }
  std::string describe() const override {
    return std::string("task ") + taskName(task) + " (prompt, continuation)";
  }
  bool texts(const std::vector<std::vector<int32_t>> &sentences,
             std::vector<std::string> &out) const override {
    taskTexts(task, sentences, out);
    return true;
  }
  bool languageModel() const override { return true; }
  std::vector<Batch> validationBatches() override {
    std::vector<SentencePair> pairs = heldOut(kTaskValidationPairs);
    std::vector<Batch> batches;
    for (size_t first = 0; first < pairs.size();
         first += static_cast<size_t>(pairShape.batchSize))
      batches.push_back(rows(std::span<const SentencePair>(pairs).subspan(
          first, std::min<size_t>(pairShape.batchSize, pairs.size() - first))));
    return batches;
  }

private:
  Batch rows(std::span<const SentencePair> pairs) const {
    return promptRows(pairs, pairShape.batchSize, context,
                      pairShape.vocabulary);
  }

  Task task;
  BatchShape pairShape;
  int64_t context;
  mutable std::optional<int64_t> heldOutCount;
};

/// A corpus of documents in windows, with its validation stream's.
class LmCorpusData : public TrainingData {
public:
  LmCorpusData(TokenCorpus train, std::optional<TokenCorpus> valid,
               int64_t context, int64_t rows,
               std::unique_ptr<VocabularyTool> vocabulary)
      : trainCorpus(std::move(train)), validCorpus(std::move(valid)),
        trainWindows(trainCorpus, context, rows),
        vocabulary(std::move(vocabulary)) {
    if (validCorpus)
      validWindows.emplace(*validCorpus, context, rows);
  }

  const LmWindows &windows() const { return trainWindows; }
  const std::optional<LmWindows> &validation() const { return validWindows; }

  Batch batch(uint32_t seed, uint64_t index) override {
    return trainWindows.batch(seed, index);
  }
  std::optional<double> epochsAfter(uint32_t, uint64_t batches,
                                    int processes) override {
    return trainWindows.epochsAfter(batches * static_cast<uint64_t>(processes));
  }
  std::string batchPlan() const override {
    return std::to_string(lmRows) + " windows of " +
           std::to_string(trainWindows.windowLength()) + " tokens a batch";
  }
  uint64_t batchesBefore(uint32_t, double epochs) override {
    return trainWindows.batchesBefore(epochs);
  }
  std::vector<SentencePair> heldOut(int64_t) override { return {}; }
  int64_t validationSize() const override {
    return validWindows ? static_cast<int64_t>(validWindows->windows()) : 0;
  }
  std::string describe() const override {
    return "corpus " + trainCorpus.path() + " (language model)";
  }
  std::string contentFingerprint() const override {
    uint64_t hash = 0xcbf29ce484222325ull;
    auto mix = [&hash](uint64_t word) { hash = (hash ^ word) * 0x100000001b3ull; };
    for (size_t i = 0; i < trainCorpus.size(); ++i) {
      mix(trainCorpus.target(i).size());
      for (int32_t token : trainCorpus.target(i))
        mix(static_cast<uint32_t>(token));
    }
    return std::to_string(trainCorpus.size()) + " training documents, hash " +
           std::to_string(hash);
  }
  bool texts(const std::vector<std::vector<int32_t>> &sentences,
             std::vector<std::string> &out) const override {
    return corpusTexts(vocabulary.get(), sentences, out);
  }
  bool hasVocabulary() const override { return vocabulary != nullptr; }
  uint64_t vocabularyHash() const override {
    return trainCorpus.vocabularyHash();
  }
  bool languageModel() const override { return true; }
  std::vector<Batch> validationBatches() override {
    std::vector<Batch> batches;
    if (!validWindows)
      return batches;
    for (uint64_t first = 0; first < validWindows->windows();
         first += static_cast<uint64_t>(lmRows))
      batches.push_back(validWindows->inOrder(first));
    return batches;
  }
  int64_t lmRows = 0;

private:
  TokenCorpus trainCorpus;
  std::optional<TokenCorpus> validCorpus;
  LmWindows trainWindows;
  std::optional<LmWindows> validWindows;
  std::unique_ptr<VocabularyTool> vocabulary;
};

} // namespace

std::unique_ptr<TrainingData> openLmData(const TrainOptions &options,
                                         const CompiledModel &model) {
  const CompiledBucket &bucket = largestBucket(model);
  const int64_t context = bucket.targetLength, rows = bucket.batchSize;
  if (!options.trainSource.empty()) {
    std::fprintf(stderr, "error: %s is a language model: it trains on "
                         "--train-data (a corpus of documents, tgc-data "
                         "encode --text) or a --task, not on sentence pairs\n",
                 model.name);
    return nullptr;
  }
  if (options.maxTokens > 0) {
    std::fprintf(stderr, "error: --max-tokens fills sentence pairs into "
                         "buckets: %s is a language model, whose batches are "
                         "%lld windows of %lld tokens\n",
                 model.name, static_cast<long long>(rows),
                 static_cast<long long>(context + 1));
    return nullptr;
  }
  if (options.trainData.empty()) {
    Task task = options.task.value_or(Task::Reverse);
    BatchShape pairShape = promptPairShape(
        {rows, 0, context, static_cast<int32_t>(model.vocabulary)});
    if (std::string why = validateBatchShape(task, pairShape); !why.empty()) {
      std::fprintf(stderr,
                   "error: the model cannot take task '%s' as prompt and "
                   "continuation in its context of %lld: %s\n",
                   taskName(task), static_cast<long long>(context), why.c_str());
      return nullptr;
    }
    return std::make_unique<LmTaskData>(task, pairShape, context);
  }
  std::unique_ptr<VocabularyTool> vocabulary;
  if (!options.vocabulary.empty() &&
      !(vocabulary = openVocabulary(options.vocabulary, model)))
    return nullptr;
  std::optional<TokenCorpus> train = openCorpus(options.trainData, model);
  if (!train)
    return nullptr;
  std::optional<TokenCorpus> valid;
  if (!options.validData.empty() &&
      !(valid = openCorpus(options.validData, model)))
    return nullptr;
  if (valid && valid->vocabularyHash() != train->vocabularyHash()) {
    std::fprintf(stderr, "error: %s\n",
                 checkVocabulary(*valid, train->vocabularyHash(),
                                 train->vocabularySize(), options.trainData)
                     .c_str());
    return nullptr;
  }
  auto data = std::make_unique<LmCorpusData>(std::move(*train), std::move(valid),
                                             context, rows, std::move(vocabulary));
  data->lmRows = rows;
  const LmWindows &windows = data->windows();
  if (windows.windows() == 0) {
    std::fprintf(stderr,
                 "error: %s: %llu tokens with the end-of-document tokens, "
                 "fewer than one window of %lld (the context + 1)\n",
                 options.trainData.c_str(),
                 static_cast<unsigned long long>(windows.streamLength()),
                 static_cast<long long>(context + 1));
    return nullptr;
  }
  std::printf("windows: %llu of %lld tokens from a stream of %llu (%s), %llu "
              "batches of %lld an epoch",
              static_cast<unsigned long long>(windows.windows()),
              static_cast<long long>(context + 1),
              static_cast<unsigned long long>(windows.streamLength()),
              options.trainData.c_str(),
              static_cast<unsigned long long>(windows.batchesPerEpoch()),
              static_cast<long long>(rows));
  if (data->validation())
    std::printf("; validation %llu windows (%s)",
                static_cast<unsigned long long>(data->validation()->windows()),
                options.validData.c_str());
  std::printf("\n");
  return data;
}

} // namespace tgc::runtime
