//===- InputFile.cpp - reading what a user feeds tgc and tgc-opt ---------===//
#include "frontend/InputFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"

#include <vector>

namespace tgc {

namespace {
std::string named(llvm::StringRef path, llvm::StringRef what) {
  return what.empty() ? path.str() : (what + " " + path).str();
}

const char *kindName(llvm::sys::fs::file_type type) {
  using llvm::sys::fs::file_type;
  switch (type) {
  case file_type::directory_file:
    return "a directory";
  case file_type::character_file:
    return "a character device";
  case file_type::block_file:
    return "a block device";
  case file_type::fifo_file:
    return "a FIFO";
  case file_type::socket_file:
    return "a socket";
  default:
    return "not a regular file";
  }
}

std::string tooLarge(llvm::StringRef name, uint64_t bytes) {
  std::string limit = std::to_string(kMaxInputBytes >> 20) + " MiB";
  if (!bytes)
    return name.str() + " is larger than the limit of " + limit;
  return name.str() + " is too large (" + std::to_string(bytes) +
         " bytes; the limit is " + limit + ")";
}

/// Standard input up to the limit: a pipe that never ends is refused, not
/// read forever.
std::unique_ptr<llvm::MemoryBuffer> readStandardInput(std::string &error) {
  std::vector<char> data;
  char chunk[1 << 16];
  while (true) {
    llvm::Expected<size_t> count = llvm::sys::fs::readNativeFile(
        llvm::sys::fs::getStdinHandle(), llvm::MutableArrayRef<char>(chunk));
    if (!count) {
      error = "cannot read standard input: " +
              llvm::toString(count.takeError());
      return nullptr;
    }
    if (*count == 0)
      break;
    data.insert(data.end(), chunk, chunk + *count);
    if (data.size() > kMaxInputBytes) {
      error = tooLarge("standard input", 0);
      return nullptr;
    }
  }
  return llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(data.data(), data.size()), "<stdin>");
}
} // namespace

std::string checkInputPath(llvm::StringRef path, llvm::StringRef what) {
  std::string name = named(path, what);
  llvm::sys::fs::file_status status;
  // A missing or unreadable file is reported by whoever opens it.
  if (llvm::sys::fs::status(path, status))
    return "";
  if (status.type() == llvm::sys::fs::file_type::directory_file)
    return name + " is a directory, not a file";
  if (status.type() != llvm::sys::fs::file_type::regular_file)
    return name + " is " + kindName(status.type()) +
           ", not a regular file (give - to read standard input)";
  if (status.getSize() > kMaxInputBytes)
    return tooLarge(name, status.getSize());
  return "";
}

std::unique_ptr<llvm::MemoryBuffer> readInputFile(llvm::StringRef path,
                                                  std::string &error,
                                                  llvm::StringRef what) {
  if (path == "-")
    return readStandardInput(error);
  error = checkInputPath(path, what);
  if (!error.empty())
    return nullptr;
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/true);
  if (!file) {
    error = "cannot open input file '" + path.str() +
            "': " + file.getError().message();
    return nullptr;
  }
  // The file may have grown since it was checked.
  if ((*file)->getBufferSize() > kMaxInputBytes) {
    error = tooLarge(named(path, what), (*file)->getBufferSize());
    return nullptr;
  }
  return std::move(*file);
}

std::string checkNesting(const llvm::MemoryBuffer &buffer, int limit) {
  llvm::StringRef text = buffer.getBuffer();
  std::optional<size_t> deep = findDeepNesting(text, limit);
  if (!deep)
    return "";
  llvm::StringRef before = text.take_front(*deep);
  size_t line = before.count('\n') + 1;
  size_t lineStart = before.rfind('\n');
  size_t column = lineStart == llvm::StringRef::npos ? *deep + 1
                                                     : *deep - lineStart;
  return (buffer.getBufferIdentifier() + ":" + llvm::Twine(line) + ":" +
          llvm::Twine(column) + ": error: nesting deeper than " +
          llvm::Twine(limit) + " levels of brackets ([ { ( <)")
      .str();
}

} // namespace tgc
