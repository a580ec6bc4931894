//===- Tasks.h - built-in synthetic translation tasks -------------*- C++ -*-===//
//
// Small tasks a model can learn in minutes on a CPU, to show that training
// works end to end: `copy` (output = input) and `reverse` (output = input
// backwards). Batches are a pure function of (task, seed, batch index,
// shapes), so every backend and a resumed run see the same data.
//
// Token ids: 0 pads, 1 begins and 2 ends a sentence, 3.. are symbols. A
// sentence of n symbols s gives source = s EOS, target_in = BOS t,
// target_out = t EOS (t the task's output), each padded to its length.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_TASKS_H
#define TGC_RUNTIME_TASKS_H

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace tgc::runtime {

inline constexpr int32_t kPadId = 0;
inline constexpr int32_t kBosId = 1;
inline constexpr int32_t kEosId = 2;
inline constexpr int32_t kFirstSymbolId = 3;

enum class Task { Copy, Reverse };

/// "copy" / "reverse"; nullopt for anything else.
std::optional<Task> parseTask(std::string_view name);
const char *taskName(Task task);
/// Every task name, for messages: "copy, reverse".
const char *taskNames();

/// One batch in the training step's layout: row-major [batch, length] ids.
struct Batch {
  int64_t batchSize = 0, sourceLength = 0, targetLength = 0;
  std::vector<int32_t> source, targetIn, targetOut;

  /// Non-padding positions of targetOut: the tokens the loss averages over.
  int64_t targetTokens() const;
};

struct BatchShape {
  int64_t batchSize, sourceLength, targetLength;
  int32_t vocabulary;
};

/// The task's output for the symbols of one source sentence.
std::vector<int32_t> taskOutput(Task task, std::span<const int32_t> symbols);

/// Batch number `index` of `task` under `seed`. Sentence lengths are uniform
/// in [1, min(sourceLength, targetLength) - 1], symbols uniform in
/// [kFirstSymbolId, vocabulary). Needs vocabulary > kFirstSymbolId and
/// lengths >= 2 (checked by the caller: see validateBatchShape).
Batch makeBatch(Task task, uint32_t seed, uint64_t index,
                const BatchShape &shape);

/// Why `shape` cannot hold a task's sentences, or empty when it can.
std::string_view validateBatchShape(const BatchShape &shape);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_TASKS_H
