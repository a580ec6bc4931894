//===- RobustCorpusTest.cpp - .tok checksums and bad input files ----------===//
//
// A .tok file's CRC-32 catches any flipped byte, naming the file; version 1
// files (before the checksum) are still read; a pair with an empty side is
// refused; token-id files that are a
// directory or empty say so; quoted input in messages is short and
// printable; an AtomicFile keeps the permissions of what it replaces and
// removes only its own temporary file.
//
//===----------------------------------------------------------------------===//
#include "runtime/data/AtomicFile.h"
#include "runtime/data/FileChecks.h"
#include "runtime/data/TokenCorpus.h"
#include "runtime/data/TokenFiles.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

using namespace tgc::runtime;

namespace {

std::string readBytes(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), {}};
}

void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

class RobustCorpusTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = ::testing::TempDir() + "tgc-robust-corpus-" + std::to_string(::getpid());
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  std::string dir;
};

const std::vector<SentencePair> kPairs = {
    {{3, 4, 5}, {6, 7}}, {{99}, {10, 11, 12, 13}}, {{20}, {21}}};

TEST_F(RobustCorpusTest, EveryFlippedByteIsCaughtAndNamesTheFile) {
  std::string path = dir + "/good.tok";
  ASSERT_EQ(writeTokenCorpus(path, 100, 7, kPairs), "");
  const std::string good = readBytes(path);
  std::string error;
  ASSERT_TRUE(TokenCorpus::open(path, error)) << error;
  for (size_t at = 0; at < good.size(); ++at) {
    for (unsigned char bit : {0x01, 0x80}) {
      std::string bytes = good;
      bytes[at] = static_cast<char>(bytes[at] ^ bit);
      std::string bad = dir + "/bad.tok";
      writeBytes(bad, bytes);
      EXPECT_FALSE(TokenCorpus::open(bad, error)) << "byte " << at;
      EXPECT_EQ(error.rfind(bad + ": ", 0), 0u) << error;
    }
  }
  // A byte of the ids changed to another valid id: only the checksum sees it.
  std::string bytes = good;
  bytes[48 + 16 * 4] = 9; // the first source id, 3 -> 9
  writeBytes(dir + "/flip.tok", bytes);
  EXPECT_FALSE(TokenCorpus::open(dir + "/flip.tok", error));
  EXPECT_EQ(error, dir + "/flip.tok: its checksum does not match its contents "
                         "(a corrupt file: encode it again with tgc-data "
                         "encode)");
}

// A corpus shortened by another process while it is mapped: reading past
// its new end raises SIGBUS, which ends the process with an error naming
// the file (exit 1), not a crash. The pairs are many, so that the last ones
// lie pages past the header the truncation keeps.
TEST_F(RobustCorpusTest, ACorpusTruncatedWhileMappedIsAnErrorNamingIt) {
  std::vector<SentencePair> many;
  for (int32_t i = 0; i < 20000; ++i)
    many.push_back({{3 + i % 50, 4, 5, 6}, {7, 8, 9 + i % 40}});
  std::string path = dir + "/shrinks.tok";
  ASSERT_EQ(writeTokenCorpus(path, 100, 7, many), "");
  std::string error;
  std::optional<TokenCorpus> corpus = TokenCorpus::open(path, error);
  ASSERT_TRUE(corpus) << error;
  EXPECT_EXIT(
      {
        std::filesystem::resize_file(path, 64);
        volatile int32_t sum = 0;
        for (size_t i = corpus->size(); i-- > 0;)
          sum = sum + corpus->target(i)[0];
        std::exit(0);
      },
      ::testing::ExitedWithCode(1),
      "error: .*shrinks.tok changed while this process read it");
}

TEST_F(RobustCorpusTest, VersionOneFilesAreStillRead) {
  std::string path = dir + "/v2.tok";
  ASSERT_EQ(writeTokenCorpus(path, 100, 7, kPairs), "");
  std::string bytes = readBytes(path);
  bytes.resize(bytes.size() - 8); // no trailer
  bytes[8] = 1;                   // version 1
  writeBytes(dir + "/v1.tok", bytes);
  std::string error;
  std::optional<TokenCorpus> corpus = TokenCorpus::open(dir + "/v1.tok", error);
  ASSERT_TRUE(corpus) << error;
  ASSERT_EQ(corpus->size(), 3u);
  EXPECT_EQ(corpus->source(1)[0], 99);
}

