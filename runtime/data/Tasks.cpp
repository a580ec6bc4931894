//===- Tasks.cpp - built-in synthetic translation tasks -------------------===//
#include "runtime/data/Tasks.h"

#include "runtime/data/SplitMix64.h"

#include <algorithm>
#include <array>
#include <set>

namespace tgc::runtime {
namespace {

// digits: ids 3..12 are the digits 0-9, the words follow.
constexpr int32_t kFirstDigitId = kFirstSymbolId;
constexpr int32_t kFirstWordId = kFirstDigitId + 10;
constexpr std::array<const char *, 31> kWords = {
    "zero",     "one",      "two",       "three",    "four",    "five",
    "six",      "seven",    "eight",     "nine",     "ten",     "eleven",
    "twelve",   "thirteen", "fourteen",  "fifteen",  "sixteen", "seventeen",
    "eighteen", "nineteen", "twenty",    "thirty",   "forty",   "fifty",
    "sixty",    "seventy",  "eighty",    "ninety",   "hundred", "thousand",
    "million"};
constexpr int32_t kTwentyWord = 20, kHundredWord = 28, kThousandWord = 29,
                  kMillionWord = 30;
constexpr int kMaxDigits = 9; // up to 999 999 999

int32_t wordId(int word) { return kFirstWordId + word; }

/// The words of 1..999, appended to `out`.
void wordsBelowThousand(int n, std::vector<int32_t> &out) {
  if (n >= 100) {
    out.push_back(wordId(n / 100));
    out.push_back(wordId(kHundredWord));
    n %= 100;
  }
  if (n >= 20) {
    out.push_back(wordId(kTwentyWord + (n / 10 - 2)));
    n %= 10;
  }
  if (n > 0)
    out.push_back(wordId(n));
}

/// English words of the number whose digit tokens are `digits`.
std::vector<int32_t> numberWords(std::span<const int32_t> digits) {
  int64_t n = 0;
  for (int32_t d : digits)
    n = n * 10 + (d - kFirstDigitId);
  if (n == 0)
    return {wordId(0)};
  std::vector<int32_t> words;
  const std::pair<int64_t, int> scales[] = {{1000000, kMillionWord},
                                            {1000, kThousandWord}};
  for (auto [scale, word] : scales)
    if (n >= scale) {
      wordsBelowThousand(static_cast<int>(n / scale), words);
      words.push_back(wordId(word));
      n %= scale;
    }
  wordsBelowThousand(static_cast<int>(n), words);
  return words;
}

/// The most words a number of `digits` digits can take ("seven hundred
/// seventy seven" per group of three, plus a scale word per group).
int64_t maxWords(int digits) {
  int groups = (digits + 2) / 3, leading = digits - 3 * (groups - 1);
  int leadingWords = leading == 1 ? 1 : leading == 2 ? 2 : 4;
  return leadingWords + 4 * (groups - 1) + (groups - 1);
}

/// The most digits whose numbers fit `shape` (0 when none).
int digitsThatFit(const BatchShape &shape) {
  int digits = 0;
  while (digits < kMaxDigits && digits + 2 <= shape.sourceLength &&
         maxWords(digits + 1) + 1 <= shape.targetLength)
    ++digits;
  return digits;
}

SentencePair samplePair(Task task, SplitMix64 &rng, const BatchShape &shape) {
  std::vector<int32_t> source;
  if (task == Task::Digits) {
    int64_t count = rng.between(1, digitsThatFit(shape));
    for (int64_t i = 0; i < count; ++i) // no leading zero, but "0" itself
      source.push_back(kFirstDigitId +
                       static_cast<int32_t>(rng.between(i == 0 && count > 1, 9)));
  } else {
    int64_t maxSymbols = std::min(shape.sourceLength, shape.targetLength) - 1;
    source.resize(rng.between(1, maxSymbols));
    for (int32_t &s : source)
      s = static_cast<int32_t>(rng.between(kFirstSymbolId, shape.vocabulary - 1));
  }
  std::vector<int32_t> target = taskOutput(task, source);
  return {std::move(source), std::move(target)};
}

uint64_t streamSeed(Task task, uint64_t seed, uint64_t index) {
  return (seed << 32) ^ (index * 0x2545f491ull) ^
         (static_cast<uint64_t>(task) << 62);
}

} // namespace

std::optional<Task> parseTask(std::string_view name) {
  if (name == "copy")
    return Task::Copy;
  if (name == "reverse")
    return Task::Reverse;
  if (name == "digits")
    return Task::Digits;
  return std::nullopt;
}

const char *taskName(Task task) {
  switch (task) {
  case Task::Copy:
    return "copy";
  case Task::Reverse:
    return "reverse";
  case Task::Digits:
    return "digits";
  }
  return "?";
}

const char *taskNames() { return "copy, reverse, digits"; }

int64_t Batch::targetTokens() const {
  return std::count_if(targetOut.begin(), targetOut.end(),
                       [](int32_t id) { return id != kPadId; });
}

int64_t Batch::sourceTokens() const {
  return std::count_if(source.begin(), source.end(),
                       [](int32_t id) { return id != kPadId; });
}

std::vector<int32_t> taskOutput(Task task, std::span<const int32_t> symbols) {
  if (task == Task::Digits)
    return numberWords(symbols);
  std::vector<int32_t> output(symbols.begin(), symbols.end());
  if (task == Task::Reverse)
    std::reverse(output.begin(), output.end());
  return output;
}

bool isHeldOut(std::span<const int32_t> source) {
  uint64_t h = 0xcbf29ce484222325ull; // FNV-1a over the ids
  for (int32_t id : source)
    h = (h ^ static_cast<uint32_t>(id)) * 0x100000001b3ull;
  return (h ^ (h >> 29)) % 16 == 0;
}

std::string validateBatchShape(Task task, const BatchShape &shape) {
  if (shape.batchSize < 1)
    return "the batch size must be at least 1";
  if (shape.sourceLength < 2 || shape.targetLength < 2)
    return "source and target lengths must be at least 2 (a symbol and EOS)";
  if (task == Task::Digits) {
    int32_t needed = kFirstWordId + static_cast<int32_t>(kWords.size());
    if (shape.vocabulary < needed)
      return "task digits needs a vocabulary of at least " +
             std::to_string(needed) + " (specials, 10 digits, " +
             std::to_string(kWords.size()) + " words); the model has " +
             std::to_string(shape.vocabulary);
    if (digitsThatFit(shape) == 0)
      return "task digits needs a target length of at least 2";
    return {};
  }
  // copy/reverse draw symbols from the whole vocabulary; with one symbol,
  // every sentence of a length would be the same.
  if (shape.vocabulary <= kFirstSymbolId + 1)
    return "the vocabulary must be larger than 4 (padding, BOS, EOS, and at "
           "least two symbols)";
  return {};
}

Batch emptyBatch(const BatchShape &shape) {
  Batch batch;
  batch.batchSize = shape.batchSize;
  batch.sourceLength = shape.sourceLength;
  batch.targetLength = shape.targetLength;
  batch.source.assign(shape.batchSize * shape.sourceLength, kPadId);
  batch.targetIn.assign(shape.batchSize * shape.targetLength, kPadId);
  batch.targetOut.assign(shape.batchSize * shape.targetLength, kPadId);
  return batch;
}

void packRow(Batch &batch, int64_t row, std::span<const int32_t> source,
             std::span<const int32_t> target) {
  auto sourceRow = batch.source.begin() + row * batch.sourceLength;
  *std::copy(source.begin(), source.end(), sourceRow) = kEosId;
  auto targetIn = batch.targetIn.begin() + row * batch.targetLength;
  targetIn[0] = kBosId;
  std::copy(target.begin(), target.end(), targetIn + 1);
  auto targetOut = batch.targetOut.begin() + row * batch.targetLength;
  *std::copy(target.begin(), target.end(), targetOut) = kEosId;
}

Batch packBatch(std::span<const SentencePair> pairs, const BatchShape &shape) {
  Batch batch = emptyBatch(shape);
  for (size_t row = 0; row < pairs.size(); ++row)
    packRow(batch, static_cast<int64_t>(row), pairs[row].source,
            pairs[row].target);
  return batch;
}

Batch makeBatch(Task task, uint32_t seed, uint64_t index,
                const BatchShape &shape) {
  SplitMix64 rng(streamSeed(task, seed, index));
  std::vector<SentencePair> pairs;
  while (static_cast<int64_t>(pairs.size()) < shape.batchSize) {
    SentencePair pair = samplePair(task, rng, shape);
    if (!isHeldOut(pair.source))
      pairs.push_back(std::move(pair));
  }
  return packBatch(pairs, shape);
}

std::vector<SentencePair> heldOutPairs(Task task, int64_t count,
                                       const BatchShape &shape,
                                       const std::function<bool()> &poll) {
  // One fixed stream, independent of the training seed, so every run is
  // measured on the same sentences; give up after many tries for tasks too
  // small to have `count` held-out sentences.
  SplitMix64 rng(streamSeed(task, 0x5eedull, ~0ull));
  std::set<std::vector<int32_t>> seen;
  std::vector<SentencePair> pairs;
  for (int64_t tries = 0; static_cast<int64_t>(pairs.size()) < count &&
                          tries < 1000 * (count + 16);
       ++tries) {
    if (poll && tries % 4096 == 0 && poll())
      break;
    SentencePair pair = samplePair(task, rng, shape);
    if (isHeldOut(pair.source) && seen.insert(pair.source).second)
      pairs.push_back(std::move(pair));
  }
  return pairs;
}

std::string tokenText(Task task, int32_t id) {
  switch (id) {
  case kPadId:
    return "<pad>";
  case kBosId:
    return "<bos>";
  case kEosId:
    return "<eos>";
  }
  if (task == Task::Digits) {
    if (id >= kFirstDigitId && id < kFirstWordId)
      return std::to_string(id - kFirstDigitId);
    if (id >= kFirstWordId && id < kFirstWordId + static_cast<int32_t>(kWords.size()))
      return kWords[id - kFirstWordId];
  }
  return "s" + std::to_string(id);
}

} // namespace tgc::runtime
