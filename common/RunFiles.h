//===- RunFiles.h - no run writes over a file it reads ----------*- C++ -*-===//
//
// Every tool (tgc, a training program, tgc-data) lists the files one run
// reads and writes, each by the flag that names it, and asks
// findClobberedFile before it writes anything. An output that is the same
// file as an input destroys what the run reads (`tgc --model-file m.cpp -o
// m --keep-cpp` wrote m.cpp over the model file; `tgc-data encode -o` the
// source text); one that is the same file as another output loses what was
// written first (--metrics naming the checkpoint). "The same file" is the
// same device and inode when both exist, which sees through symbolic and
// hard links, else the same path once its directory is resolved: an output
// not written yet. Only regular files count: writing to a device or a FIFO
// (/dev/stdout as the output, /dev/stdin as the input) destroys nothing.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_COMMON_RUNFILES_H
#define TGC_COMMON_RUNFILES_H

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace tgc {

/// One file of a run, named as the messages name it.
struct RunFile {
  std::string flag; ///< "--checkpoint", "-o", "the model file"
  std::string path; ///< empty: not given (skipped)
  bool written = false;
  /// The flag of a file this output may be: a checkpoint continues the
  /// --resume file it was read from.
  std::string mayBe = {};
};

namespace detail {

/// `path` with its directory resolved (realpath), or as given when the
/// directory does not exist: the name an output will have.
inline std::string resolvedName(const std::string &path) {
  size_t slash = path.rfind('/');
  std::string directory =
      slash == std::string::npos ? "." : path.substr(0, slash + 1);
  char resolved[PATH_MAX];
  if (!::realpath(directory.c_str(), resolved))
    return path;
  return std::string(resolved) + "/" +
         (slash == std::string::npos ? path : path.substr(slash + 1));
}

} // namespace detail

/// Whether `a` and `b` are the same regular file (see above).
inline bool isSameFile(const std::string &a, const std::string &b) {
  struct stat first, second;
  bool firstExists = ::stat(a.c_str(), &first) == 0;
  bool secondExists = ::stat(b.c_str(), &second) == 0;
  if (firstExists && secondExists)
    return S_ISREG(first.st_mode) && first.st_dev == second.st_dev &&
           first.st_ino == second.st_ino;
  return !firstExists && !secondExists &&
         detail::resolvedName(a) == detail::resolvedName(b);
}

/// The path of the running program (/proc/self/exe resolved), an input of
/// every run: no output may replace it. Empty where /proc is not mounted.
inline std::string thisProgram() {
  char path[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : std::string();
}

/// "a tgc checkpoint" or "a tgc token corpus" when `path` is an existing
/// file of that kind (by its first 8 bytes), else null: a text output
/// (--output, --metrics, ...) never replaces one (generating with --output
/// naming a checkpoint's .best wrote text over it).
inline const char *tgcBinaryKind(const std::string &path) {
  struct stat status;
  if (::stat(path.c_str(), &status) != 0 || !S_ISREG(status.st_mode))
    return nullptr;
  char head[8] = {};
  FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return nullptr;
  size_t n = std::fread(head, 1, sizeof head, file);
  std::fclose(file);
  std::string magic(head, n);
  if (magic == std::string("TGCCKPT\n", 8))
    return "a tgc checkpoint";
  if (magic == std::string("TGCTOKS\n", 8) || magic == std::string("TGCDOCS\n", 8))
    return "a tgc token corpus";
  return nullptr;
}

/// An empty string, or why the run must not start: "--checkpoint X is the
/// same file as --train-source Y: ..." for the first output that is the
/// same file as another file of `files` (not its `mayBe`).
inline std::string findClobberedFile(const std::vector<RunFile> &files) {
  for (const RunFile &output : files) {
    if (!output.written || output.path.empty())
      continue;
    for (const RunFile &other : files) {
      if (&other == &output || other.path.empty() ||
          (!output.mayBe.empty() && other.flag == output.mayBe) ||
          // A pair of outputs is reported once.
          (other.written && &other < &output) ||
          !isSameFile(output.path, other.path))
        continue;
      return output.flag + " " + output.path + " is the same file as " +
             other.flag + " " + other.path +
             (other.written ? ": two outputs of one run cannot share a file"
                            : ": a run never writes over a file it reads") +
             " (nothing was written)";
    }
  }
  return {};
}

/// An empty string, or why an output of `files` cannot be written where it
/// is named: a directory, or a directory that does not exist or that this
/// process cannot write in. Asked before the work, not after it (a run
/// trained every step, or tgc compiled the whole step, then failed there).
inline std::string findUnwritableOutput(const std::vector<RunFile> &files) {
  for (const RunFile &output : files) {
    if (!output.written || output.path.empty() || output.path == "-")
      continue;
    struct stat status;
    if (::stat(output.path.c_str(), &status) == 0) {
      // (A checkpoint that may be the --resume file is the reader's to
      // refuse: it says what the resumed file is.)
      if (S_ISDIR(status.st_mode) && output.mayBe.empty())
        return output.flag + " " + output.path +
               " is a directory: it names the file to write (nothing was "
               "written)";
      continue; // replaced or refused by whoever writes it
    }
    size_t slash = output.path.rfind('/');
    std::string directory = slash == std::string::npos ? "."
                            : slash == 0 ? "/"
                                         : output.path.substr(0, slash);
    if (::stat(directory.c_str(), &status) != 0 || !S_ISDIR(status.st_mode))
      return output.flag + " " + output.path + ": its directory " +
             directory + " does not exist (nothing was written)";
    if (::access(directory.c_str(), W_OK | X_OK) != 0)
      return output.flag + " " + output.path + ": its directory " +
             directory + " cannot be written in (nothing was written)";
  }
  return {};
}

} // namespace tgc

#endif // TGC_COMMON_RUNFILES_H