/// A version-2 corpus of `pairs`, checksummed, written as is: the writer
/// refuses what this can forge.
std::string forgeCorpus(const std::vector<SentencePair> &pairs,
                        bool documents = false) {
  std::string bytes(documents ? "TGCDOCS\n" : "TGCTOKS\n");
  auto put = [&](auto value) {
    bytes.append(reinterpret_cast<const char *>(&value), sizeof value);
  };
  uint64_t sourceTokens = 0, targetTokens = 0;
  for (const SentencePair &pair : pairs) {
    sourceTokens += pair.source.size();
    targetTokens += pair.target.size();
  }
  put(uint32_t{2});
  put(uint32_t{100});
  put(uint64_t{7});
  put(uint64_t{pairs.size()});
  put(sourceTokens);
  put(targetTokens);
  for (auto side : {&SentencePair::source, &SentencePair::target}) {
    uint64_t offset = 0;
    put(offset);
    for (const SentencePair &pair : pairs)
      put(offset += (pair.*side).size());
  }
  for (auto side : {&SentencePair::source, &SentencePair::target})
    for (const SentencePair &pair : pairs)
      for (int32_t id : pair.*side)
        put(id);
  put(static_cast<uint32_t>(
      ::crc32(0, reinterpret_cast<const Bytef *>(bytes.data()), bytes.size())));
  put(uint32_t{0});
  return bytes;
}

// tgc-data encode skips a pair with an empty side, as the token-file reader
// does; a forged corpus holding one was trained on (a pair of EOS only).
TEST_F(RobustCorpusTest, PairsWithAnEmptySideAreRefused) {
  std::string error;
  writeBytes(dir + "/forged.tok", forgeCorpus(kPairs));
  ASSERT_TRUE(TokenCorpus::open(dir + "/forged.tok", error)) << error;

  const std::pair<std::vector<SentencePair>, std::string> cases[] = {
      {{{{3}, {4}}, {{}, {5}}}, "pair 1 has an empty source"},
      {{{{3}, {}}, {{4}, {5}}}, "pair 0 has an empty target"},
      {{{{3}, {4}}, {{5}, {6}}, {{}, {}}}, "pair 2 has an empty source and target"}};
  for (const auto &[pairs, why] : cases) {
    writeBytes(dir + "/empty-side.tok", forgeCorpus(pairs));
    EXPECT_FALSE(TokenCorpus::open(dir + "/empty-side.tok", error)) << why;
    EXPECT_EQ(error, dir + "/empty-side.tok: " + why +
                         " (tgc-data encode skips such a pair: encode the "
                         "corpus again)");
    EXPECT_EQ(writeTokenCorpus(dir + "/written.tok", 100, 7, pairs),
              "cannot write " + dir + "/written.tok: " + why);
  }

  writeBytes(dir + "/docs.tok", forgeCorpus({{{}, {3, 4}}, {{}, {}}}, true));
  EXPECT_FALSE(TokenCorpus::open(dir + "/docs.tok", error));
  EXPECT_EQ(error, dir + "/docs.tok: document 1 is empty (tgc-data encode "
                         "skips such a pair: encode the corpus again)");
  writeBytes(dir + "/docs.tok", forgeCorpus({{{}, {3, 4}}, {{}, {5}}}, true));
  EXPECT_TRUE(TokenCorpus::open(dir + "/docs.tok", error)) << error;
}

TEST_F(RobustCorpusTest, DirectoriesAndEmptyFilesSaySo) {
  std::string error;
  EXPECT_FALSE(TokenCorpus::open(dir, error));
  EXPECT_EQ(error, dir + ": it is a directory, not a token corpus");
  writeBytes(dir + "/empty.tok", "");
  EXPECT_FALSE(TokenCorpus::open(dir + "/empty.tok", error));
  EXPECT_EQ(error, dir + "/empty.tok: the file is empty (0 bytes), not a token corpus");

  BatchShape shape{4, 8, 8, 100};
  writeBytes(dir + "/a.txt", "3 4\n");
  writeBytes(dir + "/empty.txt", "");
  ParallelCorpus corpus;
  EXPECT_EQ(readParallelTokenFiles(dir, dir + "/a.txt", shape, corpus),
            dir + " is a directory, not a file");
  EXPECT_EQ(readParallelTokenFiles(dir + "/a.txt", dir + "/empty.txt", shape, corpus),
            dir + "/empty.txt is empty");
}

