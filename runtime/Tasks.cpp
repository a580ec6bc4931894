//===- Tasks.cpp - built-in synthetic translation tasks -------------------===//
#include "runtime/Tasks.h"

#include <algorithm>

namespace tgc::runtime {
namespace {

/// SplitMix64: a tiny generator whose output is fully specified, so batches
/// are identical across compilers and standard libraries.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t state) : state(state) {}
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [lo, hi] (the modulo bias is negligible for small ranges).
  int64_t between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }

private:
  uint64_t state;
};

/// Writes `ids` then padding into row `row` of a [rows, length] buffer.
void putRow(std::vector<int32_t> &buffer, int64_t row, int64_t length,
            const std::vector<int32_t> &ids) {
  std::copy(ids.begin(), ids.end(), buffer.begin() + row * length);
}

} // namespace

std::optional<Task> parseTask(std::string_view name) {
  if (name == "copy")
    return Task::Copy;
  if (name == "reverse")
    return Task::Reverse;
  return std::nullopt;
}

const char *taskName(Task task) {
  return task == Task::Copy ? "copy" : "reverse";
}

const char *taskNames() { return "copy, reverse"; }

int64_t Batch::targetTokens() const {
  return std::count_if(targetOut.begin(), targetOut.end(),
                       [](int32_t id) { return id != kPadId; });
}

std::vector<int32_t> taskOutput(Task task, std::span<const int32_t> symbols) {
  std::vector<int32_t> output(symbols.begin(), symbols.end());
  if (task == Task::Reverse)
    std::reverse(output.begin(), output.end());
  return output;
}

std::string_view validateBatchShape(const BatchShape &shape) {
  if (shape.batchSize < 1)
    return "the batch size must be at least 1";
  if (shape.sourceLength < 2 || shape.targetLength < 2)
    return "source and target lengths must be at least 2 (a symbol and EOS)";
  if (shape.vocabulary <= kFirstSymbolId)
    return "the vocabulary must be larger than 3 (padding, BOS, EOS, symbols)";
  return {};
}

Batch makeBatch(Task task, uint32_t seed, uint64_t index,
                const BatchShape &shape) {
  Batch batch;
  batch.batchSize = shape.batchSize;
  batch.sourceLength = shape.sourceLength;
  batch.targetLength = shape.targetLength;
  batch.source.assign(shape.batchSize * shape.sourceLength, kPadId);
  batch.targetIn.assign(shape.batchSize * shape.targetLength, kPadId);
  batch.targetOut.assign(shape.batchSize * shape.targetLength, kPadId);

  SplitMix64 rng((static_cast<uint64_t>(seed) << 32) ^ (index * 0x2545f491ull) ^
                 (static_cast<uint64_t>(task) << 62));
  int64_t maxSymbols = std::min(shape.sourceLength, shape.targetLength) - 1;
  for (int64_t row = 0; row < shape.batchSize; ++row) {
    std::vector<int32_t> symbols(rng.between(1, maxSymbols));
    for (int32_t &s : symbols)
      s = static_cast<int32_t>(rng.between(kFirstSymbolId, shape.vocabulary - 1));
    std::vector<int32_t> output = taskOutput(task, symbols);

    std::vector<int32_t> source = symbols, targetIn = {kBosId}, targetOut = output;
    source.push_back(kEosId);
    targetIn.insert(targetIn.end(), output.begin(), output.end());
    targetOut.push_back(kEosId);
    putRow(batch.source, row, shape.sourceLength, source);
    putRow(batch.targetIn, row, shape.targetLength, targetIn);
    putRow(batch.targetOut, row, shape.targetLength, targetOut);
  }
  return batch;
}

} // namespace tgc::runtime
