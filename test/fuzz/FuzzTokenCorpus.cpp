//===- FuzzTokenCorpus.cpp - .tok files (runtime/data/TokenCorpus) --------===//
//
// Any bytes: TokenCorpus::open accepts them or says why not; an accepted
// corpus's every pair can be read. A version-2 file's trailer (CRC-32 of
// everything before it, then 4 zero bytes) is made to match first.
//
//===----------------------------------------------------------------------===//
#include "runtime/data/TokenCorpus.h"
#include "test/fuzz/FuzzInput.h"

// The reads below are kept: their sum is stored here.
volatile uint64_t tokenSum;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  constexpr size_t kHeaderBytes = 48, kTrailerBytes = 8;
  if (size >= kHeaderBytes + kTrailerBytes && tgc::fuzz::loadU32(bytes, 8) == 2) {
    tgc::fuzz::storeCrc32(bytes, 0, size - kTrailerBytes, size - kTrailerBytes);
    std::memset(bytes.data() + size - 4, 0, 4);
  }
  std::string error;
  auto corpus = tgc::runtime::TokenCorpus::open(
      tgc::fuzz::asFile("corpus.tok", bytes.data(), size), error);
  if (!corpus) {
    if (error.empty())
      std::abort(); // a refusal says why
    return 0;
  }
  uint64_t sum = 0;
  for (size_t i = 0; i < corpus->size(); ++i) {
    for (int32_t id : corpus->source(i))
      sum += static_cast<uint32_t>(id);
    for (int32_t id : corpus->target(i))
      sum += static_cast<uint32_t>(id);
  }
  tokenSum = sum;
  return 0;
}
