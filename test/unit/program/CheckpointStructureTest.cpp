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
#include "runtime/program/checkpoint/Checkpoint.pb.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <climits>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <sys/stat.h>
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
  /// Writes `to` as `from` with its metadata changed by `edit` (checksum
  /// and alignment redone), its data as it was, and `extra` bytes of
  /// zeros past it (a sparse file's).
  /// `path`'s bytes and its parsed metadata (of `metadataBytes`).
  void load(const std::string &path, std::string &file,
            proto::Checkpoint &metadata, uint32_t &metadataBytes) {
    std::ifstream in(path, std::ios::binary);
    file.assign(std::istreambuf_iterator<char>(in),
                std::istreambuf_iterator<char>());
    std::memcpy(&metadataBytes, file.data() + 12, 4);
    ASSERT_TRUE(metadata.ParseFromString(file.substr(24, metadataBytes)));
  }
  void forge(const std::string &from, const std::string &to,
             const std::function<void(proto::Checkpoint &)> &edit,
             uint64_t extra = 0) {
    std::string file;
    proto::Checkpoint metadata;
    uint32_t metadataBytes = 0;
    load(from, file, metadata, metadataBytes);
    const std::string data = file.substr((24 + metadataBytes + 63) / 64 * 64);
    edit(metadata);
    const std::string encoded = metadata.SerializeAsString();
    const uint32_t fields[4] = {
        1, static_cast<uint32_t>(encoded.size()),
        static_cast<uint32_t>(crc32(
            0, reinterpret_cast<const Bytef *>(encoded.data()),
            static_cast<uInt>(encoded.size()))),
        0};
    std::string out = file.substr(0, 8);
    out.append(reinterpret_cast<const char *>(fields), sizeof fields);
    out += encoded;
    out.resize((out.size() + 63) / 64 * 64, '\0');
    out += data;
    std::ofstream(to, std::ios::binary) << out;
    if (extra)
      std::filesystem::resize_file(to, out.size() + extra);
  }
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

