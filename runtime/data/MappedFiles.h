//===- MappedFiles.h - a mapped file that shrinks is an error -----*- C++ -*-===//
//
// A file mapped into memory can be shortened under the process (another
// process truncates or rewrites it); reading a page past its new end then
// raises SIGBUS, which killed the program with no word of why. While a
// mapping is watched here, that SIGBUS ends the process with an error that
// names the file (exit status 1); a SIGBUS anywhere else takes its default
// action as before.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_DATA_MAPPEDFILES_H
#define TGC_RUNTIME_DATA_MAPPEDFILES_H

#include <cstddef>
#include <string>

namespace tgc::runtime {

/// Watches `bytes` bytes at `address`, mapped from `path` (up to 16
/// mappings at once; more are not watched).
void watchMapping(const void *address, size_t bytes, const std::string &path);
/// Stops watching the mapping at `address` (before it is unmapped).
void unwatchMapping(const void *address);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_DATA_MAPPEDFILES_H
