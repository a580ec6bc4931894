//===- FuzzCheckpoint.cpp - checkpoints (runtime/program/checkpoint/) -----===//
//
// Any bytes as a checkpoint of a model with one [4, 4] and one [4] tensor:
// readCheckpoint accepts them only when they are such a checkpoint, and
// readCheckpointTensors reads what any checkpoint holds, or says why not.
// The header's CRC-32 of the metadata is made to match first (the tensors'
// own checksums, inside the metadata, are left as the input has them).
//
//===----------------------------------------------------------------------===//
#include "runtime/program/checkpoint/Checkpoint.h"
#include "test/fuzz/FuzzInput.h"

#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  // Header: magic (8 bytes), version, metadata bytes, metadata CRC-32.
  constexpr size_t kHeaderBytes = 24;
  if (size >= kHeaderBytes) {
    uint64_t metadata = tgc::fuzz::loadU32(bytes, 12);
    if (kHeaderBytes + metadata <= size)
      tgc::fuzz::storeCrc32(bytes, kHeaderBytes, metadata, 16);
  }
  std::string path = tgc::fuzz::asFile("model.ckpt", bytes.data(), size);
  std::vector<float> w(16), b(4);
  std::vector<tgc::runtime::CheckpointTensor> tensors = {
      {"w", {4, 4}, w.data()}, {"b", {4}, b.data()}};
  tgc::runtime::CheckpointInfo info;
  std::string error = tgc::runtime::readCheckpoint(path, info, tensors);
  std::vector<tgc::runtime::OwnedTensor> owned;
  tgc::runtime::CheckpointInfo any;
  std::string anyError = tgc::runtime::readCheckpointTensors(path, any, owned);
  if (error.empty() && !anyError.empty())
    std::abort(); // what one reader accepts, the other must too
  return 0;
}