TEST_F(CheckpointStructure, DataPastTheSyncedPiecesReadsBackWhole) {
  // The writer syncs its data 64 MiB at a time: 20M floats (80 MB) and a
  // tensor after them cross a piece's end inside a tensor and leave a
  // partial piece for the final sync.
  std::vector<float> big(20'000'000), after = {7, 8, 9};
  for (size_t i = 0; i < big.size(); ++i)
    big[i] = static_cast<float>(i % 1000003);
  const CheckpointTensor written[] = {{"big", {20'000'000}, big.data()},
                                      {"after", {3}, after.data()}};
  ASSERT_EQ(writeCheckpoint(at("big.ckpt"), info, written), "");
  std::vector<float> readBig(big.size()), readAfter(3);
  const CheckpointTensor model[] = {{"big", {20'000'000}, readBig.data()},
                                    {"after", {3}, readAfter.data()}};
  CheckpointInfo read;
  EXPECT_EQ(readCheckpoint(at("big.ckpt"), read, model), "");
  EXPECT_TRUE(readBig == big);
  EXPECT_EQ(readAfter, after);
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

// The header's zero word and the padding before the data lie outside both
// checksums: a flip there was taken as good (and written back on resume).
TEST_F(CheckpointStructure, BytesOutsideTheChecksumsMustBeZero) {
  const CheckpointTensor written[] = {{"a", {2, 2}, a.data()},
                                      {"b", {2}, b.data()}};
  ASSERT_EQ(writeCheckpoint(at("good.ckpt"), info, written), "");
  std::string file;
  proto::Checkpoint metadata;
  uint32_t metadataBytes = 0;
  load(at("good.ckpt"), file, metadata, metadataBytes);
  const size_t paddingStart = 24 + metadataBytes;
  ASSERT_NE(paddingStart % 64, 0u) << "no padding to flip";
  const std::pair<size_t, const char *> flips[] = {
      {20, "its header's reserved word is not zero"},
      {23, "its header's reserved word is not zero"},
      {paddingStart, "the padding after its metadata is not zero"},
      {(paddingStart + 63) / 64 * 64 - 1,
       "the padding after its metadata is not zero"}};
  for (const auto &[offset, why] : flips) {
    std::string bytes = file;
    bytes[offset] = 1;
    std::ofstream(at("flipped.ckpt"), std::ios::binary) << bytes;
    std::vector<float> ra(4, -1.0f), rb(2, -1.0f);
    const CheckpointTensor model[] = {{"a", {2, 2}, ra.data()},
                                      {"b", {2}, rb.data()}};
    CheckpointInfo read;
    std::string error = readCheckpoint(at("flipped.ckpt"), read, model);
    EXPECT_NE(error.find(why), std::string::npos) << offset << ": " << error;
    EXPECT_EQ(ra, std::vector<float>(4, -1.0f));
    std::vector<OwnedTensor> owned;
    error = readCheckpointTensors(at("flipped.ckpt"), read, owned);
    EXPECT_NE(error.find(why), std::string::npos) << offset << ": " << error;
  }
}

TEST_F(CheckpointStructure, ANamelessTensorIsRefused) {
  const CheckpointTensor forged[] = {{"", {2}, b.data()}};
  ASSERT_EQ(writeCheckpoint(at("nameless.ckpt"), info, forged), "");
  std::vector<OwnedTensor> owned;
  CheckpointInfo read;
  std::string error = readCheckpointTensors(at("nameless.ckpt"), read, owned);
  EXPECT_NE(error.find("a tensor has no name"), std::string::npos) << error;
}

TEST_F(CheckpointStructure, ADataSizeThatWrapsIsRefused) {
  // The file ends right after its metadata, whose data size is what,
  // added to the data's (aligned) start, wraps past 2^64 to the file's
  // size: it passed the size check, and reading the data section asked
  // for 2^64 bytes (std::length_error, an abort).
  const CheckpointTensor written[] = {{"a", {2, 2}, a.data()}};
  ASSERT_EQ(writeCheckpoint(at("good.ckpt"), info, written), "");
  std::string file;
  proto::Checkpoint metadata;
  uint32_t metadataBytes = 0;
  load(at("good.ckpt"), file, metadata, metadataBytes);
  bool forged = false;
  for (int attempt = 0; attempt < 64 && !forged; ++attempt) {
    // (the model's name moves the metadata's end off the alignment)
    metadata.set_model("test" + std::string(static_cast<size_t>(attempt), 'x'));
    metadata.set_data_bytes(~uint64_t{0});
    std::string encoded = metadata.SerializeAsString();
    const uint64_t end = 24 + encoded.size(), start = (end + 63) / 64 * 64;
    if (end == start)
      continue;
    metadata.set_data_bytes(end - start); // start + this wraps to end
    encoded = metadata.SerializeAsString();
    if (24 + encoded.size() != end)
      continue;
    const uint32_t fields[4] = {
        1, static_cast<uint32_t>(encoded.size()),
        static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef *>(
                                           encoded.data()),
                                    static_cast<uInt>(encoded.size()))),
        0};
    std::string out = file.substr(0, 8);
    out.append(reinterpret_cast<const char *>(fields), sizeof fields);
    out += encoded;
    std::ofstream(at("wraps.ckpt"), std::ios::binary) << out;
    forged = true;
  }
  ASSERT_TRUE(forged);
  std::vector<float> ra(4, -1.0f);
  const CheckpointTensor model[] = {{"a", {2, 2}, ra.data()}};
  CheckpointInfo read;
  std::string error = readCheckpoint(at("wraps.ckpt"), read, model);
  EXPECT_NE(error.find("its metadata says more than 2^64 (truncated)"),
            std::string::npos)
      << error;
  std::vector<OwnedTensor> owned;
  error = readCheckpointTensors(at("wraps.ckpt"), read, owned);
  EXPECT_NE(error.find("(truncated)"), std::string::npos) << error;
  EXPECT_EQ(ra, std::vector<float>(4, -1.0f));
}

TEST_F(CheckpointStructure, DataPastItsTensorsIsRefusedBeforeItIsRead) {
  // A data section that says 1 TiB more than its tensors, over a sparse
  // file of that size: every other check passed, and reading it asked for
  // the whole (std::bad_alloc, an abort).
  const CheckpointTensor written[] = {{"a", {2, 2}, a.data()}};
  ASSERT_EQ(writeCheckpoint(at("good.ckpt"), info, written), "");
  const uint64_t extra = uint64_t{1} << 40;
  forge(at("good.ckpt"), at("huge.ckpt"),
        [&](proto::Checkpoint &m) { m.set_data_bytes(16 + extra); }, extra);
  std::vector<float> ra(4, -1.0f);
  const CheckpointTensor model[] = {{"a", {2, 2}, ra.data()}};
  CheckpointInfo read;
  std::string error = readCheckpoint(at("huge.ckpt"), read, model);
  const std::string expected =
      "its data section has 1099511627792 bytes, its tensors 16";
  EXPECT_NE(error.find(expected), std::string::npos) << error;
  std::vector<OwnedTensor> owned;
  error = readCheckpointTensors(at("huge.ckpt"), read, owned);
  EXPECT_NE(error.find(expected), std::string::npos) << error;
  EXPECT_EQ(ra, std::vector<float>(4, -1.0f));
}

