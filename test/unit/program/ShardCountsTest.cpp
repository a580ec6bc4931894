//===- ShardCountsTest.cpp - --shard-optimizer's split of the gradients --===//
#include "runtime/program/parallel/ShardedOptimizer.h"

#include <gtest/gtest.h>

#include <numeric>

using namespace tgc::runtime;

// N nearly equal runs laid end to end: they cover the region exactly.
TEST(ShardCounts, SplitsTheRegionInNearlyEqualRuns) {
  EXPECT_EQ(shareCounts(10, 3), (std::vector<int>{3, 3, 4}));
  EXPECT_EQ(shareCounts(2, 4), (std::vector<int>{0, 1, 0, 1}));
  std::vector<int> counts = shareCounts(kMaxShardedFloats, 7);
  ASSERT_EQ(counts.size(), 7u);
  EXPECT_EQ(std::accumulate(counts.begin(), counts.end(), int64_t{0}),
            kMaxShardedFloats);
}

// MPI's counts and displacements are ints: a region past 2^31 - 1 floats
// cannot be laid out (its counts wrapped), however many processes share it.
TEST(ShardCounts, ARegionPastMpisIntCountsIsRefused) {
  EXPECT_TRUE(shareCounts(kMaxShardedFloats + 1, 2).empty());
  EXPECT_TRUE(shareCounts(int64_t{5} << 31, 64).empty());
}
