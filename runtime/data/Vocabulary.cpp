//===- Vocabulary.cpp - SentencePiece BPE vocabularies --------------------===//
#include "runtime/data/Vocabulary.h"

#include "runtime/data/AtomicFile.h"
#include "runtime/data/FileChecks.h"
#include "runtime/data/ProtoWire.h"
#include "runtime/data/Tasks.h"
#include "runtime/data/TokenCorpus.h"
#include "runtime/data/TokenFiles.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tgc::runtime {
namespace {

namespace sp = sentencepiece;

/// SentencePiece's symbol for a space, U+2581 in UTF-8.
constexpr std::string_view kSpaceSymbol = "\xE2\x96\x81";

/// A failed check reads "./src/file.cc(line) [condition] explanation": the
/// explanation is what a user can act on.
std::string messageOf(const sp::util::Status &status) {
  std::string message = status.message();
  size_t close = message.find("] ");
  if (message.starts_with("./") && close != std::string::npos)
    message.erase(0, close + 2);
  // character_coverage is fixed at 1.0 here: only the size can change.
  constexpr std::string_view kCoverageAdvice =
      " or decrease character_coverage with --character_coverage option";
  if (size_t at = message.find(kCoverageAdvice); at != std::string::npos)
    message.erase(at, kCoverageAdvice.size());
  return message;
}

/// Feeds SentencePiece the non-empty lines of texts already read and checked.
/// The most characters between two spaces that SentencePiece's BPE
/// trainer takes: a longer run (a long word, a paragraph of CJK text)
/// crashed it (past 32768 characters a segmentation fault, past 65535 a
/// failed CHECK). Half of that, for a margin.
constexpr size_t kMaxTrainedRun = 16384;

/// Whether `line` has a run of more than kMaxTrainedRun characters (UTF-8
/// code points) without a space.
bool hasOverlongRun(std::string_view line) {
  size_t run = 0;
  for (char c : line) {
    if (c == ' ')
      run = 0;
    else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80 &&
             ++run > kMaxTrainedRun)
      return true;
  }
  return false;
}

class LineIterator : public sp::SentenceIterator {
public:
  /// The non-empty lines of `texts` but those with an overlong run, which
  /// are counted, the first named (`files` are the texts' names).
  LineIterator(const std::vector<std::string> &texts,
               const std::vector<std::string> &files) {
    for (size_t i = 0; i < texts.size(); ++i) {
      size_t number = 0;
      for (std::string_view line : splitLines(texts[i])) {
        ++number;
        if (line.empty())
          continue;
        if (hasOverlongRun(line)) {
          if (left_++ == 0)
            firstLeft_ = files[i] + ":" + std::to_string(number);
          continue;
        }
        lines_.push_back(line);
      }
    }
    settle();
  }
  /// The lines trained on; those left out, and where the first is.
  size_t trained() const { return lines_.size(); }
  size_t leftOut() const { return left_; }
  const std::string &firstLeftOut() const { return firstLeft_; }
  bool done() const override { return next_ > lines_.size(); }
  void Next() override { settle(); }
  const std::string &value() const override { return value_; }
  sp::util::Status status() const override { return {}; }

private:
  void settle() {
    if (next_ < lines_.size())
      value_.assign(lines_[next_]);
    ++next_;
  }
  std::vector<std::string_view> lines_;
  size_t next_ = 0;
  std::string value_;
  size_t left_ = 0;
  std::string firstLeft_;
};

} // namespace

std::string readFile(const std::string &path, std::string &text) {
  // openReader: a FIFO that no process writes does not hold the open.
  int fd = openReader(path.c_str());
  if (fd < 0)
    return path + ": " + std::strerror(errno);
  struct stat status;
  std::string problem;
  if (::fstat(fd, &status) != 0)
    problem = path + ": " + std::strerror(errno);
  else if (S_ISDIR(status.st_mode)) // a directory opens; only its reads fail
    problem = path + ": " + std::strerror(EISDIR);
  // /dev/zero never ends; a terminal ends at ^D, /dev/null at once.
  else if (!S_ISREG(status.st_mode) && !S_ISFIFO(status.st_mode) &&
           !::isatty(fd) && !isNullDevice(status))
    problem = path + " is " + kindOfFile(status.st_mode) +
              ", not a regular file or a pipe";
  const std::string tooLarge = path + " is larger than " +
                               std::to_string(kMaxTextFileBytes >> 30) +
                               " GiB, the most a text file may hold";
  if (problem.empty() && S_ISREG(status.st_mode) &&
      static_cast<uint64_t>(status.st_size) > kMaxTextFileBytes)
    problem = tooLarge;
  text.clear();
  if (problem.empty()) {
    if (std::string why = readUpTo(fd, kMaxTextFileBytes, text); !why.empty())
      problem = path + ": " + why;
    else if (text.size() > kMaxTextFileBytes)
      problem = tooLarge; // a pipe that does not end, a file that grew
  }
  ::close(fd);
  return problem;
}

