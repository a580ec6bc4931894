//===- LmWindowsTest.cpp - documents as language-model windows -----------===//
#include "runtime/program/train/LmWindows.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <unistd.h>

using namespace tgc::runtime;

namespace {

constexpr int32_t E = kEosId;

class LmWindowsTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = (std::filesystem::temp_directory_path() /
           ("tgc-lm-" + std::to_string(::getpid())))
              .string();
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  TokenCorpus documents(const std::vector<std::vector<int32_t>> &texts) {
    std::vector<SentencePair> pairs;
    for (const std::vector<int32_t> &text : texts)
      pairs.push_back({{}, text});
    std::string path = dir + "/lm.tok", error;
    EXPECT_EQ(writeTokenCorpus(path, 100, 7, pairs, CorpusKind::Documents), "");
    std::optional<TokenCorpus> corpus = TokenCorpus::open(path, error);
    EXPECT_TRUE(corpus) << error;
    return std::move(*corpus);
  }

  std::string dir;
};

std::vector<int32_t> windowOf(const LmWindows &windows, uint64_t w,
                              int64_t context) {
  std::vector<int32_t> tokens(context + 1);
  windows.window(w, tokens.data());
  return tokens;
}

TEST_F(LmWindowsTest, DocumentsAreOneStreamWithEndTokens) {
  TokenCorpus corpus = documents({{3, 4, 5}, {6}, {7, 8, 9, 10}});
  EXPECT_EQ(corpus.kind(), CorpusKind::Documents);
  // Stream: 3 4 5 E 6 E 7 8 9 10 E (11 tokens); windows of 4 every 3.
  LmWindows windows(corpus, /*context=*/3, /*rows=*/2);
  EXPECT_EQ(windows.streamLength(), 11u);
  EXPECT_EQ(windows.windows(), 3u);
  EXPECT_EQ(windowOf(windows, 0, 3), (std::vector<int32_t>{3, 4, 5, E}));
  EXPECT_EQ(windowOf(windows, 1, 3), (std::vector<int32_t>{E, 6, E, 7}));
  EXPECT_EQ(windowOf(windows, 2, 3), (std::vector<int32_t>{7, 8, 9, 10}));
  // A row's input is the window's first `context` tokens, its targets the
  // last; in order, the rows past the last window are padding.
  Batch last = windows.inOrder(2);
  EXPECT_EQ(last.sourceLength, 0);
  EXPECT_EQ(last.targetIn, (std::vector<int32_t>{7, 8, 9, 0, 0, 0}));
  EXPECT_EQ(last.targetOut, (std::vector<int32_t>{8, 9, 10, 0, 0, 0}));
  EXPECT_EQ(last.targetTokens(), 3);
}

TEST_F(LmWindowsTest, EveryWindowOnceAnEpochInASeededOrder) {
  std::vector<std::vector<int32_t>> texts;
  for (int32_t d = 0; d < 40; ++d)
    texts.push_back(std::vector<int32_t>(1 + d % 7, 3 + d));
  TokenCorpus corpus = documents(texts);
  LmWindows windows(corpus, 5, 4);
  ASSERT_GT(windows.windows(), 8u);
  uint64_t perEpoch = windows.batchesPerEpoch();
  EXPECT_EQ(perEpoch, (windows.windows() + 3) / 4);
  for (uint64_t epoch = 0; epoch < 2; ++epoch) {
    std::multiset<std::vector<int32_t>> drawn, all;
    for (uint64_t w = 0; w < windows.windows(); ++w) {
      std::vector<int32_t> tokens = windowOf(windows, w, 5);
      all.insert({tokens.begin(), tokens.end() - 1});
    }
    for (uint64_t b = 0; b < perEpoch; ++b) {
      Batch batch = windows.batch(9, epoch * perEpoch + b);
      for (int64_t row = 0; row < 4; ++row) {
        std::vector<int32_t> in(batch.targetIn.begin() + row * 5,
                                batch.targetIn.begin() + row * 5 + 5);
        if (in != std::vector<int32_t>(5, kPadId))
          drawn.insert(in);
      }
    }
    EXPECT_EQ(drawn, all) << "epoch " << epoch;
  }
  // A pure function of (seed, index): drawn again, or after other batches,
  // the same; another seed, another order.
  LmWindows again(corpus, 5, 4);
  again.batch(9, perEpoch + 1);
  EXPECT_EQ(again.batch(9, 2).targetIn, windows.batch(9, 2).targetIn);
  EXPECT_NE(windows.batch(10, 0).targetIn, windows.batch(9, 0).targetIn);
  EXPECT_DOUBLE_EQ(windows.epochsAfter(perEpoch + perEpoch / 2),
                   1.0 + static_cast<double>(perEpoch / 2) /
                             static_cast<double>(perEpoch));
}

TEST_F(LmWindowsTest, ACorpusOfDocumentsHasNoSourceSide) {
  std::string error;
  EXPECT_EQ(writeTokenCorpus(dir + "/bad.tok", 100, 7, {{{{3}, {4}}}},
                             CorpusKind::Documents),
            "cannot write " + dir +
                "/bad.tok: document 0 has a source side (a corpus of "
                "documents has none)");
  EXPECT_FALSE(std::filesystem::exists(dir + "/bad.tok"));
  // A stream shorter than one window has none.
  TokenCorpus tiny = documents({{3, 4}});
  EXPECT_EQ(LmWindows(tiny, 3, 2).windows(), 0u);
  EXPECT_EQ(LmWindows(tiny, 2, 2).windows(), 1u);
}

} // namespace
