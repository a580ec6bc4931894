//===- FileSizeLimit.h - a write past `ulimit -f` is an error ----*- C++ -*-===//
//
// A write that would pass the file-size limit (`ulimit -f`) raises SIGXFSZ,
// whose default action kills the process mid-write (a save, an encode)
// with no word of why. Ignored, the write fails with EFBIG instead, which
// every write tgc checks reports naming its file. Each tool calls this
// first thing in main().
//
//===----------------------------------------------------------------------===//
#ifndef TGC_COMMON_FILESIZELIMIT_H
#define TGC_COMMON_FILESIZELIMIT_H

#include <csignal>

namespace tgc {

inline void reportFileSizeLimitAsAnError() { std::signal(SIGXFSZ, SIG_IGN); }

} // namespace tgc

#endif // TGC_COMMON_FILESIZELIMIT_H
