//===- VocabularyTool.cpp - SentencePiece through tgc-data ---------------===//
#include "runtime/program/train/VocabularyTool.h"

#include "runtime/data/FileChecks.h"
#include "runtime/data/ProtoWire.h"
#include "runtime/data/TokenCorpus.h"
#include "runtime/program/train/Interrupt.h"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <csignal>
#include <spawn.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace tgc::runtime {
namespace {

/// $TGC_DATA, else the tgc-data in `toolsDirectory` (the compiling tgc's),
/// else tgc-data on $PATH (that tgc was moved or removed).
std::string toolPath(const std::string &toolsDirectory) {
  const char *path = std::getenv("TGC_DATA");
  if (path && *path)
    return path;
  std::string beside = toolsDirectory + "/tgc-data";
  if (!toolsDirectory.empty() && access(beside.c_str(), X_OK) == 0)
    return beside;
  return "tgc-data";
}

/// Whether `tool` (a path, or a name looked up in $PATH as posix_spawnp
/// does) names a file this process may run.
bool runnable(const std::string &tool) {
  if (tool.find('/') != std::string::npos)
    return ::access(tool.c_str(), X_OK) == 0;
  const char *path = std::getenv("PATH");
  std::string_view directories = path ? path : "/usr/bin:/bin";
  while (true) {
    size_t colon = directories.find(':');
    std::string directory(directories.substr(0, colon));
    std::string candidate = (directory.empty() ? "." : directory) + "/" + tool;
    struct stat status;
    if (::stat(candidate.c_str(), &status) == 0 && S_ISREG(status.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0)
      return true;
    if (colon == std::string_view::npos)
      return false;
    directories.remove_prefix(colon + 1);
  }
}

/// A file in $TMPDIR without a name: removed as soon as it is made, so a
/// run killed while tgc-data works leaves nothing there (the text it
/// translates stayed behind); its space goes with the last descriptor.
struct TemporaryFile {
  std::string path;
  int fd = -1;
  TemporaryFile() {
    const char *dir = std::getenv("TMPDIR");
    path = std::string(dir && *dir ? dir : "/tmp") + "/tgc-vocab-XXXXXX";
    fd = mkostemp(path.data(), O_CLOEXEC);
    if (fd >= 0)
      unlink(path.c_str());
  }
  ~TemporaryFile() {
    if (fd >= 0)
      close(fd);
  }
};

} // namespace

/// The most bytes a vocabulary file may hold: a SentencePiece model of a
/// million pieces is tens of MB.
constexpr off_t kMaxVocabularyBytes = off_t{1} << 30;

std::unique_ptr<VocabularyTool>
VocabularyTool::open(const std::string &path, const std::string &toolsDirectory,
                     int64_t modelIds, std::string &error) {
  // A regular file only (tgc-data opens it again by its name, and a device
  // or a FIFO never ends), read no further than its size at the start.
  // O_NONBLOCK: opening a FIFO would wait for a writer.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat status;
  if (fd < 0 || ::fstat(fd, &status) != 0)
    error = path + ": " + std::strerror(errno);
  else if (!S_ISREG(status.st_mode))
    error = path + " is " + kindOfFile(status.st_mode) +
            ", not a regular file (a SentencePiece model of tgc-data vocab)";
  else if (status.st_size > kMaxVocabularyBytes)
    error = path + " is larger than 1 GiB: not a SentencePiece model";
  std::string bytes;
  if (error.empty()) {
    // Its size at the start (it may be shortened or grow while read).
    size_t size = static_cast<size_t>(status.st_size);
    if (std::string why = readUpTo(fd, size, bytes); !why.empty())
      error = path + ": " + why;
    bytes.resize(std::min(bytes.size(), size));
  }
  if (fd >= 0)
    ::close(fd);
  if (!error.empty())
    return nullptr;
  // Its pieces are ModelProto's field 1, one an id.
  int64_t pieces = 0;
  if (!forEachBytesField(bytes, [&](uint64_t number, std::string_view) {
        pieces += number == 1;
      }) ||
      pieces == 0) {
    error = path + ": not a SentencePiece model (a model of tgc-data vocab)";
    return nullptr;
  }
  // Run at the first validation and after a translation: a tool that
  // cannot run is said now, not after the training or the decoding.
  std::string tool = toolPath(toolsDirectory);
  if (!runnable(tool)) {
    error = "cannot run " + tool + ", which encodes and decodes text with " +
            path + ": not found or not executable (set $TGC_DATA to "
            "tgc-data)";
    return nullptr;
  }
  return std::unique_ptr<VocabularyTool>(new VocabularyTool(
      path, fnv1a64(bytes), std::move(tool), modelIds, pieces));
}

bool VocabularyTool::run(const char *mode, const std::string &input,
                         std::vector<std::string> &output,
                         std::string &error) const {
  TemporaryFile in, out;
  if (in.fd < 0 || out.fd < 0) {
    error = "cannot create a temporary file: " + std::string(std::strerror(errno));
    return false;
  }
  if (write(in.fd, input.data(), input.size()) !=
          static_cast<ssize_t>(input.size()) ||
      lseek(in.fd, 0, SEEK_SET) != 0) {
    error = "cannot write a temporary file in " + in.path.substr(0, in.path.rfind('/')) +
            ": " + std::strerror(errno);
    return false;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.fd, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out.fd, STDOUT_FILENO);
  const char *argv[] = {tool.c_str(), mode, "--vocab", modelPath.c_str(), "--ids",
                        nullptr};
  pid_t child;
  // The child gets no blocked signals: this program blocks SIGINT and
  // SIGTERM in its threads (Interrupt.h), and Ctrl-C must reach tgc-data too.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attributes, &none);
  // Nor SIGPIPE ignored, as this program does (Main.cpp): tgc-data keeps
  // the default a filter has.
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  posix_spawnattr_setsigdefault(&attributes, &pipe);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  int spawned = posix_spawnp(&child, tool.c_str(), &actions, &attributes,
                            const_cast<char **>(argv), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    error = std::string("cannot run ") + tool + ": " + std::strerror(spawned) +
            " (set $TGC_DATA to tgc-data)";
    return false;
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    error = std::string(tool) + " " + mode + " --vocab " + modelPath +
            " was ended by " + signalName(WTERMSIG(status));
    return false;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    error = std::string(tool) + " " + mode + " --vocab " + modelPath +
            " failed (its message is above)";
    return false;
  }
  std::string text;
  if (lseek(out.fd, 0, SEEK_SET) != 0) {
    error = std::string("cannot read what ") + tool + " wrote: " +
            std::strerror(errno);
    return false;
  }
  constexpr size_t kMaxOutputBytes = size_t{4} << 30;
  if (std::string why = readUpTo(out.fd, kMaxOutputBytes, text);
      !why.empty() || text.size() > kMaxOutputBytes) {
    error = std::string("cannot read what ") + tool + " wrote: " +
            (why.empty() ? "more than 4 GiB" : why);
    return false;
  }
  output.clear();
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size(); // a last line without its newline counts
    output.emplace_back(text, start, end - start);
    start = end + 1;
  }
  return true;
}

