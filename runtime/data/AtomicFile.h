//===- AtomicFile.h - files that appear whole or not at all -------*- C++ -*-===//
//
// Writes go to "<path>.tmp.<pid>.<n>" (a name no other writer uses, in
// <path>'s directory) through a buffer; every write is checked; commit()
// flushes the file to disk and renames it over <path>, so a crash, a full
// disk or an error leaves whatever <path> held before. A file never
// committed is removed. A <path> that exists and is not a regular file is
// never renamed over: a directory is refused, and a device or a FIFO
// (/dev/full) is written directly, its errors reported; one of the process's
// own open files (/dev/stdout, /dev/fd/N) through its descriptor, sharing
// its offset. A symbolic link stays a link: the file it names is replaced.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_ATOMICFILE_H
#define TGC_RUNTIME_ATOMICFILE_H

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace tgc::runtime {

class AtomicFile {
public:
  /// Creates the temporary file; check error() before writing.
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile &) = delete;
  AtomicFile &operator=(const AtomicFile &) = delete;

  /// Appends bytes; a failure is kept for error() and commit().
  void write(const void *data, size_t bytes);
  void write(std::string_view bytes) { write(bytes.data(), bytes.size()); }

  /// Flushes, syncs and renames into place. Returns an empty string or
  /// "cannot write <path>: ..." (then <path> is as it was).
  std::string commit();
  /// Flushes and syncs, all but the rename: commit() then only renames.
  /// Returns an empty string or the first failure.
  std::string finishWrites();

  /// The first failure so far, as commit() would report it; empty if none.
  const std::string &error() const { return error_; }

private:
  void flush();
  void fail(const char *what);

  std::string path_, target_, temporary_, error_;
  std::vector<char> buffer_;
  int fd_ = -1;
  bool committed_ = false;
  bool direct_ = false; ///< <path> is a device or a FIFO: no rename
  bool created_ = false; ///< the temporary file is this writer's
  bool finished_ = false; ///< finishWrites() ran
};

/// Several files of one result (a vocabulary's .model and .vocab): every
/// write is finished before any is renamed, so an error in one (a disk
/// full, a directory in the way) leaves them all as they were. Returns an
/// empty string or the first failure.
std::string commitAll(std::initializer_list<AtomicFile *> files);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_ATOMICFILE_H
