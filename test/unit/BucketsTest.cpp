//===- BucketsTest.cpp - buckets fitted to a corpus's lengths -------------===//
//
// bucketsForCorpus picks the buckets that spend the fewest positions on an
// epoch; these cases have optima small enough to work out by hand.
//
//===----------------------------------------------------------------------===//
#include "tools/driver/Buckets.h"

#include <gtest/gtest.h>

#include <random>

namespace tgc {
namespace {

std::vector<std::string> texts(const std::vector<BucketShape> &buckets) {
  std::vector<std::string> out;
  for (const BucketShape &bucket : buckets)
    out.push_back(bucket.text());
  return out;
}

std::vector<PairLength> repeated(std::vector<std::pair<PairLength, int>> runs) {
  std::vector<PairLength> pairs;
  for (auto [pair, times] : runs)
    pairs.insert(pairs.end(), times, pair);
  return pairs;
}

TEST(Buckets, ALongTailGetsItsOwnBucket) {
  // 100 short pairs, 100 medium ones and one long one. Two buckets: the long
  // pair alone (6400 + 208 positions) beats the short ones alone
  // (1600 + 101 x 208); quantiles would have put a medium pair with it.
  auto pairs = repeated({{{5, 5}, 100}, {{14, 14}, 100}, {{100, 100}, 1}});
  EXPECT_EQ(texts(bucketsForCorpus(pairs, 2, 1024)),
            (std::vector<std::string>{"64x16x16", "9x104x104"}));
  EXPECT_EQ(texts(bucketsForCorpus(pairs, 3, 1024)),
            (std::vector<std::string>{"128x8x8", "64x16x16", "9x104x104"}));
}

TEST(Buckets, NoMoreBucketsThanLengthClasses) {
  auto pairs = repeated({{{5, 7}, 10}, {{12, 9}, 10}});
  EXPECT_EQ(texts(bucketsForCorpus(pairs, 8, 64)),
            (std::vector<std::string>{"8x8x8", "4x16x16"}));
  EXPECT_EQ(texts(bucketsForCorpus(pairs, 1, 64)),
            (std::vector<std::string>{"4x16x16"}));
  EXPECT_TRUE(bucketsForCorpus({}, 4, 64).empty());
}

TEST(Buckets, SourceAndTargetLengthsAreSeparate) {
  // Pairs are classed by their longer side; a bucket's source and target are
  // the longest of its pairs' sources and targets.
  auto pairs = repeated({{{20, 3}, 5}, {{4, 11}, 5}});
  EXPECT_EQ(texts(bucketsForCorpus(pairs, 2, 96)),
            (std::vector<std::string>{"6x8x16", "4x24x8"}));
}

TEST(Buckets, EveryPairFitsAndNoBucketIsWasted) {
  std::mt19937 random(7);
  std::lognormal_distribution<double> length(2.4, 0.6);
  std::vector<PairLength> pairs;
  for (int i = 0; i < 5000; ++i) {
    int64_t source = 1 + static_cast<int64_t>(length(random));
    int64_t target = std::max<int64_t>(1, source + static_cast<int64_t>(random() % 7) - 3);
    pairs.push_back({source, target});
  }
  int64_t previous = INT64_MAX; // positions with one bucket fewer
  for (int count : {1, 2, 4, 6}) {
    std::vector<BucketShape> buckets = bucketsForCorpus(pairs, count, 2048);
    ASSERT_EQ(buckets.size(), static_cast<size_t>(count));
    std::vector<int> used(buckets.size());
    int64_t positions = 0;
    for (PairLength pair : pairs) {
      size_t fits = 0;
      while (fits < buckets.size() && (buckets[fits].sourceLength < pair.source ||
                                       buckets[fits].targetLength < pair.target))
        ++fits;
      ASSERT_LT(fits, buckets.size()) << pair.source << "x" << pair.target;
      ++used[fits];
      positions += buckets[fits].sourceLength + buckets[fits].targetLength;
    }
    for (size_t b = 0; b < buckets.size(); ++b) {
      EXPECT_GT(used[b], 0) << buckets[b].text();
      EXPECT_EQ(buckets[b].batch,
                2048 / std::max(buckets[b].sourceLength, buckets[b].targetLength));
    }
    // More buckets never pad more.
    EXPECT_LE(positions, previous) << count << " buckets";
    previous = positions;
  }
}

} // namespace
} // namespace tgc
