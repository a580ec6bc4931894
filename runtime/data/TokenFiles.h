//===- TokenFiles.h - parallel corpora of token ids ---------------*- C++ -*-===//
//
// A user's data for the training binary: two text files, source and target,
// one sentence per line, each line the sentence's token ids separated by
// spaces ("17 4 230"). Ids 0-2 are padding, BOS and EOS, which the runtime
// adds itself, so a line holds ids >= 3 below the model's vocabulary.
//
// Lines are paired by number. A pair with an empty side, or one longer than
// the model's static lengths (symbols + EOS), is skipped and counted; a
// malformed id, an id out of range or files of different line counts is an
// error naming file:line (the id quoted printably, cut after 80 bytes); a
// directory or an empty file is an error naming it.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_TOKENFILES_H
#define TGC_RUNTIME_TOKENFILES_H

#include "runtime/data/Tasks.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace tgc::runtime {

struct ParallelCorpus {
  std::vector<SentencePair> pairs;
  int64_t lines = 0;           ///< pairs read, kept or not
  int64_t skippedEmpty = 0;    ///< a side had no tokens
  int64_t skippedTooLong = 0;  ///< a side did not fit the model's lengths
  /// FNV-1a over every pair read, kept or not (each side's length and ids):
  /// what the files hold, whatever model reads them.
  uint64_t contentHash = 0xcbf29ce484222325ull;
};

/// A line longer than this is not a sentence (an endless stream such as
/// /dev/zero, a binary file): refused instead of read into memory.
inline constexpr size_t kMaxLineBytes = size_t{64} << 20;

/// The most lines and bytes a token-id file may hold: each pair is held
/// in memory as vectors (about 100 bytes and its ids), so an endless input
/// (`<(yes 3)`) filled memory and ended in std::bad_alloc. A larger corpus
/// is encoded once (tgc-data encode's .tok, which is mapped, not read).
inline constexpr int64_t kMaxTokenFileLines = int64_t{1} << 26;
inline constexpr uint64_t kMaxTokenFileBytes = uint64_t{4} << 30;

enum class LineRead { Line, End, TooLong, Failed };

/// The lines of a descriptor (not owned), read with read(2): unlike an
/// istream's, a failed read (standard input a directory, EIO) is an error,
/// never the end of the input.
class LineReader {
public:
  explicit LineReader(int fd) : fd(fd) {}
  /// The next line without its newline; TooLong once a line has
  /// kMaxLineBytes bytes and no newline; Failed with error() set.
  LineRead next(std::string &line);
  /// strerror's text of the failed read.
  const std::string &error() const { return error_; }

private:
  int fd;
  char buffer[1 << 16];
  size_t begin = 0, end = 0;
  bool ended = false;
  std::string error_;
};

/// Reads `sourcePath` and `targetPath` for a model of `shape`. Returns an
/// empty string or the first problem, as "file:line: message".
std::string readParallelTokenFiles(const std::string &sourcePath,
                                   const std::string &targetPath,
                                   const BatchShape &shape,
                                   ParallelCorpus &corpus);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_TOKENFILES_H
