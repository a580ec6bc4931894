//===- FileSafetyTest.cpp - what a run may write and delete ---------------===//
//
// The rules that keep a user's files safe, on real files in a temporary
// directory: an output that is the same file as an input or another output
// (common/RunFiles.h), the exact names of leftover temporaries
// (runtime/data/FileChecks.h), and when a state has diverged too far to be
// saved (runtime/program/train/Divergence.h).
//
//===----------------------------------------------------------------------===//
#include "common/RunFiles.h"
#include "runtime/data/FileChecks.h"
#include "runtime/program/train/Divergence.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

using namespace tgc::runtime;

namespace {

class RunFilesTest : public ::testing::Test {
protected:
  void SetUp() override {
    directory = std::filesystem::temp_directory_path() /
                ("tgc-run-files-" + std::to_string(::getpid()));
    std::filesystem::create_directories(directory);
    std::ofstream(at("input.txt")) << "the user's data\n";
  }
  void TearDown() override { std::filesystem::remove_all(directory); }
  std::string at(const std::string &name) const {
    return (directory / name).string();
  }
  std::filesystem::path directory;
};

TEST_F(RunFilesTest, AnOutputThatIsAnInputIsRefusedNamingBoth) {
  std::string why = tgc::findClobberedFile(
      {{"--source", at("input.txt")}, {"-o", at("input.txt"), true}});
  EXPECT_EQ(why, "-o " + at("input.txt") + " is the same file as --source " +
                     at("input.txt") +
                     ": a run never writes over a file it reads (nothing was "
                     "written)");
}

TEST_F(RunFilesTest, LinksAndOtherSpellingsAreTheSameFile) {
  std::filesystem::create_hard_link(at("input.txt"), at("hard"));
  std::filesystem::create_symlink(at("input.txt"), at("soft"));
  for (const char *alias : {"hard", "soft"})
    EXPECT_NE(tgc::findClobberedFile(
                  {{"--source", at("input.txt")}, {"-o", at(alias), true}}),
              "")
        << alias;
  // Outputs not written yet: the same name once the directory is resolved.
  std::string why = tgc::findClobberedFile(
      {{"--metrics", at("new.jsonl"), true},
       {"--loss-log", (directory / "." / "new.jsonl").string(), true}});
  EXPECT_NE(why.find("two outputs of one run cannot share a file"),
            std::string::npos)
      << why;
}

TEST_F(RunFilesTest, DistinctFilesDevicesAndAllowedPairsPass) {
  std::ofstream(at("other.txt")) << "other\n";
  EXPECT_EQ(tgc::findClobberedFile({{"--source", at("input.txt")},
                                    {"-o", at("other.txt"), true},
                                    {"--log", "", true}}),
            "");
  // Writing to a device destroys nothing, whatever reads it too.
  EXPECT_EQ(tgc::findClobberedFile({{"--translate", "/dev/null"},
                                    {"--output", "/dev/null", true}}),
            "");
  // A checkpoint continues the --resume file it was read from.
  EXPECT_EQ(tgc::findClobberedFile(
                {{"--resume", at("input.txt")},
                 {"--checkpoint", at("input.txt"), true, "--resume"}}),
            "");
}

TEST(LeftOverTemporaries, OnlyTheExactNamesOfADeadProcess) {
  pid_t child = ::fork();
  if (child == 0)
    ::_exit(0);
  ASSERT_GT(child, 0);
  ::waitpid(child, nullptr, 0);
  std::string dead = std::to_string(child);
  EXPECT_TRUE(isStaleTemporary("ck.tmp." + dead + ".0", "ck"));
  EXPECT_TRUE(isStaleTemporary("ck.tmp." + dead + ".17", "ck"));
  // A user's files named like one: something after the counter, another
  // spelling of the numbers, nothing after the pid.
  for (std::string name :
       {"ck.tmp." + dead + ".notes", "ck.tmp." + dead + ".0.bak",
        "ck.tmp." + dead + ".0x", "ck.tmp.0" + dead + ".0",
        "ck.tmp." + dead + ".01", "ck.tmp.+" + dead + ".0",
        "ck.tmp." + dead + ".", "ck.tmp." + dead, "ck2.tmp." + dead + ".0"})
    EXPECT_FALSE(isStaleTemporary(name, "ck")) << name;
  // A running process's (this one's) is not left over, but to a caller
  // that holds the path's lock and has not written it yet: an earlier
  // process with this pid left it.
  const std::string own = "ck.tmp." + std::to_string(::getpid()) + ".0";
  EXPECT_FALSE(isStaleTemporary(own, "ck"));
  EXPECT_TRUE(isStaleTemporary(own, "ck", /*ownAreStale=*/true));
  EXPECT_FALSE(isStaleTemporary(own + ".notes", "ck", /*ownAreStale=*/true));
}

TEST(Divergence, ARunningLossTenTimesTheLowestAndAboveOneNat) {
  RunningLoss loss;
  EXPECT_EQ(loss.divergence(), "");
  for (int i = 0; i < 50; ++i)
    loss.add(2.0);
  EXPECT_EQ(loss.divergence(), "");
  // One spike moves the running loss by a tenth of it: 2 + 0.1 * 98 = 11.8.
  loss.add(100.0);
  EXPECT_EQ(loss.divergence(), "");
  for (int i = 0; i < 5; ++i)
    loss.add(1000.0);
  std::string why = loss.divergence();
  EXPECT_NE(why.find("is more than 10 times the lowest of this run, 2"),
            std::string::npos)
      << why;
  // It recovers as the loss does.
  for (int i = 0; i < 100; ++i)
    loss.add(2.0);
  EXPECT_EQ(loss.divergence(), "");
}

TEST(Divergence, BelowOneNatLargeFactorsAreNoDivergence) {
  RunningLoss loss;
  for (int i = 0; i < 100; ++i)
    loss.add(0.01);
  for (int i = 0; i < 100; ++i)
    loss.add(0.9);
  EXPECT_EQ(loss.divergence(), "");
}

} // namespace