std::vector<std::string_view> splitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (line.ends_with('\r'))
      line.remove_suffix(1);
    lines.push_back(line);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  }
  return lines;
}

std::string trainVocabulary(const std::vector<std::string> &files,
                            int vocabSize, const std::string &modelPrefix) {
  std::string modelPath = modelPrefix + ".model";
  std::vector<std::string> texts(files.size());
  bool anyText = false;
  for (size_t i = 0; i < files.size(); ++i) {
    if (std::string error = readFile(files[i], texts[i]); !error.empty())
      return error;
    if (std::string bad = checkUtf8(texts[i]); !bad.empty())
      return files[i] + ":" + bad;
    anyText = anyText || texts[i].find_first_not_of("\r\n") != std::string::npos;
  }
  if (!anyText)
    return modelPath + ": no text to train on (the input files are empty)";
  // SentencePiece explains a size from 4 up ("N vs the M needed") but not
  // one below.
  // Above it no model takes the vocabulary, and SentencePiece spends
  // seconds to minutes on a huge size before refusing it.
  if (vocabSize > kMaxVocabularyIds)
    return modelPath + ": cannot train a vocabulary of " +
           std::to_string(vocabSize) + " ids: a model takes at most 2^24 (" +
           std::to_string(kMaxVocabularyIds) + ")";
  if (vocabSize <= kFirstSymbolId)
    return modelPath + ": cannot train a vocabulary of " +
           std::to_string(vocabSize) +
           " ids: it needs more than 260 (4 special ids, 256 byte pieces), "
           "plus one per distinct character";

  // Ids as the project's; identity normalization, kept whitespace and byte
  // fallback over every character make encoding lossless (Vocabulary.h).
  // No model_prefix: trained into memory, the files are written atomically
  // below.
  std::unordered_map<std::string, std::string> options = {
      {"model_type", "bpe"},
      {"vocab_size", std::to_string(vocabSize)},
      {"pad_id", std::to_string(kPadId)},
      {"bos_id", std::to_string(kBosId)},
      {"eos_id", std::to_string(kEosId)},
      {"unk_id", std::to_string(kFirstSymbolId)},
      {"normalization_rule_name", "identity"},
      {"remove_extra_whitespaces", "false"},
      {"byte_fallback", "true"},
      {"character_coverage", "1.0"},
      {"num_threads", "2"},
      // Every line, as long as the readers allow (SentencePiece's default
      // of 4192 bytes left longer ones out without a word).
      {"max_sentence_length", std::to_string(kMaxLineBytes)},
      {"minloglevel", "2"},
  };
  LineIterator lines(texts, files);
  if (lines.trained() == 0)
    return modelPath + ": no line to train on: every line has a run of more "
                       "than " + std::to_string(kMaxTrainedRun) +
           " characters without a space (the first: " + lines.firstLeftOut() +
           "), longer than SentencePiece's trainer takes";
  if (lines.leftOut() > 0)
    std::fprintf(stderr,
                 "note: %zu line%s left out of the vocabulary's training (the "
                 "first: %s): a run of more than %zu characters without a "
                 "space, longer than SentencePiece's trainer takes; %s\n",
                 lines.leftOut(), lines.leftOut() == 1 ? "" : "s",
                 lines.firstLeftOut().c_str(), kMaxTrainedRun,
                 lines.leftOut() == 1 ? "it still encodes"
                                      : "they still encode");
  std::string model;
  if (sp::util::Status status =
          sp::SentencePieceTrainer::Train(options, &lines, &model);
      !status.ok())
    return modelPath + ": cannot train the vocabulary: " +
           (!status.message() || !*status.message()
                ? std::string("SentencePiece gave no reason")
                : messageOf(status));

  sp::SentencePieceProcessor processor;
  if (sp::util::Status status = processor.LoadFromSerializedProto(model);
      !status.ok())
    return modelPath + ": SentencePiece cannot read the model it trained: " +
           messageOf(status);
  // The .vocab file as SentencePiece writes it: piece TAB score, by id.
  std::ostringstream vocab;
  for (int id = 0; id < processor.GetPieceSize(); ++id)
    vocab << processor.IdToPiece(id) << "\t" << processor.GetScore(id) << "\n";

  AtomicFile modelFile(modelPath), vocabFile(modelPrefix + ".vocab");
  modelFile.write(model);
  vocabFile.write(vocab.str());
  return commitAll({&modelFile, &vocabFile});
}

namespace {

/// A normalizer of a SentencePiece model: its rule's name and the bytes of
/// its precompiled character map.
struct NormalizerSpec {
  std::string name;
  size_t charsmapBytes = 0;
};

/// The normalizer and denormalizer specs (ModelProto fields 3 and 5; in
/// each, 1 is the rule's name and 2 its precompiled character map) of a
/// serialized model, read from the wire format: SentencePiece's own
/// ModelProto is not in its installed headers, and linking a second
/// Protobuf beside its bundled one clashes.
bool normalizersOf(std::string_view model, std::vector<NormalizerSpec> &specs) {
  bool ok = true;
  ok &= forEachBytesField(model, [&](uint64_t number, std::string_view spec) {
    if (number != 3 && number != 5)
      return;
    NormalizerSpec &read = specs.emplace_back();
    ok &= forEachBytesField(spec, [&](uint64_t inner, std::string_view bytes) {
      if (inner == 1)
        read.name = std::string(bytes);
      else if (inner == 2)
        read.charsmapBytes += bytes.size();
    });
  });
  return ok;
}

} // namespace

