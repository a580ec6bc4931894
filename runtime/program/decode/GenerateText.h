//===- GenerateText.h - the binary's --generate mode -------------*- C++ -*-===//
//
// A language model's text generation: reads prompts (one a line), encodes
// them with the SentencePiece model, continues each (Translate.h's
// continuePrompts: greedy, or sampled with --temperature, --top-k, --top-p
// and --seed), and writes each prompt with its continuation, detokenized,
// one line a prompt, atomically to --output. A prompt longer than the
// context keeps its last tokens, with a note.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_DECODE_GENERATETEXT_H
#define TGC_RUNTIME_DECODE_GENERATETEXT_H

#include "runtime/program/CompiledStep.h"
#include "runtime/program/train/ModelState.h"
#include "runtime/program/train/Options.h"

namespace tgc::runtime {

/// Continues --generate's prompts into --output; returns the exit code.
int generateText(const CompiledModel &model, const TrainOptions &options,
                 ModelState &memory);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_DECODE_GENERATETEXT_H