bool VocabularyTool::encode(const std::vector<std::string> &lines,
                            std::vector<std::vector<int32_t>> &ids,
                            std::string &error) const {
  std::string input;
  for (const std::string &line : lines)
    input += line + "\n";
  std::vector<std::string> output;
  if (!run("encode", input, output, error))
    return false;
  if (output.size() != lines.size()) {
    error = "tgc-data encode gave " + std::to_string(output.size()) +
            " lines for " + std::to_string(lines.size());
    return false;
  }
  ids.assign(lines.size(), {});
  for (size_t i = 0; i < output.size(); ++i) {
    std::istringstream numbers(output[i]);
    for (int32_t id; numbers >> id;) {
      // The ids index the model's embedding table: one past it would read
      // past the parameters.
      if (id < 0 || id >= modelIds) {
        error = "line " + std::to_string(i + 1) + ": " + modelPath +
                " gives piece id " + std::to_string(id) +
                ", and the model has " + std::to_string(modelIds) +
                " ids: not the vocabulary it was trained with";
        return false;
      }
      ids[i].push_back(id);
    }
  }
  return true;
}

bool VocabularyTool::decode(const std::vector<std::vector<int32_t>> &ids,
                            std::vector<std::string> &lines,
                            std::string &error) const {
  std::string input;
  for (const std::vector<int32_t> &sentence : ids) {
    for (size_t k = 0; k < sentence.size(); ++k)
      input += (k ? " " : "") + std::to_string(sentence[k]);
    input += "\n";
  }
  if (!run("decode", input, lines, error))
    return false;
  if (lines.size() != ids.size()) {
    error = "tgc-data decode gave " + std::to_string(lines.size()) +
            " lines for " + std::to_string(ids.size());
    return false;
  }
  return true;
}

} // namespace tgc::runtime