Vocabulary::~Vocabulary() = default;

std::unique_ptr<Vocabulary> Vocabulary::load(const std::string &path,
                                             std::string &error) {
  std::string bytes;
  if (error = readFile(path, bytes); !error.empty())
    return nullptr;
  std::unique_ptr<Vocabulary> vocabulary(new Vocabulary);
  vocabulary->path_ = path;
  vocabulary->hash_ = fnv1a64(bytes);
  vocabulary->processor_ = std::make_unique<sp::SentencePieceProcessor>();
  sp::SentencePieceProcessor &processor = *vocabulary->processor_;
  if (sp::util::Status status = processor.LoadFromSerializedProto(bytes);
      !status.ok()) {
    std::string why = messageOf(status);
    error = path + ": not a SentencePiece model" + (why.empty() ? "" : ": " + why);
    return nullptr;
  }
  auto notOurs = [&](const std::string &why) {
    error = path + ": not a tgc vocabulary (" + why +
            "); train one with tgc-data vocab";
    return nullptr;
  };
  if (processor.pad_id() != kPadId || processor.bos_id() != kBosId ||
      processor.eos_id() != kEosId || processor.unk_id() != kFirstSymbolId)
    return notOurs("pad, BOS, EOS and unknown are ids " +
                   std::to_string(processor.pad_id()) + ", " +
                   std::to_string(processor.bos_id()) + ", " +
                   std::to_string(processor.eos_id()) + ", " +
                   std::to_string(processor.unk_id()) + ", not 0, 1, 2, 3");
  // tgc trains with the identity rule and no character map; SentencePiece
  // reads a map without checking it (a forged one crashed encode).
  std::vector<NormalizerSpec> specs;
  if (!normalizersOf(bytes, specs))
    return notOurs("its normalizer cannot be read");
  for (const NormalizerSpec &spec : specs) {
    if (spec.charsmapBytes > 0)
      return notOurs("its normalizer has a precompiled character map of " +
                     std::to_string(spec.charsmapBytes) +
                     " bytes: tgc's vocabularies normalize nothing");
    if (!spec.name.empty() && spec.name != "identity")
      return notOurs("its normalization rule is '" + spec.name +
                     "', not 'identity'");
  }
  for (int b = 0; b < 256; ++b) {
    char piece[8];
    std::snprintf(piece, sizeof piece, "<0x%02X>", b);
    int id = processor.PieceToId(piece);
    if (!processor.IsByte(id))
      return notOurs(std::string("no byte piece ") + piece +
                     ": it was trained without byte fallback");
    vocabulary->byteIds_[b] = id;
  }
  return vocabulary;
}

int32_t Vocabulary::size() const { return processor_->GetPieceSize(); }

std::vector<int32_t> Vocabulary::encode(std::string_view text) const {
  std::vector<int32_t> ids;
  if (text.find(kSpaceSymbol) == std::string_view::npos) {
    std::vector<int> pieces;
    processor_->Encode(text, &pieces).IgnoreError(); // fails only unloaded
    ids.assign(pieces.begin(), pieces.end());
    return ids;
  }
  // SentencePiece reads a U+2581 of the text as a space and would decode it
  // as one. Pieces covering one (with whitespace splitting: "▁" plus the word
  // after it) are written character by character instead, U+2581 as its
  // three byte pieces, which decode to U+2581 itself.
  sp::ImmutableSentencePieceText pieces = processor_->EncodeAsImmutableProto(text);
  for (const auto &piece : pieces.pieces()) {
    std::string_view surface = piece.surface();
    if (surface.find(kSpaceSymbol) == std::string_view::npos) {
      ids.push_back(static_cast<int32_t>(piece.id()));
      continue;
    }
    for (size_t i = 0; i < surface.size();) {
      size_t length = utf8SequenceLength(static_cast<unsigned char>(surface[i]));
      appendCharacter(surface.substr(i, length), ids);
      i += length;
    }
  }
  return ids;
}

void Vocabulary::appendCharacter(std::string_view character,
                                 std::vector<int32_t> &ids) const {
  if (character != kSpaceSymbol) {
    int id = processor_->PieceToId(character);
    if (id != processor_->unk_id()) {
      ids.push_back(id);
      return;
    }
  }
  for (unsigned char b : character)
    ids.push_back(byteIds_[b]);
}

std::string Vocabulary::decode(std::span<const int32_t> ids) const {
  std::vector<int> pieces(ids.begin(), ids.end());
  std::string text;
  processor_->Decode(pieces, &text).IgnoreError(); // ids are in range
  return text;
}

} // namespace tgc::runtime
