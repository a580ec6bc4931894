//===- Batcher.cpp - token-budget batches in static buckets --------------===//
#include "runtime/program/train/Batcher.h"

#include "runtime/data/SplitMix64.h"
#include "runtime/program/train/Interrupt.h"

#include <algorithm>
#include <cmath>

namespace tgc::runtime {
namespace {

/// What the sort within a window orders by: the pair's longer side.
size_t pairLength(const PairList &pairs, uint32_t i) {
  return std::max(pairs.source(i).size(), pairs.target(i).size());
}

} // namespace

int bucketFor(const CompiledModel &model, size_t sourceSymbols,
              size_t targetSymbols) {
  int best = -1;
  for (int b = 0; b < model.numBuckets; ++b) {
    const CompiledBucket &bucket = model.buckets[b];
    if (static_cast<int64_t>(sourceSymbols) + 1 > bucket.sourceLength ||
        static_cast<int64_t>(targetSymbols) + 1 > bucket.targetLength)
      continue;
    auto area = [&](int i) {
      return model.buckets[i].sourceLength + model.buckets[i].targetLength;
    };
    if (best < 0 || area(b) < area(best))
      best = b;
  }
  return best;
}

std::string describeBuckets(const CompiledModel &model) {
  std::string text;
  for (int b = 0; b < model.numBuckets; ++b) {
    const CompiledBucket &bucket = model.buckets[b];
    text += (b ? ", " : "") + std::to_string(bucket.batchSize) + "x" +
            std::to_string(bucket.sourceLength) + "x" +
            std::to_string(bucket.targetLength);
  }
  return text;
}

std::vector<int64_t> batchRows(const CompiledModel &model, int64_t maxTokens) {
  std::vector<int64_t> rows;
  for (int b = 0; b < model.numBuckets; ++b) {
    const CompiledBucket &bucket = model.buckets[b];
    int64_t longer = std::max(bucket.sourceLength, bucket.targetLength);
    rows.push_back(maxTokens > 0 ? std::min(bucket.batchSize, maxTokens / longer)
                                 : bucket.batchSize);
  }
  return rows;
}

std::string batchRowsProblem(const CompiledModel &model, int64_t maxTokens) {
  std::vector<int64_t> rows = batchRows(model, maxTokens);
  for (int b = 0; b < model.numBuckets; ++b)
    if (rows[b] < 1) {
      const CompiledBucket &bucket = model.buckets[b];
      return "--max-tokens " + std::to_string(maxTokens) +
             " is smaller than bucket " + std::to_string(bucket.batchSize) +
             "x" + std::to_string(bucket.sourceLength) + "x" +
             std::to_string(bucket.targetLength) + "'s longer length " +
             std::to_string(std::max(bucket.sourceLength,
                                     bucket.targetLength)) +
             ": not one sentence pair fits the budget";
    }
  return "";
}

std::string describeBatchRows(const CompiledModel &model, int64_t maxTokens) {
  std::vector<int64_t> rows = batchRows(model, maxTokens);
  std::string text = "--max-tokens " + std::to_string(maxTokens) + ": ";
  for (int b = 0; b < model.numBuckets; ++b) {
    const CompiledBucket &bucket = model.buckets[b];
    text += (b ? ", " : "") + std::to_string(rows[b]) + " of " +
            std::to_string(bucket.batchSize) + " rows of " +
            std::to_string(bucket.batchSize) + "x" +
            std::to_string(bucket.sourceLength) + "x" +
            std::to_string(bucket.targetLength);
  }
  return text;
}

std::vector<PlannedBatch> planEpoch(const CompiledModel &model,
                                    const PairList &pairs,
                                    std::span<const uint32_t> indices,
                                    uint32_t seed, uint64_t epoch,
                                    size_t window,
                                    std::span<const int64_t> rows) {
  std::vector<uint32_t> order(indices.begin(), indices.end());
  shuffle(order, epochSeed(seed, epoch, 1));
  std::vector<PlannedBatch> batches;
  std::vector<std::vector<uint32_t>> open(model.numBuckets);
  for (size_t begin = 0; begin < order.size(); begin += window) {
    auto first = order.begin() + begin;
    auto last = order.begin() + std::min(order.size(), begin + window);
    std::stable_sort(first, last, [&](uint32_t a, uint32_t b) {
      return pairLength(pairs, a) < pairLength(pairs, b);
    });
    for (auto it = first; it != last; ++it) {
      int bucket = bucketFor(model, pairs.source(*it).size(),
                             pairs.target(*it).size());
      open[bucket].push_back(*it);
      int64_t full =
          rows.empty() ? model.buckets[bucket].batchSize : rows[bucket];
      if (static_cast<int64_t>(open[bucket].size()) == full) {
        batches.push_back({bucket, std::move(open[bucket])});
        open[bucket].clear();
      }
    }
  }
  for (int bucket = 0; bucket < model.numBuckets; ++bucket)
    if (!open[bucket].empty())
      batches.push_back({bucket, std::move(open[bucket])});
  shuffle(batches, epochSeed(seed, epoch, 2));
  return batches;
}

Batch packPlanned(const CompiledModel &model, const PairList &pairs,
                  const PlannedBatch &planned) {
  const CompiledBucket &bucket = model.buckets[planned.bucket];
  Batch batch = emptyBatch({bucket.batchSize, bucket.sourceLength,
                            bucket.targetLength,
                            static_cast<int32_t>(model.vocabulary)});
  for (size_t row = 0; row < planned.rows.size(); ++row)
    packRow(batch, static_cast<int64_t>(row), pairs.source(planned.rows[row]),
            pairs.target(planned.rows[row]));
  return batch;
}

Batcher::Batcher(const CompiledModel &model, const PairList &pairs,
                 int64_t maxTokens)
    : model(model), pairs(pairs), rows(batchRows(model, maxTokens)) {
  for (uint32_t i = 0; i < pairs.size(); ++i)
    if (bucketFor(model, pairs.source(i).size(), pairs.target(i).size()) >= 0)
      indices.push_back(i);
  // About a hundred batches of the largest bucket sort together: enough to
  // group similar lengths, few enough that an epoch's start stays random.
  window = static_cast<size_t>(
      100 * model.buckets[model.numBuckets - 1].batchSize);
}

const std::vector<PlannedBatch> &Batcher::epochPlan(uint32_t seed,
                                                    uint64_t epoch) {
  if (epoch != planEpochIndex || seed != planSeed) {
    plan = planEpoch(model, pairs, indices, seed, epoch, window, rows);
    planEpochIndex = epoch;
    planSeed = seed;
  }
  return plan;
}

void Batcher::countThrough(uint32_t seed, uint64_t epoch) {
  if (seed != planSeed)
    epochStarts.assign(1, 0);
  // Epochs differ in their batch count: they are planned in order (once
  // per run; a plan is a sort of the corpus).
  const size_t first = epochStarts.size();
  while (epochStarts.size() < epoch + 2) {
    uint64_t next = epochStarts.size() - 1;
    pollWalk(first);
    epochStarts.push_back(epochStarts.back() + epochPlan(seed, next).size());
  }
}

void Batcher::pollWalk(size_t first) {
  // Training goes from one epoch to the next and stops after its step; a
  // resumed run may walk many (a forged checkpoint's count, without end),
  // which Ctrl-C must end.
  if (epochStarts.size() > first + 1) {
    InterruptScope scope("finding the checkpoint's place in the corpus",
                         /*returns=*/false);
    interruptRequested();
  }
}

uint64_t Batcher::epochOf(uint32_t seed, uint64_t index) {
  if (seed != planSeed)
    epochStarts.assign(1, 0);
  const size_t first = epochStarts.size();
  while (epochStarts.back() <= index) {
    pollWalk(first);
    countThrough(seed, epochStarts.size() - 1);
  }
  return std::upper_bound(epochStarts.begin(), epochStarts.end(), index) -
         epochStarts.begin() - 1;
}

uint64_t Batcher::batchesBefore(uint32_t seed, double epochs) {
  const uint64_t epoch = static_cast<uint64_t>(std::max(epochs, 0.0));
  countThrough(seed, epoch);
  const uint64_t size = epochStarts[epoch + 1] - epochStarts[epoch];
  const double into = (std::max(epochs, 0.0) - static_cast<double>(epoch)) *
                      static_cast<double>(size);
  return epochStarts[epoch] +
         std::min(size, static_cast<uint64_t>(std::llround(into)));
}

Batch Batcher::batch(uint32_t seed, uint64_t index) {
  uint64_t epoch = epochOf(seed, index);
  const std::vector<PlannedBatch> &batches = epochPlan(seed, epoch);
  return packPlanned(model, pairs, batches[index - epochStarts[epoch]]);
}

double Batcher::epochsAfter(uint32_t seed, uint64_t batches) {
  // The epoch of the next batch, and how far into it `batches` reach.
  uint64_t epoch = epochOf(seed, batches);
  return static_cast<double>(epoch) +
         static_cast<double>(batches - epochStarts[epoch]) /
             static_cast<double>(epochStarts[epoch + 1] - epochStarts[epoch]);
}

double Batcher::epochPadding(uint32_t seed) {
  int64_t tokens = 0, slots = 0;
  for (const PlannedBatch &planned : epochPlan(seed, 0)) {
    const CompiledBucket &bucket = model.buckets[planned.bucket];
    slots += bucket.batchSize * (bucket.sourceLength + bucket.targetLength);
    for (uint32_t i : planned.rows)
      tokens += static_cast<int64_t>(pairs.source(i).size() +
                                     pairs.target(i).size()) + 2;
  }
  return slots ? 1.0 - static_cast<double>(tokens) / static_cast<double>(slots)
               : 0.0;
}

} // namespace tgc::runtime
