//===- CheckpointStructureTest.cpp - checkpoints checked for structure ----===//
//
// runtime/program/checkpoint/Checkpoint.cpp verifies a checkpoint's
// structure, not only its checksums: a file whose checksums all match but
// that lists one tensor twice (and so lacks another) is refused by both
// readers, before any tensor of the model changes. The writer does not
// check its input, so it forges such files here.
//
//===----------------------------------------------------------------------===//
#include "runtime/program/checkpoint/Checkpoint.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

using namespace tgc::runtime;

namespace {

class CheckpointStructure : public ::testing::Test {
protected:
  void SetUp() override {
    directory = std::filesystem::temp_directory_path() /
                ("tgc-checkpoint-structure-" + std::to_string(::getpid()));
    std::filesystem::create_directories(directory);
    info.model = "test";
    info.step = 3;
  }
  void TearDown() override { std::filesystem::remove_all(directory); }
  std::string at(const std::string &name) const {
    return (directory / name).string();
  }

  std::filesystem::path directory;
  CheckpointInfo info;
  std::vector<float> a = {1, 2, 3, 4}, b = {5, 6};
};

TEST_F(CheckpointStructure, AWellFormedFileLoads) {
  const CheckpointTensor written[] = {{"a", {2, 2}, a.data()},
                                      {"b", {2}, b.data()}};
  ASSERT_EQ(writeCheckpoint(at("good.ckpt"), info, written), "");
  std::vector<float> ra(4), rb(2);
  const CheckpointTensor model[] = {{"a", {2, 2}, ra.data()},
                                    {"b", {2}, rb.data()}};
  CheckpointInfo read;
  EXPECT_EQ(readCheckpoint(at("good.ckpt"), read, model), "");
  EXPECT_EQ(ra, a);
  EXPECT_EQ(rb, b);
}

TEST_F(CheckpointStructure, ATensorListedTwiceIsRefusedByBothReaders) {
  // "a" twice, "b" missing: as many tensors as the model has, every name
  // one of the model's, every checksum right.
  const CheckpointTensor forged[] = {{"a", {2, 2}, a.data()},
                                     {"a", {2, 2}, a.data()}};
  ASSERT_EQ(writeCheckpoint(at("twice.ckpt"), info, forged), "");
  std::vector<float> ra(4, -1.0f), rb(2, -1.0f);
  const CheckpointTensor model[] = {{"a", {2, 2}, ra.data()},
                                    {"b", {2}, rb.data()}};
  CheckpointInfo read;
  std::string error = readCheckpoint(at("twice.ckpt"), read, model);
  EXPECT_NE(error.find("refused: tensor 'a' is listed twice"),
            std::string::npos)
      << error;
  // Nothing of the model changed (b was left zero before the check).
  EXPECT_EQ(ra, std::vector<float>(4, -1.0f));
  EXPECT_EQ(rb, std::vector<float>(2, -1.0f));
  std::vector<OwnedTensor> owned;
  error = readCheckpointTensors(at("twice.ckpt"), read, owned);
  EXPECT_NE(error.find("is listed twice"), std::string::npos) << error;
}

TEST_F(CheckpointStructure, ANamelessTensorIsRefused) {
  const CheckpointTensor forged[] = {{"", {2}, b.data()}};
  ASSERT_EQ(writeCheckpoint(at("nameless.ckpt"), info, forged), "");
  std::vector<OwnedTensor> owned;
  CheckpointInfo read;
  std::string error = readCheckpointTensors(at("nameless.ckpt"), read, owned);
  EXPECT_NE(error.find("a tensor has no name"), std::string::npos) << error;
}

} // namespace
