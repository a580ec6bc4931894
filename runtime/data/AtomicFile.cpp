//===- AtomicFile.cpp - files that appear whole or not at all -------------===//
#include "runtime/data/AtomicFile.h"

#include "runtime/data/FileChecks.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <string_view>
#include <unistd.h>

namespace tgc::runtime {
namespace {

constexpr size_t kBufferBytes = size_t{1} << 20;

/// Makes the rename itself durable.
/// The descriptor a path names as this process's own open file
/// ("/dev/stdout", "/dev/fd/3", "/proc/self/fd/3"), or -1.
int ownDescriptor(const std::string &path) {
  if (path == "/dev/stdout")
    return 1;
  if (path == "/dev/stderr")
    return 2;
  for (std::string_view prefix : {"/dev/fd/", "/proc/self/fd/"})
    if (path.starts_with(prefix) && path.size() > prefix.size() &&
        path.size() - prefix.size() <= 9 &&
        path.find_first_not_of("0123456789", prefix.size()) == std::string::npos)
      return std::atoi(path.c_str() + prefix.size());
  return -1;
}

} // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  buffer_.reserve(kBufferBytes);
  struct stat status;
  const bool exists = ::stat(path_.c_str(), &status) == 0;
  if (exists && S_ISDIR(status.st_mode)) {
    error_ = "cannot write " + path_ + ": it is a directory";
    return;
  }
  // One of this process's open files (/dev/stdout redirected to a file):
  // written through that descriptor, after what stdio holds for it, so
  // that the two share its offset.
  if (int own = ownDescriptor(path_); exists && own >= 0) {
    direct_ = true;
    temporary_ = target_ = path_;
    std::fflush(nullptr);
    fd_ = ::fcntl(own, F_DUPFD_CLOEXEC, 0);
    if (fd_ < 0)
      fail("opening");
    return;
  }
  // A device or a FIFO: renaming over it would replace the node itself.
  if (exists && !S_ISREG(status.st_mode)) {
    direct_ = true;
    temporary_ = target_ = path_;
    fd_ = openWriter(path_.c_str());
    if (fd_ < 0)
      error_ = "cannot write " + path_ + ": " + openWriterError(errno);
    return;
  }
  // A link stays a link: the file it names is replaced, beside it.
  target_ = linkedFile(path_);
  // A name no other writer uses, never through a link planted there.
  fd_ = createTemporaryFor(target_, temporary_);
  if (fd_ < 0) {
    fail("creating");
    return;
  }
  created_ = true;
  if (!keepPermissionsOf(target_, fd_))
    fail("setting the permissions of");
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0)
    ::close(fd_);
  if (!committed_ && created_) // only its own: O_EXCL may have met another's
    ::unlink(temporary_.c_str());
}

void AtomicFile::fail(const char *what) {
  if (error_.empty())
    error_ = "cannot write " + path_ + ": " + what +
             (direct_ ? std::string() : " " + temporary_) + ": " +
             std::strerror(errno);
}

void AtomicFile::write(const void *data, size_t bytes) {
  auto *p = static_cast<const char *>(data);
  while (bytes > 0 && error_.empty()) {
    size_t chunk = std::min(bytes, kBufferBytes - buffer_.size());
    buffer_.insert(buffer_.end(), p, p + chunk);
    p += chunk;
    bytes -= chunk;
    if (buffer_.size() == kBufferBytes)
      flush();
  }
}

void AtomicFile::flush() {
  const char *p = buffer_.data();
  size_t left = buffer_.size();
  while (left > 0 && error_.empty()) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      fail("writing");
      break;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  buffer_.clear();
}

std::string AtomicFile::finishWrites() {
  if (finished_)
    return error_;
  finished_ = true;
  if (error_.empty())
    flush();
  // A device or a FIFO may not sync (EINVAL): its writes were checked.
  if (error_.empty() && !direct_ && ::fsync(fd_) != 0)
    fail("flushing");
  if (error_.empty()) {
    int closed = ::close(fd_);
    fd_ = -1;
    if (closed != 0)
      fail("closing");
  }
  return error_;
}

std::string commitAll(std::initializer_list<AtomicFile *> files) {
  for (AtomicFile *file : files)
    if (std::string error = file->finishWrites(); !error.empty())
      return error;
  for (AtomicFile *file : files)
    if (std::string error = file->commit(); !error.empty())
      return error;
  return {};
}

std::string AtomicFile::commit() {
  finishWrites();
  if (error_.empty() && !direct_ &&
      ::rename(temporary_.c_str(), target_.c_str()) != 0)
    fail("renaming");
  if (!error_.empty())
    return error_;
  committed_ = true;
  if (!direct_)
    if (std::string warning = syncDirectoryOf(target_); !warning.empty())
      std::fprintf(stderr, "%s\n", warning.c_str());
  return {};
}

} // namespace tgc::runtime
