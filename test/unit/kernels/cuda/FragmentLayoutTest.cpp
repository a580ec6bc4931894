//===- FragmentLayoutTest.cpp - the tensor-core tiles' lane plans ---------===//
//
// runtime/kernels/cuda/FragmentLayout.h on the host, no GPU needed: a warp's
// 32 lanes emulated, each plan must give every lane exactly the values of
// its own elements. The fused attention kernels (FusedAttention.cu) hand
// their dropout factors round by these plans and read their operands by
// these coordinates; their results are checked against the CPU on a GPU
// (FusedAttentionTest.cpp).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cuda/FragmentLayout.h"

#include <gtest/gtest.h>

#include <array>
#include <set>
#include <utility>

namespace tgc::test {
namespace {

namespace fragment = cuda::fragment;
constexpr int kLanes = 32;

/// A value that names its place in a tile.
int valueAt(int row, int column) { return 100 * row + column; }

// The four accumulator elements of the 32 lanes are the 16 x 8 tile, each
// place once; the A operand's 8 values a lane are the 16 x 16 tile, and
// the B operand's 4 the 16 x 8, each place once.
TEST(FragmentLayout, EveryPlaceOfATileIsOneLanesElement) {
  std::set<std::pair<int, int>> accumulator, a, b;
  for (int lane = 0; lane < kLanes; ++lane) {
    for (int i = 0; i < 4; ++i)
      accumulator.insert({fragment::accumulatorRow(lane, i),
                          fragment::accumulatorColumn(lane, i)});
    for (int r = 0; r < 4; ++r)
      for (int h = 0; h < 2; ++h)
        a.insert({fragment::operandARow(lane, r),
                  fragment::operandAColumn(lane, r, h)});
    for (int r = 0; r < 2; ++r)
      for (int h = 0; h < 2; ++h)
        b.insert({fragment::operandBRow(lane, r, h),
                  fragment::operandBColumn(lane)});
  }
  ASSERT_EQ(accumulator.size(), 16u * 8u);
  ASSERT_EQ(a.size(), 16u * 16u);
  ASSERT_EQ(b.size(), 16u * 8u);
  for (const auto &[row, column] : accumulator) {
    EXPECT_LT(row, 16);
    EXPECT_LT(column, 8);
  }
  for (const auto &[row, column] : a) {
    EXPECT_LT(row, 16);
    EXPECT_LT(column, 16);
  }
  for (const auto &[k, n] : b) {
    EXPECT_LT(k, 16);
    EXPECT_LT(n, 8);
  }
}

// Two accumulator tiles side by side are an A operand in the same lanes:
// register r, half h of a lane is its own element accumulatorOf(r, h) of
// tile r / 2, at the same row and column (plus 8 for the right tile).
TEST(FragmentLayout, AccumulatorsAreTheNextProductsOperand) {
  for (int lane = 0; lane < kLanes; ++lane)
    for (int r = 0; r < 4; ++r)
      for (int h = 0; h < 2; ++h) {
        const int i = fragment::accumulatorOf(r, h);
        EXPECT_EQ(fragment::operandARow(lane, r),
                  fragment::accumulatorRow(lane, i))
            << "lane " << lane << " register " << r << " half " << h;
        EXPECT_EQ(fragment::operandAColumn(lane, r, h),
                  8 * (r / 2) + fragment::accumulatorColumn(lane, i))
            << "lane " << lane << " register " << r << " half " << h;
      }
}

// Keys along the columns: each lane draws the block of four columns from
// firstColumn of drawnRow, keeps half and swaps the other with lane ^ 1.
TEST(FragmentLayout, ColumnQuadsGiveEachLaneItsElements) {
  using Plan = fragment::ColumnQuads;
  std::array<std::array<int, 4>, kLanes> block;
  for (int lane = 0; lane < kLanes; ++lane)
    for (int q = 0; q < 4; ++q)
      block[lane][q] =
          valueAt(Plan::drawnRow(lane), Plan::firstColumn(lane) + q);
  for (int lane = 0; lane < kLanes; ++lane) {
    const int half = Plan::keptHalf(lane), neighbour = lane ^ 1;
    const int sentHalf = 1 - Plan::keptHalf(neighbour);
    for (int i = 0; i < 4; ++i) {
      const int got = Plan::fromOwnBlock(lane, i)
                          ? block[lane][2 * half + i % 2]
                          : block[neighbour][2 * sentHalf + i % 2];
      EXPECT_EQ(got, valueAt(fragment::accumulatorRow(lane, i),
                             fragment::accumulatorColumn(lane, i)))
          << "lane " << lane << " element " << i;
    }
  }
}

// Keys down the rows: each lane draws the block of four rows from firstRow
// in its column; in round q every lane sends value sentValue of its block
// to lane ^ laneMask(q), which keeps it as element receivedElement. Every
// element arrives exactly once.
TEST(FragmentLayout, RowQuadsGiveEachLaneItsElements) {
  using Plan = fragment::RowQuads;
  std::array<std::array<int, 4>, kLanes> block, got;
  std::array<std::array<int, 4>, kLanes> arrivals{};
  for (int lane = 0; lane < kLanes; ++lane)
    for (int q = 0; q < 4; ++q)
      block[lane][q] = valueAt(Plan::firstRow(lane) + q, Plan::column(lane));
  for (int round = 0; round < 4; ++round)
    for (int lane = 0; lane < kLanes; ++lane) {
      const int from = lane ^ Plan::laneMask(round);
      const int element = Plan::receivedElement(lane, round);
      ASSERT_GE(element, 0);
      ASSERT_LT(element, 4);
      got[lane][element] = block[from][Plan::sentValue(from, round)];
      ++arrivals[lane][element];
    }
  for (int lane = 0; lane < kLanes; ++lane)
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(arrivals[lane][i], 1) << "lane " << lane << " element " << i;
      EXPECT_EQ(got[lane][i], valueAt(fragment::accumulatorRow(lane, i),
                                      fragment::accumulatorColumn(lane, i)))
          << "lane " << lane << " element " << i;
    }
}

} // namespace
} // namespace tgc::test
