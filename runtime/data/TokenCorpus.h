//===- TokenCorpus.h - encoded corpora, memory-mapped -------------*- C++ -*-===//
//
// A .tok file holds the sentence pairs of a parallel corpus as token ids
// (symbols only: no BOS, EOS or padding), encoded with one vocabulary; or,
// for language models, the documents of a monolingual text (a document is a
// "pair" with no source, its tokens the target). It is read by mapping it
// into memory: opening costs one validation pass, and pairs are spans into
// the mapping. Layout, little endian, no padding:
//
//   "TGCTOKS\n" | "TGCDOCS\n"        8 bytes, the magic: pairs | documents
//   u32 version                      kTokenCorpusVersion (2)
//   u32 vocabularySize               every id is in [3, vocabularySize)
//   u64 vocabularyHash               Vocabulary::hash() of the .model file
//   u64 pairs                        P
//   u64 sourceTokens                 S
//   u64 targetTokens                 T
//   u64 sourceOffsets[P + 1]         pair i's source is sourceIds[o[i], o[i+1])
//   u64 targetOffsets[P + 1]         the same for targets
//   i32 sourceIds[S]
//   i32 targetIds[T]
//   u32 crc32                        CRC-32 (zlib's) of every byte before it
//   u32 zero
//
// The header is 48 bytes, so the offsets and ids are naturally aligned in a
// page-aligned mapping. The file's length is exactly
// 48 + 16 (P + 1) + 4 (S + T) + 8. A reader checks the length, then the
// checksum (a flipped bit is "corrupt", naming the file), then that offsets
// start at 0, never decrease and end at S (T), that no side is empty (a
// document's target), and every id, before giving any pair out. Version 1 files (no checksum, 8 bytes shorter) are still
// read, with every check but the checksum.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_TOKENCORPUS_H
#define TGC_RUNTIME_TOKENCORPUS_H

#include "runtime/data/Tasks.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tgc::runtime {

inline constexpr uint32_t kTokenCorpusVersion = 2;

/// What a .tok file holds: sentence pairs (translation) or documents
/// (language models: every source empty, S = 0).
enum class CorpusKind { Pairs, Documents };

/// Writes `pairs` to `path` atomically (AtomicFile). Refuses, writing
/// nothing, an id outside [3, vocabularySize), an empty side (a pair's
/// source or target, a document), and a source side in a corpus of
/// documents. Returns an empty string or the problem.
std::string writeTokenCorpus(const std::string &path, uint32_t vocabularySize,
                             uint64_t vocabularyHash,
                             std::span<const SentencePair> pairs,
                             CorpusKind kind = CorpusKind::Pairs);

/// A validated .tok file, mapped read-only for as long as it lives.
class TokenCorpus {
public:
  /// Maps and validates `path`; nullopt with `error` = "path: what is wrong".
  static std::optional<TokenCorpus> open(const std::string &path,
                                         std::string &error);
  TokenCorpus(TokenCorpus &&other) noexcept;
  TokenCorpus &operator=(TokenCorpus &&other) noexcept;
  TokenCorpus(const TokenCorpus &) = delete;
  TokenCorpus &operator=(const TokenCorpus &) = delete;
  ~TokenCorpus();

  /// Sentence pairs, or documents (kind() Documents: targets only).
  size_t size() const { return pairs_; }
  CorpusKind kind() const { return kind_; }
  std::span<const int32_t> source(size_t i) const {
    return {sourceIds_ + sourceOffsets_[i], sourceIds_ + sourceOffsets_[i + 1]};
  }
  std::span<const int32_t> target(size_t i) const {
    return {targetIds_ + targetOffsets_[i], targetIds_ + targetOffsets_[i + 1]};
  }
  uint64_t sourceTokens() const { return sourceOffsets_[pairs_]; }
  uint64_t targetTokens() const { return targetOffsets_[pairs_]; }
  uint32_t vocabularySize() const { return vocabularySize_; }
  uint64_t vocabularyHash() const { return vocabularyHash_; }
  const std::string &path() const { return path_; }

private:
  TokenCorpus() = default;
  void unmap();

  std::string path_;
  void *mapping_ = nullptr;
  size_t mappedBytes_ = 0;
  uint32_t vocabularySize_ = 0;
  uint64_t vocabularyHash_ = 0;
  CorpusKind kind_ = CorpusKind::Pairs;
  size_t pairs_ = 0;
  const uint64_t *sourceOffsets_ = nullptr, *targetOffsets_ = nullptr;
  const int32_t *sourceIds_ = nullptr, *targetIds_ = nullptr;
};

/// An empty string if `corpus` was encoded with the vocabulary of
/// `expectedHash` and `expectedSize` (named `vocabularyName` in messages),
/// else why the two do not go together.
std::string checkVocabulary(const TokenCorpus &corpus, uint64_t expectedHash,
                            uint32_t expectedSize,
                            const std::string &vocabularyName);

/// FNV-1a, 64 bits: the hash of a vocabulary's .model file that ties a
/// corpus to it.
uint64_t fnv1a64(std::string_view bytes);

/// "0x" and 16 hex digits, as messages show vocabulary hashes.
std::string hashText(uint64_t hash);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_TOKENCORPUS_H
