//===- TokenCorpus.cpp - encoded corpora, memory-mapped -------------------===//
#include "runtime/data/TokenCorpus.h"

#include "runtime/data/AtomicFile.h"
#include "runtime/data/FileChecks.h"
#include "runtime/data/MappedFiles.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace tgc::runtime {
namespace {

constexpr char kMagic[8] = {'T', 'G', 'C', 'T', 'O', 'K', 'S', '\n'};
constexpr char kDocumentsMagic[8] = {'T', 'G', 'C', 'D', 'O', 'C', 'S', '\n'};
constexpr uint64_t kHeaderBytes = 48;

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "token corpora store little-endian values as they are in memory");

template <typename T> T load(const char *at) {
  T value;
  std::memcpy(&value, at, sizeof value);
  return value;
}

template <typename T> void append(std::string &bytes, T value) {
  bytes.append(reinterpret_cast<const char *>(&value), sizeof value);
}

/// Why `ids` of `side` (in `pairs` pairs split by `offsets`) hold an id out
/// of [kFirstSymbolId, vocabularySize), or an empty string.
std::string checkIds(const char *side, const int32_t *ids, uint64_t tokens,
                     const uint64_t *offsets, uint64_t pairs,
                     uint32_t vocabularySize) {
  for (uint64_t t = 0; t < tokens; ++t) {
    if (ids[t] >= kFirstSymbolId && static_cast<uint32_t>(ids[t]) < vocabularySize)
      continue;
    uint64_t pair = std::upper_bound(offsets, offsets + pairs + 1, t) - offsets - 1;
    return std::string(side) + " id " + std::to_string(ids[t]) + " (pair " +
           std::to_string(pair) + ", token " + std::to_string(t - offsets[pair]) +
           ") is outside [" + std::to_string(kFirstSymbolId) + ", " +
           std::to_string(vocabularySize) + ")";
  }
  return {};
}

/// Why `offsets` (pairs + 1 of them) do not split `tokens` ids into pairs.
std::string checkOffsets(const char *side, const uint64_t *offsets,
                         uint64_t pairs, uint64_t tokens) {
  if (offsets[0] != 0)
    return std::string(side) + " offsets start at " + std::to_string(offsets[0]) +
           ", not 0";
  for (uint64_t i = 0; i < pairs; ++i)
    if (offsets[i + 1] < offsets[i])
      return std::string(side) + " offsets out of order: pair " +
             std::to_string(i) + " starts at " + std::to_string(offsets[i]) +
             " and ends at " + std::to_string(offsets[i + 1]);
  if (offsets[pairs] != tokens)
    return std::string(side) + " offsets end at " + std::to_string(offsets[pairs]) +
           ", not at the " + std::to_string(tokens) + " " + side + " tokens";
  return {};
}

/// Continues CRC-32 `crc` over `bytes` (zlib takes at most 4 GiB a call).
uint32_t crc32Over(uint32_t crc, const void *data, uint64_t bytes) {
  auto *p = static_cast<const Bytef *>(data);
  uLong value = crc;
  while (bytes > 0) {
    uInt chunk = bytes > (1u << 30) ? (1u << 30) : static_cast<uInt>(bytes);
    value = ::crc32(value, p, chunk);
    p += chunk;
    bytes -= chunk;
  }
  return static_cast<uint32_t>(value);
}

constexpr uint64_t kTrailerBytes = 8;

/// Why pair `i` cannot be trained on, or "": a side without a token (a
/// document has only its target). The text readers skip such a pair, so
/// a corpus holding one was not written by tgc-data encode.
std::string emptySide(uint64_t i, bool sourceEmpty, bool targetEmpty,
                      CorpusKind kind) {
  if (kind == CorpusKind::Documents)
    return targetEmpty ? "document " + std::to_string(i) + " is empty" : "";
  if (!sourceEmpty && !targetEmpty)
    return {};
  return "pair " + std::to_string(i) + " has an empty " +
         (sourceEmpty && targetEmpty ? "source and target"
          : sourceEmpty              ? "source"
                                     : "target");
}

/// The first pair with an empty side, as emptySide says, or "".
std::string findEmptySide(const uint64_t *sourceOffsets,
                          const uint64_t *targetOffsets, uint64_t pairs,
                          CorpusKind kind) {
  for (uint64_t i = 0; i < pairs; ++i)
    if (std::string why = emptySide(
            i, sourceOffsets[i + 1] == sourceOffsets[i],
            targetOffsets[i + 1] == targetOffsets[i], kind);
        !why.empty())
      return why + " (tgc-data encode skips such a pair: encode the corpus "
                   "again)";
  return {};
}

} // namespace

