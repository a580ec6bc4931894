//===- FuzzTokenFiles.cpp - token-id files (runtime/data/TokenFiles) ------===//
//
// The input's first byte says where the source file ends and the target
// file begins; readParallelTokenFiles accepts the pair or says why not.
//
//===----------------------------------------------------------------------===//
#include "runtime/data/TokenFiles.h"
#include "test/fuzz/FuzzInput.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  size_t split = 1 + (size - 1) * data[0] / 255;
  std::string source = tgc::fuzz::asFile("ids.src", data + 1, split - 1);
  std::string target =
      tgc::fuzz::asFile("ids.tgt", data + split, size - split);
  tgc::runtime::ParallelCorpus corpus;
  std::string error = tgc::runtime::readParallelTokenFiles(
      source, target, {4, 8, 8, 16}, corpus);
  if (error.size() > 4096)
    std::abort(); // messages stay short (quoted input is cut)
  return 0;
}
