//===- Vocabulary.h - SentencePiece BPE vocabularies --------------*- C++ -*-===//
//
// The subword vocabulary of real translation data: a SentencePiece BPE model
// trained jointly on the source and target text, one vocabulary for both
// sides as in the paper (the embedding and softmax weights are shared).
//
// Ids are the project's: 0 pad, 1 BOS, 2 EOS, 3 unknown, then the pieces.
// encode() returns symbols only (ids >= 3, no BOS or EOS); decode() turns
// 0-2 into nothing and 3 into " ⁇ " (SentencePiece's unknown surface).
//
// Lossless: decode(encode(line)) == line, byte for byte, for every valid
// UTF-8 line (without '\n'; any other character, NUL included, is allowed):
//   - normalization is the identity: no NFKC ("ﬁ" stays "ﬁ", a composed and a
//     decomposed "é" stay as they were written);
//   - whitespace is kept: leading, trailing and repeated spaces each become a
//     "▁" (SentencePiece 0.1.97 with remove_extra_whitespaces=false restores
//     them all and drops only the "▁" it adds before the first word); tabs
//     and other control characters are characters like any other;
//   - byte fallback: a character absent from the vocabulary (never seen in
//     training) is encoded as its UTF-8 bytes, 256 pieces <0x00>..<0xFF>, so
//     encode() never returns the unknown id 3 for valid UTF-8;
//   - the one exception SentencePiece itself has: U+2581 "▁", its symbol for
//     a space, which it decodes as a space. encode() repairs it by writing
//     each U+2581 of the input as its three byte pieces (see Vocabulary.cpp).
//
// The price of byte fallback: a vocabulary holds the 4 special ids, the 256
// byte pieces and every distinct character of the training text
// (character_coverage 1.0), so its size is at least 260 + that;
// SentencePiece's message names the least size that works.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_VOCABULARY_H
#define TGC_RUNTIME_VOCABULARY_H

#include "runtime/data/Utf8.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
} // namespace sentencepiece

namespace tgc::runtime {

/// Trains a joint BPE vocabulary of `vocabSize` ids on the non-empty lines
/// (splitLines) of `files`, UTF-8 text, one sentence a line, and writes
/// `<modelPrefix>.model` and `<modelPrefix>.vocab` (piece TAB score, by id),
/// each atomically. Every line up to the readers' 64 MiB trains, but one
/// with a run of more than 16384 characters without a space, which
/// SentencePiece's BPE trainer cannot take (a note says how many were left
/// out); those encode like any other.
/// Returns an empty string or the problem, naming the file it concerns.
/// Deterministic for the same files and size.
std::string trainVocabulary(const std::vector<std::string> &files,
                            int vocabSize, const std::string &modelPrefix);

/// The most bytes readFile reads (the whole text is held in memory).
inline constexpr uint64_t kMaxTextFileBytes = uint64_t{4} << 30;

/// The most ids a vocabulary trains to: a model's vocab_size bound
/// (models/Presets.cpp), 2^24.
inline constexpr int kMaxVocabularyIds = 1 << 24;

/// Reads all of `path` into `text`, a regular file, a pipe (process
/// substitution) or a terminal, at most kMaxTextFileBytes. Returns an empty string or
/// "path: <strerror>", "path is a character device, not a regular file or
/// a pipe", "path is larger than 4 GiB, ...".
std::string readFile(const std::string &path, std::string &text);

/// The lines of a text file: split at '\n' (a last line without one counts),
/// each without one trailing '\r' (CRLF files read as LF ones).
std::vector<std::string_view> splitLines(std::string_view text);

/// A trained vocabulary, loaded from its .model file.
class Vocabulary {
public:
  /// Loads `path`; refuses a model whose special ids are not 0 pad, 1 BOS,
  /// 2 EOS, 3 unknown or that lacks the 256 byte pieces (not trained by
  /// trainVocabulary). Null and `error` set on failure.
  static std::unique_ptr<Vocabulary> load(const std::string &path,
                                          std::string &error);
  ~Vocabulary();

  /// Ids in all, special ones included: valid ids are [0, size()).
  int32_t size() const;
  /// fnv1a64 (TokenCorpus.h) of the .model file's bytes.
  uint64_t hash() const { return hash_; }
  const std::string &path() const { return path_; }

  /// The symbols of one line of text (ids >= 3; empty for empty text).
  std::vector<int32_t> encode(std::string_view text) const;
  /// The text of `ids`, each in [0, size()).
  std::string decode(std::span<const int32_t> ids) const;

private:
  Vocabulary() = default;
  void appendCharacter(std::string_view character,
                       std::vector<int32_t> &ids) const;

  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
  std::string path_;
  uint64_t hash_ = 0;
  int32_t byteIds_[256] = {};
};

} // namespace tgc::runtime

#endif // TGC_RUNTIME_VOCABULARY_H