uint64_t fnv1a64(std::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char b : bytes) {
    hash ^= b;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::string hashText(uint64_t hash) {
  char text[20];
  std::snprintf(text, sizeof text, "0x%016llx",
                static_cast<unsigned long long>(hash));
  return text;
}

std::string writeTokenCorpus(const std::string &path, uint32_t vocabularySize,
                             uint64_t vocabularyHash,
                             std::span<const SentencePair> pairs,
                             CorpusKind kind) {
  uint64_t sourceTokens = 0, targetTokens = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (kind == CorpusKind::Documents && !pairs[i].source.empty())
      return "cannot write " + path + ": document " + std::to_string(i) +
             " has a source side (a corpus of documents has none)";
    if (std::string why = emptySide(i, pairs[i].source.empty(),
                                    pairs[i].target.empty(), kind);
        !why.empty())
      return "cannot write " + path + ": " + why;
    for (const std::vector<int32_t> *side : {&pairs[i].source, &pairs[i].target})
      for (int32_t id : *side)
        if (id < kFirstSymbolId || static_cast<uint32_t>(id) >= vocabularySize)
          return "cannot write " + path + ": pair " + std::to_string(i) +
                 " holds id " + std::to_string(id) + ", outside [" +
                 std::to_string(kFirstSymbolId) + ", " +
                 std::to_string(vocabularySize) + ")";
    sourceTokens += pairs[i].source.size();
    targetTokens += pairs[i].target.size();
  }

  std::string header(kind == CorpusKind::Documents ? kDocumentsMagic : kMagic,
                     sizeof kMagic);
  append(header, kTokenCorpusVersion);
  append(header, vocabularySize);
  append(header, vocabularyHash);
  append(header, static_cast<uint64_t>(pairs.size()));
  append(header, sourceTokens);
  append(header, targetTokens);
  AtomicFile file(path);
  uint32_t crc = crc32Over(0, nullptr, 0);
  auto put = [&](const void *data, size_t bytes) {
    crc = crc32Over(crc, data, bytes);
    file.write(data, bytes);
  };
  put(header.data(), header.size());
  for (auto side : {&SentencePair::source, &SentencePair::target}) {
    uint64_t offset = 0;
    put(&offset, sizeof offset);
    for (const SentencePair &pair : pairs) {
      offset += (pair.*side).size();
      put(&offset, sizeof offset);
    }
  }
  for (auto side : {&SentencePair::source, &SentencePair::target})
    for (const SentencePair &pair : pairs)
      put((pair.*side).data(), (pair.*side).size() * sizeof(int32_t));
  uint32_t trailer[2] = {crc, 0};
  file.write(trailer, sizeof trailer);
  return file.commit();
}

