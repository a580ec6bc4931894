//===- FuzzInput.h - a fuzz input as the file a reader opens ---*- C++ -*-===//
//
// The readers under test open paths (they map or stat their files), so
// each input is written to a file in a directory of the process's own under
// $TMPDIR (or /tmp), removed with its files when the process exits.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TEST_FUZZ_FUZZINPUT_H
#define TGC_TEST_FUZZ_FUZZINPUT_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>
#include <zlib.h>

namespace tgc::fuzz {

/// The process's directory for its inputs: made on first use
/// (tgc-fuzz-XXXXXX under $TMPDIR, or /tmp where that is unset or
/// unusable), removed with what it holds at exit, so that millions of runs
/// leave nothing behind.
class ScratchDirectory {
public:
  ScratchDirectory() {
    const char *base = std::getenv("TMPDIR");
    if (!(base && *base && make(base)) && !make("/tmp"))
      std::abort();
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  ScratchDirectory(const ScratchDirectory &) = delete;
  ScratchDirectory &operator=(const ScratchDirectory &) = delete;

  std::string path;

private:
  /// Makes tgc-fuzz-XXXXXX under `base`; false where it cannot.
  bool make(const char *base) {
    std::string pattern = std::string(base) + "/tgc-fuzz-XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    if (!::mkdtemp(name.data()))
      return false;
    path = name.data();
    return true;
  }
};

/// Writes `size` bytes to the file `name` of the process's scratch
/// directory and returns its path; aborts when it cannot (a broken harness,
/// not a finding).
inline std::string asFile(const char *name, const uint8_t *data, size_t size) {
  static ScratchDirectory directory;
  std::string path = directory.path + "/" + name;
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file || (size && std::fwrite(data, 1, size, file) != size) ||
      std::fclose(file) != 0)
    std::abort();
  return path;
}

/// CRC-32 (zlib's, as the readers') of `size` bytes at `data`, stored
/// little-endian at `at`: a mutated input gets the checksum its reader
/// expects, so that mutations reach the parser behind the check (whose
/// refusals of flipped bytes the test suite covers).
inline void storeCrc32(std::vector<uint8_t> &bytes, size_t from, size_t size,
                       size_t at) {
  uint32_t crc = static_cast<uint32_t>(
      ::crc32(::crc32(0L, nullptr, 0), bytes.data() + from, static_cast<uInt>(size)));
  for (int i = 0; i < 4; ++i)
    bytes[at + i] = static_cast<uint8_t>(crc >> (8 * i));
}

inline uint32_t loadU32(const std::vector<uint8_t> &bytes, size_t at) {
  uint32_t value;
  std::memcpy(&value, bytes.data() + at, sizeof value);
  return value;
}

} // namespace tgc::fuzz

#endif // TGC_TEST_FUZZ_FUZZINPUT_H
