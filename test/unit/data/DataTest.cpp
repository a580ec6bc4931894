//===- DataTest.cpp - vocabularies and .tok corpora (TgcData) -------------===//
#include "runtime/data/TokenCorpus.h"
#include "runtime/data/Vocabulary.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace tgc::runtime;

namespace {

constexpr int kVocabSize = 500;

std::string readBytes(const std::string &path) {
  std::string bytes;
  EXPECT_EQ(readFile(path, bytes), "");
  return bytes;
}

void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

/// Sentences of random words in English, French, German, Greek and Russian,
/// with digits and punctuation; CJK, Arabic and emoji never occur.
std::string trainingText(uint32_t seed, int lines) {
  static const char *const words[] = {
      "the", "house", "is", "small", "and", "children", "play", "café",
      "crème", "naïve", "façade", "été", "die", "Straße", "ist", "groß",
      "Fußgänger", "über", "Καλημέρα", "κόσμε", "είναι", "μικρό", "Привет",
      "как", "дела", "дом", "большой", "2024", "3,5", "(yes)", "no!", "why?",
      "it's", "\"quoted\""};
  std::string text;
  for (int line = 0; line < lines; ++line) {
    seed = seed * 1664525u + 1013904223u;
    int n = 3 + static_cast<int>(seed >> 28);
    for (int w = 0; w < n; ++w) {
      seed = seed * 1664525u + 1013904223u;
      text += w ? " " : "";
      text += words[(seed >> 8) % std::size(words)];
    }
    text += ".\n";
  }
  return text;
}

class DataTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir = ::testing::TempDir() + "tgc-data-test-" + std::to_string(::getpid());
    std::filesystem::create_directories(dir);
    writeBytes(dir + "/train.src", trainingText(1, 300));
    writeBytes(dir + "/train.tgt", trainingText(2, 300));
    ASSERT_EQ(trainVocabulary({dir + "/train.src", dir + "/train.tgt"},
                              kVocabSize, dir + "/bpe"),
              "");
    std::string error;
    vocabulary = Vocabulary::load(dir + "/bpe.model", error).release();
    ASSERT_NE(vocabulary, nullptr) << error;
  }
  static void TearDownTestSuite() {
    delete vocabulary;
    std::filesystem::remove_all(dir);
  }

  /// Writes `pairs` to a fresh .tok file under the test's directory.
  static std::string writeCorpus(const std::string &name,
                                 const std::vector<SentencePair> &pairs) {
    std::string path = dir + "/" + name;
    EXPECT_EQ(writeTokenCorpus(path, kVocabSize, vocabulary->hash(), pairs), "");
    return path;
  }

  /// The error opening `bytes` as a .tok file.
  static std::string openError(const std::string &bytes) {
    std::string path = dir + "/corrupt.tok", error;
    writeBytes(path, bytes);
    EXPECT_FALSE(TokenCorpus::open(path, error).has_value());
    EXPECT_EQ(error.rfind(path + ": ", 0), 0u) << error;
    return error.substr(path.size() + 2);
  }

  static inline std::string dir;
  static inline Vocabulary *vocabulary = nullptr;
};

const std::vector<SentencePair> kPairs = {
    {{3, 4, 5}, {6}}, {{499}, {10, 11, 12, 13}}, {{8, 9}, {7}}, {{20}, {21}}};

TEST_F(DataTest, VocabularyIsTheProjectsAndHashesItsFile) {
  EXPECT_EQ(vocabulary->size(), kVocabSize);
  EXPECT_EQ(vocabulary->hash(), fnv1a64(readBytes(dir + "/bpe.model")));
  EXPECT_EQ(vocabulary->path(), dir + "/bpe.model");
  // FNV-1a 64 as specified (offset basis, and "a" from the reference).
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  // ids 0-2 are pad, BOS, EOS: they decode to nothing.
  std::vector<int32_t> hello = vocabulary->encode("the house");
  std::vector<int32_t> framed = {1};
  framed.insert(framed.end(), hello.begin(), hello.end());
  framed.insert(framed.end(), {2, 0, 0});
  EXPECT_EQ(vocabulary->decode(framed), "the house");
}