TEST_F(RobustCorpusTest, QuotedInputIsShortAndPrintable) {
  EXPECT_EQ(quoteInput("abc"), "abc");
  EXPECT_EQ(quoteInput(std::string("a\0b", 3)), "a\\x00b");
  std::string huge(10 << 20, '7');
  std::string quoted = quoteInput(huge);
  EXPECT_LT(quoted.size(), 120u);
  EXPECT_EQ(quoted, std::string(80, '7') + "... (10485760 bytes)");
  // Never half a UTF-8 character.
  std::string words;
  for (int i = 0; i < 60; ++i)
    words += "\xc3\xa9"; // é
  EXPECT_EQ(quoteInput(words, 5), "\xc3\xa9\xc3\xa9... (120 bytes)");
  // A byte-order mark is shown, not left invisible ("'5' is not a token
  // id" of a line that looked like "5").
  EXPECT_EQ(quoteInput("\xef\xbb\xbf" "5x"), "\\ufeff5x");
  // Bytes of no UTF-8 character are escaped (they reached the terminal
  // raw); whole characters are not.
  EXPECT_EQ(quoteInput("4\xff\xfe" "5"), "4\\xff\\xfe5");
  EXPECT_EQ(quoteInput("\xc3" "a\xe2\x82\xac"), "\\xc3a\xe2\x82\xac");

  BatchShape shape{4, 8, 8, 100};
  writeBytes(dir + "/nul.src", std::string("3 4\x00 5\n", 7));
  writeBytes(dir + "/huge.src", "3 " + huge + "x\n");
  writeBytes(dir + "/ok.tgt", "3 4\n");
  ParallelCorpus corpus;
  EXPECT_EQ(readParallelTokenFiles(dir + "/nul.src", dir + "/ok.tgt", shape, corpus),
            dir + "/nul.src:1: '4\\x00' is not a token id");
  std::string message =
      readParallelTokenFiles(dir + "/huge.src", dir + "/ok.tgt", shape, corpus);
  EXPECT_LT(message.size(), 200u) << message.substr(0, 300);
  EXPECT_NE(message.find(dir + "/huge.src:1: '7777"), std::string::npos) << message.substr(0, 300);
}

TEST_F(RobustCorpusTest, AByteOrderMarkBeforeTheFirstLineIsNoToken) {
  // An editor's byte-order mark: "'5' is not a token id", of a line that
  // shows as "5 6"; elsewhere it is still refused, and shown.
  BatchShape shape{4, 8, 8, 100};
  writeBytes(dir + "/bom.src", "\xef\xbb\xbf" "5 6\n7\n");
  writeBytes(dir + "/bom.tgt", "\xef\xbb\xbf" "8\n9 10\n");
  ParallelCorpus corpus;
  ASSERT_EQ(readParallelTokenFiles(dir + "/bom.src", dir + "/bom.tgt", shape,
                                   corpus),
            "");
  ASSERT_EQ(corpus.pairs.size(), 2u);
  EXPECT_EQ(corpus.pairs[0].source, (std::vector<int32_t>{5, 6}));
  EXPECT_EQ(corpus.pairs[0].target, (std::vector<int32_t>{8}));
  writeBytes(dir + "/late.src", "5\n\xef\xbb\xbf" "7\n");
  ParallelCorpus late;
  EXPECT_EQ(readParallelTokenFiles(dir + "/late.src", dir + "/bom.tgt", shape,
                                   late),
            dir + "/late.src:2: '\\ufeff7' is not a token id");
}

TEST_F(RobustCorpusTest, AnAtomicFileKeepsThePermissionsOfWhatItReplaces) {
  // The replacement is a new file renamed over the old one: it was 0644
  // whatever the old one's mode (a private file became readable by all).
  const std::string path = dir + "/private.txt";
  writeBytes(path, "old\n");
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  {
    AtomicFile file(path);
    file.write("new\n");
    ASSERT_EQ(file.commit(), "");
  }
  struct stat status;
  ASSERT_EQ(::stat(path.c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 07777, 0600u);
  EXPECT_EQ(readBytes(path), "new\n");
}

TEST_F(RobustCorpusTest, AnAtomicFileRemovesOnlyItsOwnTemporaryFile) {
  // Its temporary name taken already (by an earlier process of the same
  // pid, say): it passes it for the next name and leaves that file alone
  // (it failed there, at every restart of a container's program, and
  // before that unlinked the file).
  const std::string path = dir + "/out.txt";
  const std::string taken = temporaryPathFor(path);
  // temporaryPathFor counts up: the next name is the one AtomicFile tries.
  const std::string next = taken.substr(0, taken.rfind('.') + 1) +
                           std::to_string(std::stoi(taken.substr(taken.rfind('.') + 1)) + 1);
  writeBytes(next, "someone else's\n");
  {
    AtomicFile file(path);
    file.write("mine\n");
    EXPECT_EQ(file.commit(), "");
  }
  EXPECT_EQ(readBytes(next), "someone else's\n");
  EXPECT_EQ(readBytes(path), "mine\n");
}

} // namespace
