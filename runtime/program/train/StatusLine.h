//===- StatusLine.h - the live line under the training log ------*- C++ -*-===//
//
// On a terminal the training log keeps its lines and draws one status line
// below them (ProgressLog.h), rewritten in place. Whatever else prints a line
// while training (validation, checkpoints, warnings) clears it first, so
// that its line starts at the left margin and no status text is left in it.
// Elsewhere (a pipe, a file) nothing is drawn and clearing does nothing.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_TRAIN_STATUSLINE_H
#define TGC_RUNTIME_TRAIN_STATUSLINE_H

#include <string>

namespace tgc::runtime {

/// Replaces the status line on stdout (a terminal's) with `text`.
void drawStatusLine(const std::string &text);

/// Erases the status line, if one is drawn, leaving the cursor at the start
/// of its empty line.
void clearStatusLine();

} // namespace tgc::runtime

#endif // TGC_RUNTIME_TRAIN_STATUSLINE_H