TEST_F(DataTest, TrainingIsDeterministic) {
  ASSERT_EQ(trainVocabulary({dir + "/train.src", dir + "/train.tgt"},
                            kVocabSize, dir + "/again"),
            "");
  EXPECT_EQ(readBytes(dir + "/again.model"), readBytes(dir + "/bpe.model"));
  EXPECT_EQ(readBytes(dir + "/again.vocab"), readBytes(dir + "/bpe.vocab"));
}

TEST_F(DataTest, TextToIdsToTextIsLossless) {
  const std::string lines[] = {
      "the house is small.",
      "Café crème, naïve façade — à bientôt !",
      "Die Straße ist groß; Fußgänger gehen über sie.",
      "Καλημέρα κόσμε, το σπίτι είναι μικρό.",
      "Привет, как дела? Дом большой.",
      "日本語のテキストと中文字符", // never seen in training
      "emoji 😀 👍🏽 👨‍👩‍👧 🇩🇪",
      "مرحبا بالعالم",
      "עברית \u200f(RTL mark)",
      "0123456789 3,5 2024 !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
      "  two leading spaces",
      "trailing spaces  ",
      "double  spaces   and    more",
      " ",
      "   ",
      "\ttabs\tinside\t",
      "controls \x01\x1f\x7f and\rCR",
      std::string("NUL \0 inside", 12),
      "e\u0301 (decomposed) vs \u00e9, ligature \ufb01, \u00bd, \u2460",
      "no-break\u00a0space, ideographic\u3000space, zero\u200bwidth",
      "\ufeffbyte order mark",
      "last code point \xf4\x8f\xbf\xbf",
      // U+2581, SentencePiece's own space symbol, in every position.
      "\u2581",
      "a\u2581b",
      " \u2581 ",
      "\u2581\u2581x\u2581",
      "\u2581the house\u2581 is\u2581\u2581",
      "",
  };
  for (const std::string &line : lines) {
    std::vector<int32_t> ids = vocabulary->encode(line);
    EXPECT_EQ(vocabulary->decode(ids), line);
    for (int32_t id : ids) {
      EXPECT_GT(id, kFirstSymbolId) << "unknown or special id in: " << line;
      EXPECT_LT(id, kVocabSize);
    }
  }
  EXPECT_TRUE(vocabulary->encode("").empty());
}

TEST_F(DataTest, TrainingRefusesBadInputNamingTheFile) {
  EXPECT_EQ(trainVocabulary({dir + "/missing.txt"}, 300, dir + "/x"),
            dir + "/missing.txt: No such file or directory");
  writeBytes(dir + "/bad.txt", "fine\nab\xff\n");
  EXPECT_EQ(trainVocabulary({dir + "/train.src", dir + "/bad.txt"}, 300, dir + "/x"),
            dir + "/bad.txt:2:3: invalid UTF-8 (byte 0xFF)");
  std::string tooSmall =
      trainVocabulary({dir + "/train.src"}, 270, dir + "/x");
  EXPECT_NE(tooSmall.find(dir + "/x.model: cannot train the vocabulary: "
                                "Vocabulary size is smaller than required_chars. 270 vs"),
            std::string::npos)
      << tooSmall;
  EXPECT_FALSE(std::filesystem::exists(dir + "/x.model"));
}

TEST_F(DataTest, LoadRefusesWhatIsNotATgcVocabulary) {
  std::string error;
  EXPECT_EQ(Vocabulary::load(dir + "/missing.model", error), nullptr);
  EXPECT_EQ(error, dir + "/missing.model: No such file or directory");
  writeBytes(dir + "/garbage.model", "this is not a protobuf \xff\xff\xff");
  EXPECT_EQ(Vocabulary::load(dir + "/garbage.model", error), nullptr);
  EXPECT_EQ(error.rfind(dir + "/garbage.model: not a SentencePiece model", 0), 0u)
      << error;
}

