//===- LmWindows.cpp - a corpus of documents as language-model windows ---===//
#include "runtime/program/train/LmWindows.h"

#include "runtime/data/SplitMix64.h"

#include <algorithm>
#include <numeric>

namespace tgc::runtime {

LmWindows::LmWindows(const TokenCorpus &corpus, int64_t context, int64_t rows)
    : corpus(corpus), context(context), rows(rows) {
  stream = corpus.targetTokens() + corpus.size();
  count = stream > 0 ? (stream - 1) / static_cast<uint64_t>(context) : 0;
  // A window needs context + 1 tokens: a shorter stream has none (the
  // caller refuses it), and batch() is never asked for one.
}

uint64_t LmWindows::documentStart(uint64_t d) const {
  // Document d's tokens follow those of the documents before it and their
  // d end tokens.
  return static_cast<uint64_t>(corpus.target(d).data() -
                               corpus.target(0).data()) +
         d;
}

void LmWindows::window(uint64_t w, int32_t *out) const {
  uint64_t position = w * static_cast<uint64_t>(context);
  // The document that holds `position`: the last one starting at or before.
  uint64_t lo = 0, hi = corpus.size();
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    (documentStart(mid) <= position ? lo : hi) = mid;
  }
  uint64_t d = lo, at = position - documentStart(lo);
  for (int64_t i = 0; i <= context; ++i) {
    std::span<const int32_t> document = corpus.target(d);
    if (at < document.size()) {
      out[i] = document[at++];
    } else { // the end token, then the next document
      out[i] = kEosId;
      ++d;
      at = 0;
    }
  }
}

Batch LmWindows::emptyRows() const {
  return emptyBatch({rows, 0, context,
                     static_cast<int32_t>(corpus.vocabularySize())});
}

void LmWindows::fillRow(Batch &batch, int64_t row, uint64_t w) const {
  std::vector<int32_t> tokens(static_cast<size_t>(context) + 1);
  window(w, tokens.data());
  std::copy(tokens.begin(), tokens.end() - 1,
            batch.targetIn.begin() + row * context);
  std::copy(tokens.begin() + 1, tokens.end(),
            batch.targetOut.begin() + row * context);
}

Batch LmWindows::batch(uint32_t seed, uint64_t index) const {
  uint64_t epoch = index / batchesPerEpoch();
  if (epoch != orderEpoch || seed != orderSeed) {
    order.resize(count);
    std::iota(order.begin(), order.end(), uint64_t{0});
    shuffle(order, epochSeed(seed, epoch, 3));
    orderEpoch = epoch;
    orderSeed = seed;
  }
  Batch batch = emptyRows();
  uint64_t first = (index % batchesPerEpoch()) * static_cast<uint64_t>(rows);
  for (int64_t row = 0; row < rows && first + row < count; ++row)
    fillRow(batch, row, order[first + row]);
  return batch;
}

Batch LmWindows::inOrder(uint64_t first) const {
  Batch batch = emptyRows();
  for (int64_t row = 0; row < rows && first + row < count; ++row)
    fillRow(batch, row, first + row);
  return batch;
}

std::vector<int32_t> promptOf(const SentencePair &pair) {
  std::vector<int32_t> prompt = pair.source;
  prompt.push_back(kEosId);
  return prompt;
}

Batch promptRows(std::span<const SentencePair> pairs, int64_t rows,
                 int64_t context, int32_t vocabulary) {
  Batch batch = emptyBatch({rows, 0, context, vocabulary});
  for (size_t r = 0; r < pairs.size() && static_cast<int64_t>(r) < rows; ++r) {
    std::vector<int32_t> tokens = promptOf(pairs[r]);
    size_t prompt = tokens.size();
    tokens.insert(tokens.end(), pairs[r].target.begin(), pairs[r].target.end());
    tokens.push_back(kEosId);
    for (size_t i = 0; i + 1 < tokens.size(); ++i) {
      batch.targetIn[r * context + i] = tokens[i];
      // Position i predicts token i + 1: a continuation token from the
      // prompt's last position on.
      if (i + 1 >= prompt)
        batch.targetOut[r * context + i] = tokens[i + 1];
    }
  }
  return batch;
}

std::vector<SentencePair> taskPairs(const Batch &batch) {
  std::vector<SentencePair> pairs(batch.batchSize);
  auto symbols = [](const std::vector<int32_t> &ids, int64_t row,
                    int64_t length) {
    std::vector<int32_t> out;
    for (int64_t i = 0; i < length; ++i) {
      int32_t id = ids[row * length + i];
      if (id == kEosId || id == kPadId)
        break;
      out.push_back(id);
    }
    return out;
  };
  for (int64_t r = 0; r < batch.batchSize; ++r)
    pairs[r] = {symbols(batch.source, r, batch.sourceLength),
                symbols(batch.targetOut, r, batch.targetLength)};
  return pairs;
}

BatchShape promptPairShape(const BatchShape &lmShape) {
  // Both sides with their EOS in one window of context + 1 tokens.
  int64_t half = (lmShape.targetLength + 1) / 2;
  return {lmShape.batchSize, half, half, lmShape.vocabulary};
}

Batch promptTaskBatch(Task task, uint32_t seed, uint64_t index,
                      const BatchShape &lmShape) {
  return promptRows(taskPairs(makeBatch(task, seed, index,
                                        promptPairShape(lmShape))),
                    lmShape.batchSize, lmShape.targetLength, lmShape.vocabulary);
}

} // namespace tgc::runtime
