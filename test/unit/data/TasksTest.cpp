//===- TasksTest.cpp - the built-in tasks' sentences ----------------------===//
#include "runtime/data/Tasks.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

using namespace tgc::runtime;

namespace {

/// The digits task's output for a number written as text, e.g. "1017".
std::string words(const std::string &number) {
  std::vector<int32_t> digits;
  for (char c : number)
    digits.push_back(kFirstSymbolId + (c - '0'));
  std::string text;
  for (int32_t id : taskOutput(Task::Digits, digits)) {
    if (!text.empty())
      text += ' ';
    text += tokenText(Task::Digits, id);
  }
  return text;
}

TEST(Tasks, DigitsReadAsEnglishWords) {
  EXPECT_EQ(words("0"), "zero");
  EXPECT_EQ(words("7"), "seven");
  EXPECT_EQ(words("17"), "seventeen");
  EXPECT_EQ(words("40"), "forty");
  EXPECT_EQ(words("105"), "one hundred five");
  EXPECT_EQ(words("1017"), "one thousand seventeen");
  EXPECT_EQ(words("20000"), "twenty thousand");
  EXPECT_EQ(words("777777"), "seven hundred seventy seven thousand seven "
                             "hundred seventy seven");
  EXPECT_EQ(words("1000000"), "one million");
  EXPECT_EQ(words("999999999"),
            "nine hundred ninety nine million nine hundred ninety nine "
            "thousand nine hundred ninety nine");
}

TEST(Tasks, ReverseAndCopy) {
  std::vector<int32_t> s = {3, 4, 5};
  EXPECT_EQ(taskOutput(Task::Reverse, s), (std::vector<int32_t>{5, 4, 3}));
  EXPECT_EQ(taskOutput(Task::Copy, s), s);
}

/// Batches hold no held-out sentence, and every row fits its lengths with
/// EOS; the held-out set is distinct, held out, and the same for any seed.
TEST(Tasks, HeldOutSentencesAreNeverTrainedOn) {
  for (Task task : {Task::Copy, Task::Reverse, Task::Digits}) {
    BatchShape shape{32, 7, 10, 48};
    ASSERT_EQ(validateBatchShape(task, shape), "");
    for (uint64_t index = 0; index < 50; ++index) {
      Batch batch = makeBatch(task, 1, index, shape);
      for (int64_t row = 0; row < shape.batchSize; ++row) {
        auto begin = batch.source.begin() + row * shape.sourceLength;
        auto eos = std::find(begin, begin + shape.sourceLength, kEosId);
        ASSERT_NE(eos, begin + shape.sourceLength) << taskName(task);
        EXPECT_FALSE(isHeldOut({&*begin, static_cast<size_t>(eos - begin)}));
        auto out = batch.targetOut.begin() + row * shape.targetLength;
        EXPECT_NE(std::find(out, out + shape.targetLength, kEosId),
                  out + shape.targetLength);
      }
    }
    std::vector<SentencePair> heldOut = heldOutPairs(task, 100, shape);
    ASSERT_EQ(heldOut.size(), 100u) << taskName(task);
    std::set<std::vector<int32_t>> distinct;
    for (const SentencePair &pair : heldOut) {
      EXPECT_TRUE(isHeldOut(pair.source));
      EXPECT_EQ(pair.target, taskOutput(task, pair.source));
      distinct.insert(pair.source);
    }
    EXPECT_EQ(distinct.size(), heldOut.size());
  }
}

TEST(Tasks, DigitsNeedItsVocabularyAndLengths) {
  EXPECT_NE(validateBatchShape(Task::Digits, {4, 8, 8, 16}), "");
  EXPECT_EQ(validateBatchShape(Task::Digits, {4, 2, 2, 44}), "");
  EXPECT_NE(validateBatchShape(Task::Reverse, {4, 8, 8, 4}), "");
  EXPECT_NE(validateBatchShape(Task::Reverse, {0, 8, 8, 16}), "");
}

} // namespace
