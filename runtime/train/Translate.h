//===- Translate.h - greedy decoding with the compiled @predict -*- C++ -*-===//
//
// Translates sentence pairs' sources one batch at a time: the target starts
// as BOS; each call of predict() gives the logits of every position, the
// most likely token at the next position is appended (padding and BOS are
// never chosen), and a row stops at EOS or at the target length. The causal
// mask makes the logits of position t depend on positions <= t only, so the
// padding after the prefix does not change them.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_TRAIN_TRANSLATE_H
#define TGC_RUNTIME_TRAIN_TRANSLATE_H

#include "runtime/Tasks.h"
#include "runtime/train/CompiledStep.h"

#include <span>
#include <vector>

namespace tgc::runtime {

/// The greedy output (symbols, without EOS) for each pair's source.
std::vector<std::vector<int32_t>>
translateGreedy(const CompiledModel &model, float *state, char *arena,
                std::span<const SentencePair> pairs);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_TRAIN_TRANSLATE_H
