//===- StatusLine.cpp - the live line under the training log --------------===//
#include "runtime/program/train/StatusLine.h"

#include <algorithm>
#include <cstdio>
#include <sys/ioctl.h>
#include <unistd.h>

namespace tgc::runtime {
namespace {

/// Whether the cursor sits on a drawn status line (stdout is process-wide,
/// and so is its last line).
bool statusDrawn = false;

/// Back to the line's start and erase it: `\033[K` removes what a longer
/// previous text left behind.
constexpr const char *kEraseLine = "\r\033[K";

} // namespace

void drawStatusLine(const std::string &text) {
  // Narrower than the terminal: a wrapped line would leave its first row
  // behind, as `\r` goes back to the start of the last row only.
  winsize size{};
  size_t width = text.size();
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0)
    width = std::min<size_t>(width, size.ws_col - 1);
  std::fputs(kEraseLine, stdout);
  std::fwrite(text.data(), 1, width, stdout);
  std::fflush(stdout);
  statusDrawn = true;
}

void clearStatusLine() {
  if (!statusDrawn)
    return;
  std::fputs(kEraseLine, stdout);
  std::fflush(stdout);
  statusDrawn = false;
}

} // namespace tgc::runtime
