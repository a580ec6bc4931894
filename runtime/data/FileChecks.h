//===- FileChecks.h - what a path is, before it is read or replaced -*- C++ -*-===//
//
// Small checks shared by the writers (AtomicFile, checkpoints) and the
// readers (token files, corpora) of user files, header-only so that every
// runtime archive can use them without a link dependency:
//
// - kindOfFile: "a directory", "a character device", ... for messages.
// - checkReplaceable: a path that exists and is not a regular file (a
//   device such as /dev/full, a directory, a FIFO) must never be renamed
//   over.
// - checkInputFile: "X is a directory", "X is empty" before a reader finds
//   nothing in it and says something less helpful.
// - openWriter: opens a path for writing without waiting for ever on a FIFO
//   that no process reads (ENXIO then).
// - linkedFile: the file a path names through its symbolic links (what a
//   writer replaces, beside it, and a lock guards: a link stays a link).
// - temporaryPathFor: "<path>.tmp.<pid>.<n>", unique to this process and
//   call, in the same directory (so that the rename stays on one file
//   system); createTemporaryFor creates one with O_EXCL and O_NOFOLLOW,
//   past names an earlier process of the same pid left; isStaleTemporary
//   tells one left by a process that died, by its exact name.
// - readUpTo: what a file descriptor holds, up to a limit, read through
//   interrupted reads (the text readers' and the vocabulary's bounded
//   reads).
// - quoteInput: a piece of user input for a message, at most ~80 bytes,
//   with control bytes (NUL included) escaped, so that neither a NUL nor a
//   10 MB line reaches the terminal.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_DATA_FILECHECKS_H
#define TGC_RUNTIME_DATA_FILECHECKS_H

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdlib>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