TEST(DataText, CheckUtf8NamesLineColumnAndByte) {
  EXPECT_EQ(checkUtf8("plain ascii\nCafé 日本 😀\n\u2581\xf4\x8f\xbf\xbf"), "");
  EXPECT_EQ(checkUtf8("ab\xff"), "1:3: invalid UTF-8 (byte 0xFF)");
  EXPECT_EQ(checkUtf8("ok\n\nx\xc3"), "3:2: invalid UTF-8 (byte 0xC3)");
  EXPECT_EQ(checkUtf8("\x80"), "1:1: invalid UTF-8 (byte 0x80)");
  EXPECT_EQ(checkUtf8("overlong \xc0\xaf"), "1:10: invalid UTF-8 (byte 0xC0)");
  EXPECT_EQ(checkUtf8("overlong \xe0\x80\xaf"), "1:10: invalid UTF-8 (byte 0xE0)");
  EXPECT_EQ(checkUtf8("surrogate \xed\xa0\x80"), "1:11: invalid UTF-8 (byte 0xED)");
  EXPECT_EQ(checkUtf8("past U+10FFFF \xf4\x90\x80\x80"),
            "1:15: invalid UTF-8 (byte 0xF4)");
  EXPECT_EQ(checkUtf8("cut \xe2\x82\nnext"), "1:5: invalid UTF-8 (byte 0xE2)");
}

TEST(DataText, SplitLinesDropsCarriageReturnsOfCrlf) {
  using Lines = std::vector<std::string_view>;
  EXPECT_EQ(splitLines(""), Lines{});
  EXPECT_EQ(splitLines("a\r\nb\n"), (Lines{"a", "b"}));
  EXPECT_EQ(splitLines("a\n\nb"), (Lines{"a", "", "b"}));
  EXPECT_EQ(splitLines("\n"), Lines{""});
  EXPECT_EQ(splitLines("a\rb\r\r\n"), Lines{"a\rb\r"});
}

TEST_F(DataTest, CorpusRoundTrip) {
  std::string path = writeCorpus("pairs.tok", kPairs);
  std::string error;
  std::optional<TokenCorpus> corpus = TokenCorpus::open(path, error);
  ASSERT_TRUE(corpus) << error;
  EXPECT_EQ(readBytes(path).size(), 48u + 16 * 5 + 4 * (7 + 7) + 8);
  EXPECT_EQ(corpus->path(), path);
  EXPECT_EQ(corpus->vocabularySize(), static_cast<uint32_t>(kVocabSize));
  EXPECT_EQ(corpus->vocabularyHash(), vocabulary->hash());
  EXPECT_EQ(corpus->sourceTokens(), 7u);
  EXPECT_EQ(corpus->targetTokens(), 7u);
  ASSERT_EQ(corpus->size(), kPairs.size());
  // Moved, the mapping goes along.
  TokenCorpus moved = std::move(*corpus);
  for (size_t i = 0; i < kPairs.size(); ++i) {
    auto source = moved.source(i), target = moved.target(i);
    EXPECT_EQ(std::vector<int32_t>(source.begin(), source.end()), kPairs[i].source);
    EXPECT_EQ(std::vector<int32_t>(target.begin(), target.end()), kPairs[i].target);
  }
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));

  std::string empty = writeCorpus("empty.tok", {});
  std::optional<TokenCorpus> none = TokenCorpus::open(empty, error);
  ASSERT_TRUE(none) << error;
  EXPECT_EQ(none->size(), 0u);
}

TEST_F(DataTest, WriterRefusesAnIdOutOfRangeAndKeepsTheOldFile) {
  std::string path = writeCorpus("kept.tok", kPairs);
  std::string before = readBytes(path);
  std::vector<SentencePair> bad = kPairs;
  bad[1].target[2] = kVocabSize;
  EXPECT_EQ(writeTokenCorpus(path, kVocabSize, 7, bad),
            "cannot write " + path + ": pair 1 holds id 500, outside [3, 500)");
  bad[1].target[2] = 2; // EOS does not belong in a .tok file
  EXPECT_NE(writeTokenCorpus(path, kVocabSize, 7, bad), "");
  EXPECT_EQ(readBytes(path), before);
  EXPECT_NE(writeTokenCorpus(dir + "/no/such/dir.tok", kVocabSize, 7, kPairs)
                .find("No such file or directory"),
            std::string::npos);
}

