//===- TrainingData.cpp - tasks and token-id files as batches ------------===//
#include "runtime/train/TrainingData.h"

#include "runtime/SplitMix64.h"
#include "runtime/TokenFiles.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace tgc::runtime {
namespace {

class TaskData : public TrainingData {
public:
  TaskData(Task task, const BatchShape &shape) : task(task), shape(shape) {}

  Batch batch(uint32_t seed, uint64_t index) override {
    return makeBatch(task, seed, index, shape);
  }
  std::vector<SentencePair> heldOut(int64_t count) override {
    return heldOutPairs(task, count, shape);
  }
  std::string describe() const override {
    return std::string("task ") + taskName(task);
  }
  std::string tokenText(int32_t id) const override {
    return runtime::tokenText(task, id);
  }

private:
  Task task;
  BatchShape shape;
};

class FileData : public TrainingData {
public:
  FileData(ParallelCorpus train, ParallelCorpus valid, std::string files,
           const BatchShape &shape)
      : train(std::move(train)), valid(std::move(valid)),
        files(std::move(files)), shape(shape) {}

  /// Row r of batch i is pair (i * batch + r) of the endless sequence of
  /// epochs, each a permutation of the corpus seeded by (seed, epoch).
  Batch batch(uint32_t seed, uint64_t index) override {
    uint64_t count = train.pairs.size();
    std::vector<SentencePair> rows;
    for (int64_t r = 0; r < shape.batchSize; ++r) {
      uint64_t position = index * shape.batchSize + r;
      const std::vector<uint32_t> &order = epochOrder(seed, position / count);
      rows.push_back(train.pairs[order[position % count]]);
    }
    return packBatch(rows, shape);
  }
  std::vector<SentencePair> heldOut(int64_t count) override {
    count = std::min<int64_t>(count, valid.pairs.size());
    return {valid.pairs.begin(), valid.pairs.begin() + count};
  }
  std::string describe() const override { return files; }
  std::string tokenText(int32_t id) const override { return std::to_string(id); }

private:
  const std::vector<uint32_t> &epochOrder(uint32_t seed, uint64_t epoch) {
    if (order.empty() || epoch != orderEpoch) {
      order.resize(train.pairs.size());
      std::iota(order.begin(), order.end(), 0u);
      // Fisher-Yates with SplitMix64, not std::shuffle, whose results
      // differ between standard libraries.
      SplitMix64 rng((uint64_t{seed} << 32) ^ (epoch * 0x9e3779b97f4a7c15ull));
      for (size_t i = order.size(); i > 1; --i)
        std::swap(order[i - 1], order[rng.next() % i]);
      orderEpoch = epoch;
    }
    return order;
  }

  ParallelCorpus train, valid;
  std::string files;
  BatchShape shape;
  std::vector<uint32_t> order;
  uint64_t orderEpoch = 0;
};

bool readCorpus(const std::string &source, const std::string &target,
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

} // namespace

std::unique_ptr<TrainingData> openTrainingData(const TrainOptions &options,
                                               const BatchShape &shape) {
  if (options.trainSource.empty()) {
    Task task = options.task.value_or(Task::Reverse);
    if (std::string why = validateBatchShape(task, shape); !why.empty()) {
      std::fprintf(stderr, "error: the model cannot take task '%s': %s\n",
                   taskName(task), why.c_str());
      return nullptr;
    }
    return std::make_unique<TaskData>(task, shape);
  }
  ParallelCorpus train, valid;
  if (!readCorpus(options.trainSource, options.trainTarget, shape, train))
    return nullptr;
  if (train.pairs.empty()) {
    std::fprintf(stderr, "error: %s has no pair that fits the model\n",
                 options.trainSource.c_str());
    return nullptr;
  }
  if (!options.validSource.empty() &&
      !readCorpus(options.validSource, options.validTarget, shape, valid))
    return nullptr;
  return std::make_unique<FileData>(
      std::move(train), std::move(valid),
      "files " + options.trainSource + " " + options.trainTarget, shape);
}

} // namespace tgc::runtime