namespace tgc::runtime {

/// A file descriptor closed when it goes out of scope (-1: none).
struct Descriptor {
  int fd = -1;
  ~Descriptor() {
    if (fd >= 0)
      ::close(fd);
  }
};

/// "a directory", "a character device", "a FIFO", ... ("a regular file").
inline const char *kindOfFile(mode_t mode) {
  if (S_ISREG(mode))
    return "a regular file";
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

/// An empty string when `path` does not exist or is a regular file (or a
/// link to one), else "<path> is a directory, not a regular file" and the
/// like.
inline std::string checkReplaceable(const std::string &path) {
  struct stat status;
  if (::stat(path.c_str(), &status) != 0 || S_ISREG(status.st_mode))
    return {};
  return path + " is " + kindOfFile(status.st_mode) + ", not a regular file";
}

/// An empty string when `path` can be read as a file of data, else why not:
/// "<path>: No such file or directory", "<path> is a directory",
/// "<path> is empty" (`emptyOk`: an empty regular file is fine). Devices and
/// FIFOs pass: they have no size to check.
inline std::string checkInputFile(const std::string &path,
                                  bool emptyOk = false) {
  struct stat status;
  if (::stat(path.c_str(), &status) != 0)
    return path + ": " + std::strerror(errno);
  if (S_ISDIR(status.st_mode))
    return path + " is a directory, not a file";
  if (S_ISREG(status.st_mode) && status.st_size == 0 && !emptyOk)
    return path + " is empty";
  return {};
}

/// The file `path` names: the path itself, or where a symbolic link leads,
/// also one that names no file yet (its target, relative to the link's
/// directory).
inline std::string linkedFile(const std::string &path) {
  std::string current = path;
  for (int hops = 0; hops < 40; ++hops) { // as the kernel's ELOOP limit
    struct stat status;
    if (::lstat(current.c_str(), &status) != 0 || !S_ISLNK(status.st_mode))
      return current;
    char resolved[PATH_MAX];
    if (::realpath(current.c_str(), resolved))
      return resolved;
    char target[PATH_MAX];
    ssize_t n = ::readlink(current.c_str(), target, sizeof target);
    if (n <= 0 || n == static_cast<ssize_t>(sizeof target))
      return current;
    std::string next(target, static_cast<size_t>(n));
    size_t slash = current.rfind('/');
    if (next[0] != '/' && slash != std::string::npos)
      next = current.substr(0, slash + 1) + next;
    current = next;
  }
  return current;
}

/// open(path, flags) with O_NONBLOCK, which it then clears: the open of a
/// FIFO does not wait for the other side, later reads and writes block as
/// usual. The descriptor, or -1 with errno set.
inline int openWithoutWaiting(const char *path, int flags) {
  int fd = ::open(path, flags | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd >= 0) {
    int status = ::fcntl(fd, F_GETFL);
    if (status < 0 || ::fcntl(fd, F_SETFL, status & ~O_NONBLOCK) < 0) {
      int saved = errno;
      ::close(fd);
      errno = saved;
      return -1;
    }
  }
  return fd;
}

/// open(path, O_WRONLY | extra) without blocking: a FIFO that no process
/// reads fails with ENXIO (a plain open would wait for a reader for ever);
/// once open, writes block as usual. The descriptor, or -1 with errno set.
inline int openWriter(const char *path, int extra = 0) {
  return openWithoutWaiting(path, O_WRONLY | extra);
}

/// open(path, O_RDONLY) without waiting for a FIFO's writer (a plain open
/// waits for one for ever, past Ctrl-C): a pipe whose writer is there
/// (`<(command)`) reads as usual, a FIFO that no process writes reads as
/// empty. The descriptor, or -1 with errno set.
inline int openReader(const char *path) {
  return openWithoutWaiting(path, O_RDONLY);
}

/// strerror's text for a failed openWriter, ENXIO read as what it means
/// there.
inline std::string openWriterError(int error) {
  return error == ENXIO ? "it is a FIFO that no process reads"
                        : std::strerror(error);
}

/// Syncs the directory that holds `path`, so that a rename into it
/// survives a power cut: "" or why not, as a warning's text (the file is in
/// place either way). File systems that cannot sync a directory (EINVAL)
/// say nothing.
inline std::string syncDirectoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  std::string directory =
      slash == std::string::npos ? "." : path.substr(0, slash + 1);
  Descriptor dir{::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (dir.fd >= 0 && ::fsync(dir.fd) == 0)
    return {};
  if (errno == EINVAL)
    return {};
  return "warning: " + path + " is in place, but syncing its directory " +
         directory + " failed (" + std::strerror(errno) +
         "): a power cut could still lose it";
}

/// Gives a file about to replace `target` (open as `fd`) the target's
/// permission bits, where it is an existing regular file: a save must not
/// make a private file readable by all (a new file keeps 0644 less the
/// umask). False with errno set when fchmod fails.
inline bool keepPermissionsOf(const std::string &target, int fd) {
  struct stat status;
  if (::stat(target.c_str(), &status) != 0 || !S_ISREG(status.st_mode))
    return true;
  return ::fchmod(fd, status.st_mode & 07777) == 0;
}

/// Whether `status` is /dev/null's (an empty input, as `< /dev/null` gives).
inline bool isNullDevice(const struct stat &status) {
  struct stat null;
  return S_ISCHR(status.st_mode) && ::stat("/dev/null", &null) == 0 &&
         S_ISCHR(null.st_mode) && status.st_rdev == null.st_rdev;
}

/// Why a text input open as `fd` is refused, or "": a device other than a
/// terminal (which ends at ^D) or /dev/null never ends (/dev/zero,
/// /dev/urandom). `name` names it in the message.
inline std::string checkTextDescriptor(int fd, const std::string &name) {
  struct stat status;
  if (::fstat(fd, &status) != 0)
    return name + ": " + std::strerror(errno);
  if (S_ISCHR(status.st_mode) && !::isatty(fd) && !isNullDevice(status))
    return name + " is a character device, not a regular file or a pipe";
  return "";
}

/// "<path>.tmp.<pid>.<n>": a new name at each call.
inline std::string temporaryPathFor(const std::string &path) {
  static std::atomic<unsigned> counter{0};
  return path + ".tmp." + std::to_string(::getpid()) + "." +
         std::to_string(counter.fetch_add(1));
}

/// Creates a new temporary file for `path` (temporaryPathFor's name, into
/// `temporary`), with O_EXCL and O_NOFOLLOW: never another writer's file,
/// never through a link planted there. A name that is taken is passed
/// for the next: an earlier process with this pid (a container's program
/// often has the same pid at every start) killed during a write left it,
/// and the write failed at every restart. Returns the descriptor, or -1
/// with errno.
inline int createTemporaryFor(const std::string &path, std::string &temporary) {
  for (int attempt = 0; attempt < 64; ++attempt) {
    temporary = temporaryPathFor(path);
    int fd = ::open(temporary.c_str(),
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EEXIST)
      return fd;
  }
  return -1;
}

/// Whether `text` is a number as std::to_string writes it: digits, no
/// sign, no leading zero.
inline bool isCanonicalNumber(std::string_view text) {
  return !text.empty() && text.size() <= 19 &&
         text.find_first_not_of("0123456789") == std::string_view::npos &&
         (text == "0" || text[0] != '0');
}

/// Whether `name` (a file name in `path`'s directory) is a temporary file
/// of `path` exactly as temporaryPathFor names it ("<base>.tmp.<pid>.<n>",
/// nothing before or after) whose process no longer runs, or, with
/// `ownAreStale` (a caller that holds `path`'s lock and has not written it
/// yet), one of this process's pid: an earlier process's with the same pid.
/// Only such files are removed as leftovers: a user's
/// "<base>.tmp.<pid>.notes" is not one.
inline bool isStaleTemporary(std::string_view name, std::string_view base,
                             bool ownAreStale = false) {
  std::string prefix = std::string(base) + ".tmp.";
  if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix)
    return false;
  std::string_view rest = name.substr(prefix.size());
  size_t dot = rest.find('.');
  if (dot == std::string_view::npos ||
      !isCanonicalNumber(rest.substr(0, dot)) ||
      !isCanonicalNumber(rest.substr(dot + 1)))
    return false;
  long long pid = 0;
  std::from_chars(rest.data(), rest.data() + dot, pid);
  if (pid <= 0)
    return false;
  if (pid == ::getpid())
    return ownAreStale;
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

/// Appends what `fd` holds to `out` until its end or until `out` holds
/// more than `limit` bytes (a read past the limit tells "exactly the limit"
/// from "more"), retrying interrupted reads. Returns "" or strerror's text.
inline std::string readUpTo(int fd, size_t limit, std::string &out) {
  char buffer[1 << 16];
  while (out.size() <= limit) {
    size_t want = std::min(sizeof buffer, limit + 1 - out.size());
    ssize_t n = ::read(fd, buffer, want);
    if (n > 0)
      out.append(buffer, static_cast<size_t>(n));
    else if (n == 0)
      return "";
    else if (errno != EINTR)
      return std::strerror(errno);
  }
  return "";
}

/// `input` for a message: control bytes and bytes of no UTF-8 character
/// as \xNN (raw, they reached the terminal), at most `limit` bytes of it,
/// then "..." and its length when it was longer.
inline std::string quoteInput(std::string_view input, size_t limit = 80) {
  static const char digits[] = "0123456789abcdef";
  auto escape = [&](std::string &quoted, unsigned char c) {
    quoted += "\\x";
    quoted += digits[c >> 4];
    quoted += digits[c & 15];
  };
  std::string quoted;
  size_t shown = 0;
  while (shown < input.size() && quoted.size() < limit) {
    unsigned char c = static_cast<unsigned char>(input[shown]);
    if (c < 0x20 || c == 0x7f) {
      escape(quoted, c);
      ++shown;
    } else if (input.substr(shown, 3) == "\xef\xbb\xbf") {
      quoted += "\\ufeff"; // a byte-order mark, invisible as it is
      shown += 3;
    } else if (c < 0x80) {
      quoted += static_cast<char>(c);
      ++shown;
    } else {
      // A whole UTF-8 character as it is; any other byte escaped.
      size_t length = c >= 0xf5   ? 0
                      : c >= 0xf0 ? 4
                      : c >= 0xe0 ? 3
                      : c >= 0xc2 ? 2
                                  : 0;
      bool whole = length > 0 && shown + length <= input.size();
      for (size_t i = 1; whole && i < length; ++i)
        whole = (static_cast<unsigned char>(input[shown + i]) & 0xc0) == 0x80;
      if (whole && quoted.size() + length > limit)
        break; // never half a character
      if (whole) {
        quoted.append(input.substr(shown, length));
        shown += length;
      } else {
        escape(quoted, c);
        ++shown;
      }
    }
  }
  if (shown < input.size())
    quoted += "... (" + std::to_string(input.size()) + " bytes)";
  return quoted;
}

} // namespace tgc::runtime

#endif // TGC_RUNTIME_DATA_FILECHECKS_H