TEST_F(DataTest, CorruptCorporaAreRefusedWithTheirReason) {
  const std::string good = readBytes(writeCorpus("good.tok", kPairs));
  // Offsets: source at 48 + 8 i, target at 88 + 8 i; ids from 128.
  // With the checksum stamped again, so that the checks behind it run.
  auto patched = [&](size_t at, auto value) {
    std::string bytes = good;
    std::memcpy(bytes.data() + at, &value, sizeof value);
    uint32_t crc = static_cast<uint32_t>(
        ::crc32(::crc32(0, nullptr, 0),
                reinterpret_cast<const Bytef *>(bytes.data()),
                static_cast<uInt>(bytes.size() - 8)));
    std::memcpy(bytes.data() + bytes.size() - 8, &crc, sizeof crc);
    return bytes;
  };
  std::string error;
  EXPECT_FALSE(TokenCorpus::open(dir + "/missing.tok", error));
  EXPECT_EQ(error, dir + "/missing.tok: No such file or directory");

  EXPECT_EQ(openError("TGCCKPT\n" + good.substr(8)),
            "not a tgc token corpus (bad magic)");
  EXPECT_EQ(openError(patched(8, uint32_t{3})),
            "format version 3, this program reads versions 1 and 2");
  EXPECT_EQ(openError(""), "the file is empty (0 bytes), not a token corpus");
  EXPECT_EQ(openError(good.substr(0, 20)),
            "truncated: 20 bytes, shorter than the 48-byte header");
  EXPECT_EQ(openError(good.substr(0, good.size() - 4)),
            "the header's 4 pairs and 7 + 7 tokens do not match the file's 188 "
            "bytes (truncated?)");
  EXPECT_EQ(openError(good + "x"),
            "the header's 4 pairs and 7 + 7 tokens do not match the file's 193 "
            "bytes (truncated?)");
  // A count so large that its byte size would overflow 64 bits.
  EXPECT_NE(openError(patched(24, uint64_t{1} << 62)).find("do not match"),
            std::string::npos);
  EXPECT_NE(openError(patched(32, ~uint64_t{0})).find("do not match"),
            std::string::npos);

  EXPECT_EQ(openError(patched(48, uint64_t{1})), "source offsets start at 1, not 0");
  EXPECT_EQ(openError(patched(48 + 8 * 2, uint64_t{2})),
            "source offsets out of order: pair 1 starts at 3 and ends at 2");
  EXPECT_EQ(openError(patched(88 + 8 * 4, uint64_t{6})),
            "target offsets end at 6, not at the 7 target tokens");
  EXPECT_EQ(openError(patched(128 + 4 * 3, int32_t{500})),
            "source id 500 (pair 1, token 0) is outside [3, 500)");
  EXPECT_EQ(openError(patched(128 + 4 * (7 + 4), int32_t{0})),
            "target id 0 (pair 1, token 3) is outside [3, 500)");
  EXPECT_EQ(openError(patched(128 + 4 * (7 + 6), int32_t{-1})),
            "target id -1 (pair 3, token 0) is outside [3, 500)");
  EXPECT_EQ(openError(patched(12, uint32_t{400})),
            "source id 499 (pair 1, token 0) is outside [3, 400)");
}

TEST_F(DataTest, ACorpusOfAnotherVocabularyIsRefused) {
  std::string path = writeCorpus("mine.tok", kPairs);
  std::string error;
  std::optional<TokenCorpus> corpus = TokenCorpus::open(path, error);
  ASSERT_TRUE(corpus) << error;
  EXPECT_EQ(checkVocabulary(*corpus, vocabulary->hash(), kVocabSize, "bpe.model"), "");
  EXPECT_EQ(checkVocabulary(*corpus, 0x1234, kVocabSize, "other.model"),
            path + ": encoded with another vocabulary (500 ids, hash " +
                hashText(vocabulary->hash()) +
                ") than other.model (500 ids, hash 0x0000000000001234)");
  EXPECT_NE(checkVocabulary(*corpus, vocabulary->hash(), 8000, "big.model"), "");
}

} // namespace
