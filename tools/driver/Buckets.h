//===- Buckets.h - the static shapes one model is compiled for ---*- C++ -*-===//
//
// Shapes are static, so a corpus of varied lengths is served by a few
// buckets, each a (batch, source length, target length) the model is
// compiled for; the runtime packs every batch into the smallest bucket that
// fits it. A bucket's batch comes from a token budget (--max-tokens, like
// fairseq's): batch = budget / max(source length, target length).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TOOLS_DRIVER_BUCKETS_H
#define TGC_TOOLS_DRIVER_BUCKETS_H

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tgc {

/// The most buckets one program is compiled for (--buckets, --bucket-count):
/// each is a step of its own, compiled and kept in the binary.
inline constexpr int kMaxBuckets = 64;

struct BucketShape {
  int64_t batch, sourceLength, targetLength;
  std::string text() const; ///< "32x16x16"
};

/// Parses --buckets: comma-separated "BATCHxSOURCExTARGET", or
/// "SOURCExTARGET" with the batch from `maxTokens` (0: not given). A batch
/// past `maxBatch` is refused (naming --max-tokens where it made it).
/// Sorted by size, duplicates refused. Returns an empty string or the
/// problem.
std::string parseBuckets(std::string_view text, int64_t maxTokens,
                         int64_t maxBatch, std::vector<BucketShape> &buckets);

/// Why a batch made from `maxTokens` (every bucket's of `buckets`) is more
/// than `maxBatch` sentence pairs, naming --max-tokens and the bucket; or
/// empty.
std::string budgetBatchError(std::span<const BucketShape> buckets,
                             int64_t maxTokens, int64_t maxBatch);

/// Lengths of one training pair as the step sees them: source symbols +
/// EOS, target symbols + BOS (or EOS).
struct PairLength {
  int64_t source, target;
};

/// At most `count` buckets for a corpus, the ones that spend the fewest
/// positions (padding included) on an epoch of it: the pairs are classed by
/// their longer side rounded up to a multiple of 8, and each bucket serves a
/// run of classes with the longest source and target among them (rounded
/// up). Fewer when the corpus has fewer classes.
std::vector<BucketShape> bucketsForCorpus(std::span<const PairLength> pairs,
                                          int count, int64_t maxTokens);

} // namespace tgc

#endif // TGC_TOOLS_DRIVER_BUCKETS_H
