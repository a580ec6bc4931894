//===- TextInputTest.cpp - the bounds of --translate's and --generate's text ===//
//
// A decoding run holds its input text in memory, so it reads at most
// TextInputLimits (1 GiB or 2^24 lines): past either bound it stops with an
// error naming the file, rather than reading on until memory runs out or
// decoding a silent prefix. Checked at small limits on real files, at and
// one past each bound.
//
//===----------------------------------------------------------------------===//
#include "runtime/program/decode/TranslateText.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <unistd.h>

using namespace tgc::runtime;

namespace {

class TextInputTest : public ::testing::Test {
protected:
  void SetUp() override {
    directory = std::filesystem::temp_directory_path() /
                ("tgc-text-input-" + std::to_string(::getpid()));
    std::filesystem::create_directories(directory);
  }
  void TearDown() override { std::filesystem::remove_all(directory); }

  /// A file of `text` in the test's directory.
  std::string file(const std::string &text) {
    std::string path = (directory / "input.txt").string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  /// readTextLines of `text` within `limits`: the lines, or nullopt with
  /// the error it printed in `error`.
  std::optional<std::vector<std::string>> read(const std::string &text,
                                               TextInputLimits limits) {
    std::string path = file(text), name;
    std::vector<std::string> lines;
    ::testing::internal::CaptureStderr();
    bool ok = readTextLines(path, lines, name, limits);
    error = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(name, path);
    if (!ok)
      return std::nullopt;
    EXPECT_EQ(error, "");
    return lines;
  }

  std::filesystem::path directory;
  std::string error;
};

TEST_F(TextInputTest, TheLastLineThatFitsIsRead) {
  // Three lines, the last without its newline: 3 lines, 9 bytes counting
  // one newline a line, the last one's too (a bound of 8 refuses them).
  auto lines = read("ab\ncd\nef", {/*bytes=*/9, /*lines=*/3});
  ASSERT_TRUE(lines) << error;
  EXPECT_EQ(*lines, (std::vector<std::string>{"ab", "cd", "ef"}));
  EXPECT_FALSE(read("ab\ncd\nef", {/*bytes=*/8, /*lines=*/3}));
}

TEST_F(TextInputTest, OneLineTooManyIsAnErrorNamingTheFile) {
  auto lines = read("a\nb\nc\nd\n", {/*bytes=*/1 << 20, /*lines=*/3});
  EXPECT_FALSE(lines);
  std::string path = (directory / "input.txt").string();
  EXPECT_EQ(error, "error: " + path +
                       ": more than 1 MiB or 3 lines of text, the most one "
                       "run reads (split it)\n");
}

TEST_F(TextInputTest, EmptyLinesCountAgainstTheLineBound) {
  // Short lines cost more than their bytes: 5 empty lines are 5 bytes.
  EXPECT_FALSE(read("\n\n\n\n\n", {/*bytes=*/1 << 20, /*lines=*/4}));
  EXPECT_NE(error.find("4 lines of text"), std::string::npos) << error;
  auto lines = read("\n\n\n\n", {/*bytes=*/1 << 20, /*lines=*/4});
  ASSERT_TRUE(lines) << error;
  EXPECT_EQ(lines->size(), 4u);
}

TEST_F(TextInputTest, OneByteTooManyIsAnError) {
  // "abc\n" and "defg\n": 9 bytes.
  ASSERT_TRUE(read("abc\ndefg\n", {/*bytes=*/9, /*lines=*/100})) << error;
  EXPECT_FALSE(read("abc\ndefgh\n", {/*bytes=*/9, /*lines=*/100}));
  EXPECT_NE(error.find("more than 9 bytes or 100 lines"), std::string::npos)
      << error;
}

TEST_F(TextInputTest, TheDefaultsAreAGibibyteAndTwoToTheTwentyFourLines) {
  TextInputLimits limits;
  EXPECT_EQ(limits.bytes, size_t{1} << 30);
  EXPECT_EQ(limits.lines, size_t{1} << 24);
}

} // namespace
