//===- FuzzInput.h - a fuzz input as the file a reader opens ---*- C++ -*-===//
//
// The readers under test open paths (they map or stat their files), so
// each input is written to a file in the process's temporary directory.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TEST_FUZZ_FUZZINPUT_H
#define TGC_TEST_FUZZ_FUZZINPUT_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace tgc::fuzz {

/// Writes `size` bytes to a per-process file named `name` and returns its
/// path; aborts when it cannot (a broken harness, not a finding).
inline std::string asFile(const char *name, const uint8_t *data, size_t size) {
  std::string path = "/tmp/tgc-fuzz-" + std::to_string(::getpid()) + "-" + name;
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file || (size && std::fwrite(data, 1, size, file) != size) ||
      std::fclose(file) != 0)
    std::abort();
  return path;
}

} // namespace tgc::fuzz

#endif // TGC_TEST_FUZZ_FUZZINPUT_H
