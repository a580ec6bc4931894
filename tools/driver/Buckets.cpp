//===- Buckets.cpp - parsing and choosing buckets ------------------------===//
#include "tools/driver/Buckets.h"

#include <algorithm>
#include <charconv>
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
                         std::vector<BucketShape> &buckets) {
  buckets.clear();
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? "" : text.substr(comma + 1);
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
    } else {
      return "bucket '" + std::string(item) +
             "': expected BATCHxSOURCExTARGET or SOURCExTARGET";
    }
    for (const BucketShape &seen : buckets)
      if (seen.sourceLength == bucket.sourceLength &&
          seen.targetLength == bucket.targetLength)
        return "bucket lengths " + std::to_string(bucket.sourceLength) + "x" +
               std::to_string(bucket.targetLength) + " given twice";
    buckets.push_back(bucket);
  }
  if (buckets.empty())
    return "--buckets is empty";
  sortBySize(buckets);
  return "";
}

std::vector<BucketShape> bucketsForCorpus(std::span<const PairLength> pairs,
                                          int count, int64_t maxTokens) {
  std::vector<PairLength> sorted(pairs.begin(), pairs.end());
  std::sort(sorted.begin(), sorted.end(), [](PairLength a, PairLength b) {
    return std::max(a.source, a.target) < std::max(b.source, b.target);
  });
  auto roundUp = [](int64_t n) { return std::max<int64_t>(8, (n + 7) / 8 * 8); };
  std::vector<BucketShape> buckets;
  size_t begin = 0;
  for (int part = 1; part <= count && begin < sorted.size(); ++part) {
    size_t end = sorted.size() * part / count;
    if (end <= begin)
      continue;
    int64_t source = 0, target = 0;
    for (size_t i = begin; i < end; ++i) {
      source = std::max(source, sorted[i].source);
      target = std::max(target, sorted[i].target);
    }
    // A pair fits a bucket with both lengths at least its own; keep the
    // lengths growing so every earlier part also fits the later buckets.
    source = roundUp(source);
    target = roundUp(target);
    if (!buckets.empty()) {
      source = std::max(source, buckets.back().sourceLength);
      target = std::max(target, buckets.back().targetLength);
      if (source == buckets.back().sourceLength &&
          target == buckets.back().targetLength) {
        begin = end;
        continue;
      }
    }
    buckets.push_back({batchForBudget(maxTokens, source, target), source, target});
    begin = end;
  }
  return buckets;
}

} // namespace tgc