TEST_F(CheckpointStructure, MetadataOfManyEmptyTensorsIsRefusedBeforeItIsParsed) {
  // 2 million empty tensor entries (4 MB encoded): parsed, each took about
  // 100 bytes (a forged 64 MiB of them took 3 GB, then std::bad_alloc
  // under a memory limit). Counted from the wire format first.
  const CheckpointTensor written[] = {{"a", {2, 2}, a.data()}};
  ASSERT_EQ(writeCheckpoint(at("good.ckpt"), info, written), "");
  forge(at("good.ckpt"), at("many.ckpt"), [](proto::Checkpoint &m) {
    for (int i = 0; i < 2'000'000; ++i)
      m.add_tensors();
  });
  std::vector<float> ra(4, -1.0f);
  const CheckpointTensor model[] = {{"a", {2, 2}, ra.data()}};
  CheckpointInfo read;
  const std::string expected =
      "its metadata lists 2000001 tensors with 2 shape values, more than a "
      "checkpoint's 1048576 and 8388608 (a corrupt or forged file)";
  std::string error = readCheckpoint(at("many.ckpt"), read, model);
  EXPECT_NE(error.find(expected), std::string::npos) << error;
  std::vector<OwnedTensor> owned;
  error = readCheckpointTensors(at("many.ckpt"), read, owned);
  EXPECT_NE(error.find(expected), std::string::npos) << error;
  EXPECT_EQ(ra, std::vector<float>(4, -1.0f));
  // And a shape of 10 million values in one entry.
  forge(at("good.ckpt"), at("wide.ckpt"), [](proto::Checkpoint &m) {
    for (int i = 0; i < 10'000'000; ++i)
      m.mutable_tensors(0)->add_shape(1);
  });
  error = readCheckpoint(at("wide.ckpt"), read, model);
  EXPECT_NE(error.find("its metadata lists 1 tensors with 10000002 shape "
                       "values"),
            std::string::npos)
      << error;
}

TEST_F(CheckpointStructure, ValidationRecordsARunCannotWriteAreRefused) {
  // A NaN best was never beaten (no .best; --patience stopped a run that
  // improved); a stale count near 2^63 overflowed at the next validation.
  const CheckpointTensor written[] = {{"a", {2, 2}, a.data()}};
  ASSERT_EQ(writeCheckpoint(at("good.ckpt"), info, written), "");
  const std::pair<std::function<void(proto::Checkpoint &)>, const char *>
      forgeries[] = {
          {[](proto::Checkpoint &m) { m.set_best_loss(std::nan("")); },
           "its best validation loss nan is not one a run records"},
          {[](proto::Checkpoint &m) { m.set_best_bleu(-3); },
           "its best validation BLEU -3.000000 is not one a run records"},
          {[](proto::Checkpoint &m) {
             m.set_stale_validations(INT64_MAX);
           },
           "its count of validations without improvement "
           "9223372036854775807 is not one a run makes"},
      };
  for (const auto &[edit, expected] : forgeries) {
    forge(at("good.ckpt"), at("record.ckpt"), edit);
    std::vector<float> ra(4, -1.0f);
    const CheckpointTensor model[] = {{"a", {2, 2}, ra.data()}};
    CheckpointInfo read;
    std::string error = readCheckpoint(at("record.ckpt"), read, model);
    EXPECT_NE(error.find(expected), std::string::npos) << error;
    EXPECT_EQ(ra, std::vector<float>(4, -1.0f));
  }
}

TEST_F(CheckpointStructure, ASaveKeepsTheCheckpointsPermissions) {
  // The new file replaces the old one by a rename: it was 0644 whatever
  // the old one's mode, so a private checkpoint became readable by all.
  const CheckpointTensor written[] = {{"a", {2, 2}, a.data()}};
  ASSERT_EQ(writeCheckpoint(at("private.ckpt"), info, written), "");
  ASSERT_EQ(::chmod(at("private.ckpt").c_str(), 0600), 0);
  ASSERT_EQ(writeCheckpoint(at("private.ckpt"), info, written), "");
  struct stat status;
  ASSERT_EQ(::stat(at("private.ckpt").c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 07777, 0600u);
}

} // namespace
