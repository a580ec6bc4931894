//===- TranslateText.h - the binary's --translate mode -------------*- C++ -*-===//
//
// Reads raw text (one sentence per line), encodes it with the SentencePiece
// model (VocabularyTool.h), translates it with beam search (Translate.h) and
// writes the detokenized translations, one line per input line, atomically
// to --output. A line longer than every bucket's source is cut to the
// longest and reported; an empty line gives an empty translation (it is
// not decoded); an output that reaches its bucket's longest is ended there
// (EOS at the last position, scored) and reported; invalid
// UTF-8 is refused, naming its line.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_TRAIN_TRANSLATETEXT_H
#define TGC_RUNTIME_TRAIN_TRANSLATETEXT_H

#include "runtime/program/CompiledStep.h"
#include "runtime/program/train/ModelState.h"
#include "runtime/program/train/Options.h"
#include "runtime/program/train/VocabularyTool.h"

namespace tgc::runtime {

/// The most text one --translate or --generate run reads: it is
/// held in memory, so a pipe that never ends (`yes |`) is refused, not read
/// until memory runs out. Short lines cost more than their bytes, hence the
/// count of lines too.
struct TextInputLimits {
  size_t bytes = size_t{1} << 30;
  size_t lines = size_t{1} << 24;
};

/// The lines of `path` ("-": standard input; `name` is what messages call
/// it), each at most kMaxLineBytes and all within `limits` (a larger input
/// is an error naming it, not a partial read); false after a message.
bool readTextLines(const std::string &path, std::vector<std::string> &lines,
                   std::string &name, TextInputLimits limits = {});

/// The lines of `path` ("-": standard input; `name` is what messages call
/// it), each at most kMaxLineBytes, as token ids of the vocabulary at
/// `vocabularyPath` (none for a line of spaces), which it opens into
/// `vocabulary` once the lines are read (a bad input is named first);
/// false after a message.
bool readEncodedLines(const std::string &path,
                      const std::string &vocabularyPath,
                      const CompiledModel &model,
                      std::unique_ptr<VocabularyTool> &vocabulary,
                      std::vector<std::vector<int32_t>> &ids,
                      std::string &name);

/// `text` to `path` atomically, or to standard output when `path` is empty
/// (`what` names it in messages); false after a message.
bool writeText(const std::string &path, const std::string &text,
               const char *what);

/// Translates --translate into --output; returns the exit code.
int translateText(const CompiledModel &model, const TrainOptions &options,
                  ModelState &memory);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_TRAIN_TRANSLATETEXT_H
