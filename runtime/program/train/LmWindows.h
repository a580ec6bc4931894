//===- LmWindows.h - a corpus of documents as language-model windows -*- C++ -*-===//
//
// A language model trains on one token stream: the documents of a .tok
// corpus of documents (tgc-data encode --text), each followed by the
// end-of-document token (kEosId). The stream is cut into windows of
// `context + 1` tokens that start every `context` tokens (each window's
// last token is the next one's first: it is predicted once, from the full
// context), packed across document ends as nanoGPT and fairseq's
// --sample-break-mode none do. A window gives a row of a batch: the first
// `context` tokens are its input, the last `context` its next-token
// targets.
//
// Training draws windows in a seeded order per epoch (every window once an
// epoch; batch i is a pure function of (seed, i), so a resumed run sees the
// same batches); validation reads every window in stream order.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_TRAIN_LMWINDOWS_H
#define TGC_RUNTIME_TRAIN_LMWINDOWS_H

#include "runtime/data/Tasks.h"
#include "runtime/data/TokenCorpus.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace tgc::runtime {

class LmWindows {
public:
  /// `corpus` (of documents, outliving this) in windows of `context` + 1
  /// tokens; rows windows a batch.
  LmWindows(const TokenCorpus &corpus, int64_t context, int64_t rows);

  /// Tokens in the stream: the documents' and one end token each.
  uint64_t streamLength() const { return stream; }
  /// Whole windows in the stream (the tokens after the last are unused);
  /// 0 for a stream shorter than a window, which nothing may draw from.
  uint64_t windows() const { return count; }
  /// Training batches an epoch: every window once, the last batch's
  /// missing rows padding.
  uint64_t batchesPerEpoch() const { return (count + rows - 1) / rows; }

  /// The `context` + 1 tokens of window `w` into `out`.
  void window(uint64_t w, int32_t *out) const;
  /// Training batch `index` (epochs follow one another).
  Batch batch(uint32_t seed, uint64_t index) const;
  /// The windows [first, first + rows) in stream order, the rows past the
  /// last window padding: validation's batches.
  Batch inOrder(uint64_t first) const;
  /// Passes over the windows once `batches` batches are drawn.
  double epochsAfter(uint64_t batches) const {
    return static_cast<double>(batches) /
           static_cast<double>(batchesPerEpoch());
  }
  /// The first batch after `epochs` passes (to the nearest batch).
  uint64_t batchesBefore(double epochs) const {
    return static_cast<uint64_t>(std::llround(
        std::max(epochs, 0.0) * static_cast<double>(batchesPerEpoch())));
  }
  /// Tokens a window holds: the context and the next token.
  int64_t windowLength() const { return context + 1; }

private:
  /// The stream position where document d starts.
  uint64_t documentStart(uint64_t d) const;
  Batch emptyRows() const;
  void fillRow(Batch &batch, int64_t row, uint64_t w) const;

  const TokenCorpus &corpus;
  int64_t context, rows;
  uint64_t stream = 0, count = 0;
  /// The order of the windows in the epoch it was drawn for.
  mutable std::vector<uint64_t> order;
  mutable uint64_t orderEpoch = UINT64_MAX;
  mutable uint32_t orderSeed = 0;
};

/// A language model's rows for sentence pairs (the built-in tasks): the
/// prompt (source, EOS) then its continuation (target, EOS). The prompt's
/// positions predict nothing (their targets are padding), so the loss is
/// the continuation's, as a translation model's is. Each pair must fit:
/// source + target + 2 <= context + 1.
Batch promptRows(std::span<const SentencePair> pairs, int64_t rows,
                 int64_t context, int32_t vocabulary);

/// The prompt promptRows gives a pair: its source and EOS.
std::vector<int32_t> promptOf(const SentencePair &pair);

/// The pairs of a packed translation batch: each row's symbols up to EOS.
std::vector<SentencePair> taskPairs(const Batch &batch);

/// The shape of the task pairs a language model of `lmShape` (batch x 0 x
/// context) takes: each side at most half a window with its EOS.
BatchShape promptPairShape(const BatchShape &lmShape);

/// Batch `index` of a built-in task for a language model: its pairs in
/// promptPairShape as promptRows.
Batch promptTaskBatch(Task task, uint32_t seed, uint64_t index,
                      const BatchShape &lmShape);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_TRAIN_LMWINDOWS_H
