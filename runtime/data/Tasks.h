//===- Tasks.h - built-in synthetic translation tasks -------------*- C++ -*-===//
//
// Small tasks a model can learn in minutes on a CPU, to show that training
// works end to end:
//   copy     output = input (random symbols)
//   reverse  output = input backwards
//   digits   a number's decimal digits -> its English words, e.g.
//            "1 0 1 7" -> "one thousand seventeen": lengths differ, zeros
//            vanish and teens reorder ("1 7" -> "seventeen").
// Batches are a pure function of (task, seed, batch index, shapes), so every
// backend and a resumed run see the same data.
//
// Held out: a sentence whose source hashes to 0 mod 16 is never trained on;
// the evaluation set is drawn from those only, so accuracy measures
// generalization, not memory.
//
// Token ids: 0 pads, 1 begins and 2 ends a sentence, 3.. are symbols. A
// pair (s, t) gives source = s EOS, target_in = BOS t, target_out = t EOS,
// each padded to its length.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_TASKS_H
#define TGC_RUNTIME_TASKS_H

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tgc::runtime {

inline constexpr int32_t kPadId = 0;
inline constexpr int32_t kBosId = 1;
inline constexpr int32_t kEosId = 2;
inline constexpr int32_t kFirstSymbolId = 3;

enum class Task { Copy, Reverse, Digits };

/// "copy" / "reverse" / "digits"; nullopt for anything else.
std::optional<Task> parseTask(std::string_view name);
const char *taskName(Task task);
/// Every task name, for messages: "copy, reverse, digits".
const char *taskNames();

/// One sentence pair, symbols only (no BOS, EOS or padding).
struct SentencePair {
  std::vector<int32_t> source, target;
};

/// One batch in the training step's layout: row-major [batch, length] ids.
struct Batch {
  int64_t batchSize = 0, sourceLength = 0, targetLength = 0;
  std::vector<int32_t> source, targetIn, targetOut;

  /// Non-padding positions of targetOut: the tokens the loss averages over.
  int64_t targetTokens() const;
  /// Non-padding positions of source.
  int64_t sourceTokens() const;
  /// Source and target positions in all (padding included).
  int64_t slots() const { return batchSize * (sourceLength + targetLength); }
};

struct BatchShape {
  int64_t batchSize, sourceLength, targetLength;
  int32_t vocabulary;
};

/// Writes one pair into row `row` of `batch` (which starts all padding):
/// source EOS, BOS target, target EOS. The pair must fit.
void packRow(Batch &batch, int64_t row, std::span<const int32_t> source,
             std::span<const int32_t> target);

/// An all-padding batch of `shape`.
Batch emptyBatch(const BatchShape &shape);

/// Rows of `pairs` in the step's layout; each must fit (symbols + EOS within
/// the lengths). Rows past pairs.size() are all padding.
Batch packBatch(std::span<const SentencePair> pairs, const BatchShape &shape);

/// The task's output for the symbols of one source sentence.
std::vector<int32_t> taskOutput(Task task, std::span<const int32_t> symbols);

/// Whether `source` belongs to the held-out set (see the file comment).
bool isHeldOut(std::span<const int32_t> source);

/// Batch number `index` of `task` under `seed`: training pairs only.
/// copy/reverse: lengths uniform in [1, min(sourceLength, targetLength) - 1],
/// symbols uniform in [kFirstSymbolId, vocabulary). digits: the number of
/// digits uniform in [1, the most that fit]. Needs validateBatchShape.
Batch makeBatch(Task task, uint32_t seed, uint64_t index,
                const BatchShape &shape);

/// `count` distinct held-out pairs of `task` (fewer if the task has fewer),
/// the same for every seed. Drawing hundreds of thousands takes seconds, so
/// `poll` (if given) is called every few thousand draws: a program's Ctrl-C
/// check, which may end it, or return true to stop the draw there (the
/// pairs drawn so far are returned).
std::vector<SentencePair> heldOutPairs(Task task, int64_t count,
                                       const BatchShape &shape,
                                       const std::function<bool()> &poll = {});

/// Why `shape` cannot hold `task`'s sentences, or empty when it can.
std::string validateBatchShape(Task task, const BatchShape &shape);

/// How a token reads in samples: "7" and "seventeen" for digits, "s4" for
/// the symbols of copy and reverse, "<eos>" and the like for the specials.
std::string tokenText(Task task, int32_t id);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_TASKS_H
