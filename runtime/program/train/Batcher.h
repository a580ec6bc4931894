//===- Batcher.h - token-budget batches in static buckets --------*- C++ -*-===//
//
// A corpus's pairs become batches of the compiled buckets. Each epoch:
//   1. the pairs are shuffled (seed, epoch);
//   2. windows of `window` pairs are sorted by length, so neighbours have
//      similar lengths and little padding;
//   3. each pair goes to the smallest bucket that holds it, and a bucket's
//      rows become a batch when it has `batch` of them (or fewer under a
//      run-time --max-tokens, batchRows); leftovers wait for
//      the next window, and at the epoch's end fill partial batches (the
//      missing rows are padding, which the loss ignores);
//   4. the batches are shuffled, so lengths mix over time.
// Every pair is trained on exactly once per epoch, and batch number i is a
// pure function of (seed, i): a resumed run sees the same batches.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_TRAIN_BATCHER_H
#define TGC_RUNTIME_TRAIN_BATCHER_H

#include "runtime/data/Tasks.h"
#include "runtime/program/CompiledStep.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tgc::runtime {

/// Sentence pairs, symbols only: a vector of pairs or a mapped corpus.
class PairList {
public:
  virtual ~PairList() = default;
  virtual size_t size() const = 0;
  virtual std::span<const int32_t> source(size_t i) const = 0;
  virtual std::span<const int32_t> target(size_t i) const = 0;
};

/// The smallest of `model`'s buckets whose lengths hold a pair with these
/// symbol counts (plus EOS / BOS); -1 when none does.
int bucketFor(const CompiledModel &model, size_t sourceSymbols,
              size_t targetSymbols);

/// "40x16x16, 26x16x24": the model's buckets, batch x source x target.
std::string describeBuckets(const CompiledModel &model);

/// The rows each bucket's batches fill: the compiled batch sizes, or under
/// `maxTokens` > 0 (the run's --max-tokens) `maxTokens / longer length` of
/// them, counted as tgc --max-tokens counts a bucket's batch. The rows left
/// over are padding: the step still computes its compiled shape.
std::vector<int64_t> batchRows(const CompiledModel &model, int64_t maxTokens);

/// Why `maxTokens` does not fit every bucket ("" when it does): a budget
/// below a bucket's longer length leaves it no row.
std::string batchRowsProblem(const CompiledModel &model, int64_t maxTokens);

/// "--max-tokens 600: 37 of 40 rows of 40x16x16, ...": the rows filled.
std::string describeBatchRows(const CompiledModel &model, int64_t maxTokens);

/// One planned batch: its bucket and the pairs of its rows.
struct PlannedBatch {
  int bucket;
  std::vector<uint32_t> rows;
};

/// The batches of one epoch over `pairs` (indices into the list), all of
/// which must fit a bucket; a batch of bucket b has at most rows[b] pairs
/// (the compiled batch sizes when `rows` is empty).
std::vector<PlannedBatch> planEpoch(const CompiledModel &model,
                                    const PairList &pairs,
                                    std::span<const uint32_t> indices,
                                    uint32_t seed, uint64_t epoch,
                                    size_t window,
                                    std::span<const int64_t> rows = {});

class Batcher {
public:
  /// Pairs that fit no bucket are left out (count them with skipped()).
  /// `maxTokens` > 0 fills fewer rows (batchRows; check batchRowsProblem
  /// first).
  Batcher(const CompiledModel &model, const PairList &pairs,
          int64_t maxTokens = 0);

  size_t kept() const { return indices.size(); }
  size_t skipped() const { return pairs.size() - indices.size(); }
  /// Training batch number `index` in the endless sequence of epochs.
  Batch batch(uint32_t seed, uint64_t index);
  /// Passes over the pairs once the first `batches` batches are drawn: the
  /// epochs done plus the fraction of the next one.
  double epochsAfter(uint32_t seed, uint64_t batches);
  /// The first batch after `epochs` passes (epochsAfter's inverse, to the
  /// nearest batch).
  uint64_t batchesBefore(uint32_t seed, double epochs);
  /// The padding of the first epoch's batches: padded slots / all slots.
  double epochPadding(uint32_t seed);

private:
  const std::vector<PlannedBatch> &epochPlan(uint32_t seed, uint64_t epoch);
  /// The epoch that holds batch `index`.
  uint64_t epochOf(uint32_t seed, uint64_t index);
  /// Plans the epochs in order until epochStarts holds `epoch`'s end.
  void countThrough(uint32_t seed, uint64_t epoch);
  /// In a walk over epochs that began with `first` epoch starts known:
  /// past its first epoch, a pending Ctrl-C ends the program.
  void pollWalk(size_t first);

  const CompiledModel &model;
  const PairList &pairs;
  std::vector<uint32_t> indices;
  std::vector<int64_t> rows;
  size_t window;
  /// The plan of `planEpoch`, and where each epoch's batches start.
  std::vector<PlannedBatch> plan;
  uint64_t planEpochIndex = UINT64_MAX;
  uint32_t planSeed = 0;
  std::vector<uint64_t> epochStarts{0};
};

/// Packs the rows of a planned batch in its bucket's shape.
Batch packPlanned(const CompiledModel &model, const PairList &pairs,
                  const PlannedBatch &planned);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_TRAIN_BATCHER_H
