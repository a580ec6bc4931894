//===- InputFile.h - reading what a user feeds tgc and tgc-opt ----*- C++ -*-===//
//
// Every input file goes through here before a parser sees it: a file that
// never ends (/dev/zero, a FIFO), a directory or a huge file is refused with
// its name, and text nested deeper than the recursive MLIR parser can take
// (it would overflow the stack) is refused at its line and column.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_FRONTEND_INPUTFILE_H
#define TGC_FRONTEND_INPUTFILE_H

#include "common/Nesting.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <string>

namespace tgc {

/// The largest input file (.mlir, graph file, config) tgc and tgc-opt read.
inline constexpr uint64_t kMaxInputBytes = uint64_t(256) << 20;

/// Why `path` is refused, naming the file ("X is a directory, not a file",
/// "X is a character device, not a regular file", "X is too large ..."), or
/// empty for a regular file of at most kMaxInputBytes and for a path that
/// cannot be examined (opening it reports that).
/// `what` names the file's role in the message ("the config file").
std::string checkInputPath(llvm::StringRef path, llvm::StringRef what = "");

/// Reads `path` whole, or standard input for "-" (at most kMaxInputBytes).
/// Refuses what checkInputPath refuses; null with `error` set on failure
/// ("cannot open input file 'X': ..." when it cannot be opened).
std::unique_ptr<llvm::MemoryBuffer> readInputFile(llvm::StringRef path,
                                                  std::string &error,
                                                  llvm::StringRef what = "");

/// "FILE:LINE:COL: error: nesting deeper than N levels ..." for the buffer's
/// first too deep bracket, or empty when it nests no deeper than the limit.
std::string checkNesting(const llvm::MemoryBuffer &buffer,
                         int limit = kMaxNestingDepth);

} // namespace tgc

#endif // TGC_FRONTEND_INPUTFILE_H
