//===- Sample.cpp - tgc-data sample: a parallel corpus to try tgc on ------===//
//
// Numbers as written and as said: "1,017" -> "one thousand seventeen", the
// built-in digits task (runtime/data/Tasks.h) as plain text. Tokenized with BPE
// it is a small translation problem with real subwords, reordering (teens)
// and length changes. Numbers whose digits hash to the held-out set (one in
// 16) never appear in --split train; valid and test take them, split by
// parity, so the three are disjoint.
//
//===----------------------------------------------------------------------===//
#include "tools/tgc-data/Commands.h"

#include "runtime/data/AtomicFile.h"
#include "runtime/data/SplitMix64.h"
#include "runtime/data/Tasks.h"

#include "llvm/Support/Path.h"

#include <set>

namespace cl = llvm::cl;
using namespace tgc::runtime;

namespace tgc::data {

cl::SubCommand sampleCommand("sample",
                             "Generate a parallel text corpus (numbers as "
                             "digits -> as words)");

namespace {

enum class Split { Train, Valid, Test };

cl::opt<int64_t> samplePairs("pairs", cl::desc("Sentence pairs to write"),
                             cl::init(1000), cl::sub(sampleCommand),
                             cl::cat(dataCategory));
cl::opt<uint64_t> sampleSeed("seed", cl::desc("Random seed (default 1)"),
                             cl::init(1), cl::sub(sampleCommand),
                             cl::cat(dataCategory));
cl::opt<int> sampleDigits("max-digits",
                          cl::desc("Longest number, in digits (1-9, default 6)"),
                          cl::init(6), cl::sub(sampleCommand),
                          cl::cat(dataCategory));
cl::opt<Split> sampleSplit(
    "split", cl::desc("Which part of the data"), cl::init(Split::Train),
    cl::values(clEnumValN(Split::Train, "train", "training pairs (default)"),
               clEnumValN(Split::Valid, "valid", "held-out, even numbers"),
               clEnumValN(Split::Test, "test", "held-out, odd numbers")),
    cl::sub(sampleCommand), cl::cat(dataCategory));
cl::opt<std::string> samplePrefix("o",
                                  cl::desc("Writes PREFIX.src and PREFIX.tgt"),
                                  cl::value_desc("PREFIX"), cl::Required,
                                  cl::sub(sampleCommand), cl::cat(dataCategory));

/// "1,234,567": digits grouped by thousands, as English text writes them.
std::string written(const std::string &digits) {
  std::string text;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      text += ',';
    text += digits[i];
  }
  return text;
}

/// The split of `number` (its digits, no leading zero), as runSample draws
/// them.
Split splitOf(const std::string &number) {
  std::vector<int32_t> symbols;
  for (char c : number)
    symbols.push_back(kFirstSymbolId + (c - '0'));
  bool even = (number.back() - '0') % 2 == 0;
  return !isHeldOut(symbols) ? Split::Train : even ? Split::Valid : Split::Test;
}

/// How many distinct numbers of up to `maxDigits` digits fall in `split`:
/// counted where there are at most a million (the held-out hash leaves
/// uneven shares of few numbers, and asking for more than there are never
/// ended), else a safe lower bound (the hash holds out one in 16, half to
/// each held-out split).
int64_t numbersIn(Split split, int maxDigits) {
  int64_t all = 1;
  for (int d = 0; d < maxDigits; ++d)
    all *= 10;
  if (all > 1'000'000)
    return split == Split::Train ? all - all / 8 : all / 40;
  int64_t count = 0;
  for (int64_t n = 0; n < all; ++n)
    count += splitOf(std::to_string(n)) == split;
  return count;
}

} // namespace

int runSample() {
  if (sampleDigits < 1 || sampleDigits > 9)
    return fail("--max-digits must be 1 to 9");
  if (samplePairs < 1)
    return fail("--pairs must be at least 1");
  // Every number drawn is held (to draw each once), and the files must
  // stay under the 4 GiB that vocab and encode read: ten million pairs are
  // about 1 GB of text and of memory.
  constexpr int64_t kMaxPairs = 10'000'000;
  if (samplePairs > kMaxPairs)
    return fail("--pairs " + std::to_string(samplePairs) + " is more than " +
                std::to_string(kMaxPairs) +
                " (about 1 GB of text; vocab and encode read 4 GiB at most)");
  const int64_t available = numbersIn(sampleSplit, sampleDigits);
  if (samplePairs > available)
    return fail("--pairs " + std::to_string(samplePairs) + " is more than the " +
                std::to_string(available) + " distinct numbers of --max-digits " +
                std::to_string(sampleDigits) + " this split can give");

  // "-o ." or "-o data/" wrote the hidden files ./.src and data/.tgt.
  // (path::filename is "." for a name that ends in '/'.)
  llvm::StringRef last = llvm::sys::path::filename(samplePrefix.getValue());
  if (last.empty() || last == "." || last == ".." || last == "/")
    return fail("-o '" + samplePrefix.getValue() + "' names a directory: give a prefix "
                "of file names, such as data/train (writes data/train.src "
                "and data/train.tgt)");
  if (!checkRunFiles({{"-o's source", samplePrefix + ".src", true},
                      {"-o's target", samplePrefix + ".tgt", true}}))
    return 1;
  SplitMix64 rng(sampleSeed.getValue() * 0x9e3779b97f4a7c15ull + 17);
  std::set<std::string> seen;
  // Whole files or none: an error leaves what was there before.
  AtomicFile source(samplePrefix + ".src"), target(samplePrefix + ".tgt");
  while (static_cast<int64_t>(seen.size()) < samplePairs) {
    int digits = 1 + static_cast<int>(rng.next() % sampleDigits);
    std::string number(1, static_cast<char>('0' + (digits == 1 ? rng.next() % 10
                                                               : 1 + rng.next() % 9)));
    for (int d = 1; d < digits; ++d)
      number += static_cast<char>('0' + rng.next() % 10);
    if (splitOf(number) != sampleSplit || !seen.insert(number).second)
      continue;
    std::vector<int32_t> symbols;
    for (char c : number)
      symbols.push_back(kFirstSymbolId + (c - '0'));
    std::string words;
    for (int32_t id : taskOutput(Task::Digits, symbols)) {
      if (!words.empty())
        words += ' ';
      words += tokenText(Task::Digits, id);
    }
    source.write(written(number) + '\n');
    target.write(words + '\n');
  }
  if (std::string error = commitAll({&source, &target}); !error.empty())
    return fail(error);
  llvm::outs() << samplePrefix << ".src + " << samplePrefix << ".tgt: "
               << samplePairs << " pairs\n";
  return 0;
}

} // namespace tgc::data
