//===- TokenFiles.cpp - parallel corpora of token ids ---------------------===//
#include "runtime/data/TokenFiles.h"

#include "runtime/data/FileChecks.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <new>
#include <tuple>
#include <unistd.h>

namespace tgc::runtime {
namespace {

/// Parses one line's ids; returns an empty string or the problem.
std::string parseIds(std::string_view line, int32_t vocabulary,
                     std::vector<int32_t> &ids) {
  size_t i = 0;
  while (i < line.size()) {
    if (line[i] == ' ' || line[i] == '\t' || line[i] == '\r') {
      ++i;
      continue;
    }
    size_t end = line.find_first_of(" \t\r", i);
    std::string_view word = line.substr(i, end == std::string_view::npos
                                               ? std::string_view::npos
                                               : end - i);
    int64_t id = 0;
    auto [stop, error] = std::from_chars(word.data(), word.data() + word.size(), id);
    if (error != std::errc() || stop != word.data() + word.size())
      return "'" + quoteInput(word) + "' is not a token id";
    if (id < kFirstSymbolId || id >= vocabulary)
      return "token id " + quoteInput(word) + " is outside [" +
             std::to_string(kFirstSymbolId) + ", " + std::to_string(vocabulary) +
             ") (0-2 are padding, BOS and EOS; the vocabulary has " +
             std::to_string(vocabulary) + " ids)";
    ids.push_back(static_cast<int32_t>(id));
    i += word.size();
  }
  return {};
}

} // namespace

LineRead LineReader::next(std::string &line) {
  line.clear();
  for (;;) {
    if (begin == end) {
      if (ended)
        return line.empty() ? LineRead::End : LineRead::Line;
      ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0) {
        error_ = std::strerror(errno);
        return LineRead::Failed;
      }
      begin = 0;
      end = static_cast<size_t>(n);
      ended = n == 0;
      continue;
    }
    const char *start = buffer + begin;
    const char *newline =
        static_cast<const char *>(std::memchr(start, '\n', end - begin));
    size_t take = newline ? static_cast<size_t>(newline - start) : end - begin;
    if (line.size() + take > kMaxLineBytes)
      return LineRead::TooLong;
    line.append(start, take);
    begin += take;
    if (newline) {
      ++begin;
      return LineRead::Line;
    }
  }
}

std::string readParallelTokenFiles(const std::string &sourcePath,
                                   const std::string &targetPath,
                                   const BatchShape &shape,
                                   ParallelCorpus &corpus) {
  // A directory opens as an empty stream, and an empty file has no pairs:
  // both would end as "no pair fits".
  for (const std::string *path : {&sourcePath, &targetPath})
    if (std::string why = checkInputFile(*path); !why.empty())
      return ::access(path->c_str(), F_OK) != 0
                 ? *path + ": cannot open: " + std::strerror(errno)
                 : why;
  Descriptor sourceFile{openReader(sourcePath.c_str())};
  if (sourceFile.fd < 0)
    return sourcePath + ": cannot open: " + std::strerror(errno);
  Descriptor targetFile{openReader(targetPath.c_str())};
  if (targetFile.fd < 0)
    return targetPath + ": cannot open: " + std::strerror(errno);
  LineReader source(sourceFile.fd), target(targetFile.fd);
  std::string sourceLine, targetLine;
  uint64_t sourceBytes = 0, targetBytes = 0;
  try {
    for (int64_t line = 1;; ++line) {
      LineRead sourceRead = source.next(sourceLine);
      LineRead targetRead = target.next(targetLine);
      sourceBytes += sourceLine.size() + 1;
      targetBytes += targetLine.size() + 1;
      if (line > kMaxTokenFileLines || sourceBytes > kMaxTokenFileBytes ||
          targetBytes > kMaxTokenFileBytes)
        return (sourceBytes >= targetBytes ? sourcePath : targetPath) + ":" +
               std::to_string(line) + ": more than " +
               (line > kMaxTokenFileLines
                    ? std::to_string(kMaxTokenFileLines) + " lines"
                    : std::string("4 GiB")) +
               " of token ids, which are read into memory: encode a corpus "
               "this large with tgc-data encode (its .tok is mapped) and give "
               "it with --train-data";
      for (auto [read, path, reader] :
           {std::tuple{sourceRead, &sourcePath, &source},
            std::tuple{targetRead, &targetPath, &target}}) {
        if (read == LineRead::TooLong)
          return *path + ":" + std::to_string(line) +
                 ": the line is longer than " +
                 std::to_string(kMaxLineBytes >> 20) +
                 " MiB (not a file of token ids?)";
        if (read == LineRead::Failed)
          return *path + ":" + std::to_string(line) +
                 ": cannot read: " + reader->error();
      }
      bool hasSource = sourceRead == LineRead::Line;
      bool hasTarget = targetRead == LineRead::Line;
      if (!hasSource && !hasTarget)
        break;
      if (hasSource != hasTarget) {
        const std::string &shorter = hasSource ? targetPath : sourcePath;
        return shorter + ":" + std::to_string(line) + ": the file ends after " +
               std::to_string(line - 1) + " lines, its parallel file has more";
      }
      ++corpus.lines;
      // A byte-order mark (an editor's, before the first line) is no token.
      // An encoded corpus is named as one ("'TGCTOKS' is not a token id").
      if (line == 1) {
        for (auto [text, path] : {std::pair{&sourceLine, &sourcePath},
                                  {&targetLine, &targetPath}}) {
          if (text->starts_with("\xef\xbb\xbf"))
            text->erase(0, 3);
          if (text->starts_with("TGCTOKS") || text->starts_with("TGCDOCS"))
            return *path +
                   " is an encoded corpus (tgc-data encode's .tok), not "
                   "a file of token ids: give it with --train-data or "
                   "--valid-data";
        }
      }
      SentencePair pair;
      if (std::string why = parseIds(sourceLine, shape.vocabulary, pair.source);
          !why.empty())
        return sourcePath + ":" + std::to_string(line) + ": " + why;
      if (std::string why = parseIds(targetLine, shape.vocabulary, pair.target);
          !why.empty())
        return targetPath + ":" + std::to_string(line) + ": " + why;
      for (const std::vector<int32_t> *side : {&pair.source, &pair.target}) {
        corpus.contentHash =
            (corpus.contentHash ^ side->size()) * 0x100000001b3ull;
        for (int32_t id : *side)
          corpus.contentHash =
              (corpus.contentHash ^ static_cast<uint32_t>(id)) *
              0x100000001b3ull;
      }
      if (pair.source.empty() || pair.target.empty()) {
        ++corpus.skippedEmpty;
        continue;
      }
      // Each side needs room for its EOS (and the target for BOS in target_in).
      if (static_cast<int64_t>(pair.source.size()) + 1 > shape.sourceLength ||
          static_cast<int64_t>(pair.target.size()) + 1 > shape.targetLength) {
        ++corpus.skippedTooLong;
        continue;
      }
      corpus.pairs.push_back(std::move(pair));
    }
  } catch (const std::bad_alloc &) {
    return sourcePath + ": the token ids of it and " + targetPath +
           " do not fit in memory after " + std::to_string(corpus.lines) +
           " lines: encode them with tgc-data encode (its .tok is mapped) "
           "and give it with --train-data";
  }
  return {};
}

} // namespace tgc::runtime