std::optional<TokenCorpus> TokenCorpus::open(const std::string &path,
                                             std::string &error) {
  auto refuse = [&](const std::string &why) {
    error = path + ": " + why;
    return std::nullopt;
  };
  // Non-blocking: a FIFO opens at once (to be refused below) instead of
  // waiting for a writer; a regular file reads as it would.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return refuse(std::strerror(errno));
  struct stat status;
  if (::fstat(fd, &status) != 0) {
    ::close(fd);
    return refuse(std::strerror(errno));
  }
  if (!S_ISREG(status.st_mode)) {
    ::close(fd);
    return refuse(std::string("it is ") + kindOfFile(status.st_mode) +
                  ", not a token corpus");
  }
  uint64_t fileBytes = static_cast<uint64_t>(status.st_size);
  if (fileBytes == 0) {
    ::close(fd);
    return refuse("the file is empty (0 bytes), not a token corpus");
  }
  if (fileBytes < kHeaderBytes) {
    ::close(fd);
    return refuse("truncated: " + std::to_string(fileBytes) +
                  " bytes, shorter than the 48-byte header");
  }
  void *mapping = ::mmap(nullptr, fileBytes, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd); // the mapping keeps the file
  if (mapping == MAP_FAILED)
    return refuse(std::string("cannot map it: ") + std::strerror(errno));

  TokenCorpus corpus;
  corpus.path_ = path;
  corpus.mapping_ = mapping;
  corpus.mappedBytes_ = fileBytes;
  watchMapping(mapping, fileBytes, path);
  const char *bytes = static_cast<const char *>(mapping);
  if (std::memcmp(bytes, kDocumentsMagic, sizeof kMagic) == 0)
    corpus.kind_ = CorpusKind::Documents;
  else if (std::memcmp(bytes, kMagic, sizeof kMagic) != 0)
    return refuse("not a tgc token corpus (bad magic)");
  uint32_t version = load<uint32_t>(bytes + 8);
  if (corpus.kind_ == CorpusKind::Documents && version < 2)
    return refuse("format version " + std::to_string(version) +
                  ": corpora of documents start at version 2");
  if (version != kTokenCorpusVersion && version != 1)
    return refuse("format version " + std::to_string(version) +
                  ", this program reads versions 1 and " +
                  std::to_string(kTokenCorpusVersion));
  corpus.vocabularySize_ = load<uint32_t>(bytes + 12);
  corpus.vocabularyHash_ = load<uint64_t>(bytes + 16);
  uint64_t pairs = load<uint64_t>(bytes + 24);
  uint64_t sourceTokens = load<uint64_t>(bytes + 32);
  uint64_t targetTokens = load<uint64_t>(bytes + 40);

  // Sizes the header claims, compared without overflow: each count must fit
  // in what is left of the file before it is multiplied.
  uint64_t trailer = version >= 2 ? kTrailerBytes : 0;
  uint64_t left = fileBytes - kHeaderBytes;
  bool fits = left >= trailer;
  if (fits)
    left -= trailer;
  fits = fits && pairs < left / 16;
  if (fits)
    left -= 16 * (pairs + 1);
  fits = fits && sourceTokens <= left / 4;
  if (fits)
    left -= 4 * sourceTokens;
  fits = fits && targetTokens <= left / 4;
  if (!fits || left != 4 * targetTokens)
    return refuse("the header's " + std::to_string(pairs) + " pairs and " +
                  std::to_string(sourceTokens) + " + " +
                  std::to_string(targetTokens) +
                  " tokens do not match the file's " +
                  std::to_string(fileBytes) + " bytes (truncated?)");

  if (corpus.kind_ == CorpusKind::Documents && sourceTokens != 0)
    return refuse("a corpus of documents with " + std::to_string(sourceTokens) +
                  " source tokens (it has no source side)");
  if (trailer) {
    uint64_t covered = fileBytes - kTrailerBytes;
    uint32_t stored = load<uint32_t>(bytes + covered);
    uint32_t computed = crc32Over(crc32Over(0, nullptr, 0), bytes, covered);
    if (stored != computed || load<uint32_t>(bytes + covered + 4) != 0)
      return refuse("its checksum does not match its contents (a corrupt "
                    "file: encode it again with tgc-data encode)");
  }

  corpus.pairs_ = pairs;
  corpus.sourceOffsets_ = reinterpret_cast<const uint64_t *>(bytes + kHeaderBytes);
  corpus.targetOffsets_ = corpus.sourceOffsets_ + pairs + 1;
  corpus.sourceIds_ =
      reinterpret_cast<const int32_t *>(corpus.targetOffsets_ + pairs + 1);
  corpus.targetIds_ = corpus.sourceIds_ + sourceTokens;
  // In this order: checkIds locates a bad id's pair through the offsets.
  std::string why = checkOffsets("source", corpus.sourceOffsets_, pairs, sourceTokens);
  if (why.empty())
    why = checkOffsets("target", corpus.targetOffsets_, pairs, targetTokens);
  if (why.empty())
    why = checkIds("source", corpus.sourceIds_, sourceTokens,
                   corpus.sourceOffsets_, pairs, corpus.vocabularySize_);
  if (why.empty())
    why = checkIds("target", corpus.targetIds_, targetTokens,
                   corpus.targetOffsets_, pairs, corpus.vocabularySize_);
  if (why.empty())
    why = findEmptySide(corpus.sourceOffsets_, corpus.targetOffsets_, pairs,
                        corpus.kind_);
  if (!why.empty())
    return refuse(why);
  return corpus;
}

TokenCorpus::TokenCorpus(TokenCorpus &&other) noexcept { *this = std::move(other); }

TokenCorpus &TokenCorpus::operator=(TokenCorpus &&other) noexcept {
  if (this != &other) {
    unmap();
    path_ = std::move(other.path_);
    mapping_ = std::exchange(other.mapping_, nullptr);
    mappedBytes_ = std::exchange(other.mappedBytes_, 0);
    vocabularySize_ = other.vocabularySize_;
    vocabularyHash_ = other.vocabularyHash_;
    kind_ = other.kind_;
    pairs_ = std::exchange(other.pairs_, 0);
    sourceOffsets_ = other.sourceOffsets_;
    targetOffsets_ = other.targetOffsets_;
    sourceIds_ = other.sourceIds_;
    targetIds_ = other.targetIds_;
  }
  return *this;
}

TokenCorpus::~TokenCorpus() { unmap(); }

void TokenCorpus::unmap() {
  if (mapping_) {
    unwatchMapping(mapping_);
    ::munmap(mapping_, mappedBytes_);
  }
  mapping_ = nullptr;
}

std::string checkVocabulary(const TokenCorpus &corpus, uint64_t expectedHash,
                            uint32_t expectedSize,
                            const std::string &vocabularyName) {
  if (corpus.vocabularyHash() == expectedHash &&
      corpus.vocabularySize() == expectedSize)
    return {};
  return corpus.path() + ": encoded with another vocabulary (" +
         std::to_string(corpus.vocabularySize()) + " ids, hash " +
         hashText(corpus.vocabularyHash()) + ") than " + vocabularyName + " (" +
         std::to_string(expectedSize) + " ids, hash " + hashText(expectedHash) +
         ")";
}

} // namespace tgc::runtime
