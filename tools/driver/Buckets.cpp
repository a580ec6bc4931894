//===- Buckets.cpp - parsing and choosing buckets ------------------------===//
#include "tools/driver/Buckets.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <tuple>

namespace tgc {

std::string BucketShape::text() const {
  return std::to_string(batch) + "x" + std::to_string(sourceLength) + "x" +
         std::to_string(targetLength);
}

static int64_t batchForBudget(int64_t maxTokens, int64_t source,
                              int64_t target) {
  return std::max<int64_t>(1, maxTokens / std::max(source, target));
}

static int64_t roundUpTo8(int64_t n) {
  return std::max<int64_t>(8, (n + 7) / 8 * 8);
}

static void sortBySize(std::vector<BucketShape> &buckets) {
  std::sort(buckets.begin(), buckets.end(),
            [](const BucketShape &a, const BucketShape &b) {
              return std::tuple(std::max(a.sourceLength, a.targetLength),
                                a.sourceLength, a.targetLength, a.batch) <
                     std::tuple(std::max(b.sourceLength, b.targetLength),
                                b.sourceLength, b.targetLength, b.batch);
            });
}

std::string parseBuckets(std::string_view text, int64_t maxTokens,
                         int64_t maxBatch, std::vector<BucketShape> &buckets) {
  buckets.clear();
  if (text.empty())
    return "--buckets is empty";
  for (bool more = true; more;) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    more = comma != std::string_view::npos;
    text = more ? text.substr(comma + 1) : "";
    if (item.empty())
      return "an empty bucket between commas (or at an end of the list)";
    std::vector<int64_t> numbers;
    std::string_view rest = item;
    while (true) {
      int64_t value = 0;
      auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
      if (ec != std::errc() || value < 1)
        return "bucket '" + std::string(item) +
               "': expected BATCHxSOURCExTARGET or SOURCExTARGET, each a "
               "positive integer";
      numbers.push_back(value);
      rest.remove_prefix(end - rest.data());
      if (rest.empty())
        break;
      if (rest.front() != 'x')
        return "bucket '" + std::string(item) +
               "': expected BATCHxSOURCExTARGET or SOURCExTARGET";
      rest.remove_prefix(1);
    }
    BucketShape bucket{};
    if (numbers.size() == 3) {
      bucket = {numbers[0], numbers[1], numbers[2]};
      // A model file's build may not check its batch (the Transformer's
      // config rules do).
      if (bucket.batch > maxBatch)
        return "bucket '" + std::string(item) + "': a batch of " +
               std::to_string(bucket.batch) + " sentence pairs; the limit is " +
               std::to_string(maxBatch);
    } else if (numbers.size() == 2) {
      if (maxTokens <= 0)
        return "bucket '" + std::string(item) +
               "' has no batch: give BATCHxSOURCExTARGET or --max-tokens";
      if (int64_t longer = std::max(numbers[0], numbers[1]); maxTokens < longer)
        return "--max-tokens " + std::to_string(maxTokens) +
               " is smaller than bucket '" + std::string(item) +
               "''s longer length " + std::to_string(longer) +
               ": not one sentence pair fits the budget";
      bucket = {batchForBudget(maxTokens, numbers[0], numbers[1]), numbers[0],
                numbers[1]};
      if (std::string why = budgetBatchError({&bucket, 1}, maxTokens, maxBatch);
          !why.empty())
        return why;
    } else {
      return "bucket '" + std::string(item) +
             "': expected BATCHxSOURCExTARGET or SOURCExTARGET";
    }
    for (const BucketShape &seen : buckets)
      if (seen.sourceLength == bucket.sourceLength &&
          seen.targetLength == bucket.targetLength)
        return "bucket lengths " + std::to_string(bucket.sourceLength) + "x" +
               std::to_string(bucket.targetLength) + " given twice";
    if (buckets.size() == kMaxBuckets)
      return "more than " + std::to_string(kMaxBuckets) +
             " buckets: each is a step compiled into the program";
    buckets.push_back(bucket);
  }
  sortBySize(buckets);
  return "";
}

std::string budgetBatchError(std::span<const BucketShape> buckets,
                             int64_t maxTokens, int64_t maxBatch) {
  for (const BucketShape &bucket : buckets)
    if (bucket.batch > maxBatch)
      return "--max-tokens " + std::to_string(maxTokens) + " gives bucket " +
             std::to_string(bucket.sourceLength) + "x" +
             std::to_string(bucket.targetLength) + " a batch of " +
             std::to_string(bucket.batch) + " sentence pairs; the limit is " +
             std::to_string(maxBatch) + ": give a smaller budget";
  return "";
}

std::vector<BucketShape> bucketsForCorpus(std::span<const PairLength> pairs,
                                          int count, int64_t maxTokens) {
  // Pairs whose longer side rounds up to the same multiple of 8 share a
  // class; a bucket serves a run of consecutive classes, with the longest
  // source and target of the run (rounded up).
  struct LengthClass {
    int64_t pairs = 0, source = 0, target = 0;
  };
  std::map<int64_t, LengthClass> byLonger;
  for (PairLength pair : pairs) {
    LengthClass &c = byLonger[roundUpTo8(std::max(pair.source, pair.target))];
    ++c.pairs;
    c.source = std::max(c.source, pair.source);
    c.target = std::max(c.target, pair.target);
  }
  std::vector<LengthClass> classes;
  for (const auto &entry : byLonger)
    classes.push_back(entry.second);
  const size_t n = classes.size();
  const size_t parts = std::min<size_t>(n, std::max(count, 0));
  if (parts == 0)
    return {};

  // The bucket of classes [i, j): the longest source and target among them.
  auto bucketOf = [&](size_t i, size_t j) {
    BucketShape shape{0, 8, 8};
    for (size_t k = i; k < j; ++k) {
      shape.sourceLength = std::max(shape.sourceLength, roundUpTo8(classes[k].source));
      shape.targetLength = std::max(shape.targetLength, roundUpTo8(classes[k].target));
    }
    shape.batch = batchForBudget(maxTokens, shape.sourceLength, shape.targetLength);
    return shape;
  };

  // A step costs about its budget whatever the bucket, so an epoch costs its
  // positions, padding included: pairs x (source + target length) summed
  // over the buckets. cost[p][j]: the fewest positions p buckets spend on
  // classes [0, j); cut[p][j]: where the last of them starts. Classes are
  // few (the longest pair / 8), so the exhaustive search is instant.
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  std::vector<std::vector<int64_t>> cost(parts + 1, std::vector<int64_t>(n + 1, kNone));
  std::vector<std::vector<size_t>> cut(parts + 1, std::vector<size_t>(n + 1, 0));
  cost[0][0] = 0;
  for (size_t p = 1; p <= parts; ++p)
    for (size_t j = p; j <= n; ++j) {
      int64_t source = 8, target = 8, members = 0;
      for (size_t i = j; i-- > p - 1;) { // the last bucket is [i, j)
        source = std::max(source, roundUpTo8(classes[i].source));
        target = std::max(target, roundUpTo8(classes[i].target));
        members += classes[i].pairs;
        if (cost[p - 1][i] == kNone)
          continue;
        int64_t total = cost[p - 1][i] + members * (source + target);
        if (total < cost[p][j]) {
          cost[p][j] = total;
          cut[p][j] = i;
        }
      }
    }
  std::vector<BucketShape> buckets;
  for (size_t p = parts, j = n; p > 0; j = cut[p][j], --p)
    buckets.push_back(bucketOf(cut[p][j], j));
  sortBySize(buckets);
  return buckets;
}

} // namespace tgc
