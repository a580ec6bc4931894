//===- BuildCacheDirectory.cpp - what the build cache owns ----------------===//
#include "tools/driver/BuildCacheDirectory.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>
#include <chrono>
#include <vector>

namespace tgc {
namespace {

namespace fs = llvm::sys::fs;

constexpr llvm::StringLiteral kMarkerName = "CACHEDIR.TAG";
/// The cache directory tag's signature line (https://bford.info/cachedir/),
/// then what makes the marker tgc's.
constexpr llvm::StringLiteral kMarkerText =
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# tgc's build cache (--build-cache, $TGC_BUILD_CACHE): tgc made this\n"
    "# directory and every file in it, and removes them when it likes.\n";

/// A temporary (`*.partial`) or a description without its entry this old
/// is left over by a tgc that was killed (a write takes seconds).
constexpr std::chrono::hours kLeftOverAfter{1};

std::string childOf(llvm::StringRef directory, llvm::StringRef name) {
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, name);
  return path.str().str();
}

/// The type of `path` itself (a link is a link); file_not_found if none.
fs::file_type typeOf(const llvm::Twine &path) {
  fs::file_status status;
  if (fs::status(path, status, /*Follow=*/false))
    return fs::file_type::file_not_found;
  return status.type();
}

/// Whether `entries` is a directory (not a link to one) holding tgc's
/// marker, exactly.
bool ownedByTgc(llvm::StringRef entries) {
  std::string marker = childOf(entries, kMarkerName);
  if (typeOf(entries) != fs::file_type::directory_file ||
      typeOf(marker) != fs::file_type::regular_file)
    return false;
  auto text = llvm::MemoryBuffer::getFile(marker, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  return text && (*text)->getBuffer() == kMarkerText;
}

/// Makes `entries` in `directory`: a temporary directory with the marker,
/// renamed into place. False with `why`; true also when another tgc made
/// it first (the rename then fails, and the caller looks at it).
bool makeOwnedDirectory(llvm::StringRef directory, llvm::StringRef entries,
                        std::string &why) {
  // Directories it makes are writable by this user alone, whatever the
  // umask (privateTo refuses a way to the cache that others can write).
  if (std::error_code ec = fs::create_directories(
          directory, /*IgnoreExisting=*/true,
          fs::perms::all_all & ~(fs::group_write | fs::others_write))) {
    why = "cannot create " + directory.str() + ": " + ec.message();
    return false;
  }
  // createUniqueDirectory puts a relative prefix in the system's temporary
  // directory: made absolute here, the new directory is made beside its
  // final place (a relative --build-cache was staged under /tmp, and not
  // used where that path did not exist there).
  llvm::SmallString<256> prefix, temporary;
  (entries + ".new").toVector(prefix);
  std::error_code ec = fs::make_absolute(prefix);
  if (!ec)
    ec = fs::createUniqueDirectory(prefix, temporary);
  // Writable by this user alone, whatever the umask (openBuildCacheDirectory
  // uses no other).
  if (!ec) {
    llvm::ErrorOr<fs::perms> mode = fs::getPermissions(temporary);
    ec = mode ? fs::setPermissions(temporary, *mode & ~(fs::group_write |
                                                       fs::others_write))
              : mode.getError();
  }
  std::string marker = childOf(temporary, kMarkerName);
  if (!ec) {
    llvm::raw_fd_ostream os(marker, ec);
    if (!ec) {
      os << kMarkerText;
      os.close();
      if (os.has_error())
        ec = os.error();
    }
  }
  if (!ec && !(ec = fs::rename(temporary, entries)))
    return true;
  fs::remove(marker);
  fs::remove(temporary);
  // Another tgc made it first: the caller looks at that one.
  if (typeOf(entries) != fs::file_type::file_not_found)
    return true;
  why = "cannot create " + entries.str() + ": " + ec.message();
  return false;
}

bool isEntryName(llvm::StringRef name) {
  return name.size() == 32 &&
         name.find_first_not_of("0123456789abcdef") == llvm::StringRef::npos;
}

bool isDescriptionName(llvm::StringRef name) {
  return name.consume_back(".txt") && isEntryName(name);
}

/// "<entry or description>-XXXXXXXX.partial", as BuildCache.cpp's
/// temporaries are named (XXXXXXXX: createUniqueFile's hex digits).
bool isPartialName(llvm::StringRef name) {
  if (!name.consume_back(".partial"))
    return false;
  auto [written, unique] = name.rsplit('-');
  return unique.size() == 8 &&
         unique.find_first_not_of("0123456789abcdef") ==
             llvm::StringRef::npos &&
         (isEntryName(written) || isDescriptionName(written));
}

} // namespace

/// Why another user could change what `path` holds (it or a directory
/// above it theirs, or writable by them), or "". `child`: whether `path`
/// is a directory on the way to the cache, which may be writable by others
/// where it is sticky (/tmp: others cannot rename this user's entries)
/// and the next one on the way is this user's or root's.
static std::string openToOthers(const std::string &path, bool child,
                                const struct stat &next) {
  struct stat status;
  if (::lstat(path.c_str(), &status) != 0)
    return path + ": " + std::strerror(errno);
  const uid_t me = ::geteuid();
  const bool trusted = status.st_uid == me || (child && status.st_uid == 0);
  if (!trusted)
    return path + " belongs to another user (uid " +
           std::to_string(status.st_uid) + ")";
  if (!(status.st_mode & (S_IWGRP | S_IWOTH)))
    return "";
  if (child && (status.st_mode & S_ISVTX) &&
      (next.st_uid == me || next.st_uid == 0))
    return "";
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o",
                static_cast<unsigned>(status.st_mode & 07777));
  return path + " can be written by other users (mode " + mode + ")";
}

/// Whether only this user can change `entries` and the way to it: another
/// user who could would choose the programs tgc copies out of it (one who
/// could write a directory above it swapped the checked directory for
/// theirs while the compiler ran). `entries` becomes its real path, which
/// later reads and writes use: no link on it can change once checked.
static bool privateTo(std::string &entries, std::string &why) {
  char *resolved = ::realpath(entries.c_str(), nullptr);
  if (!resolved)
    return true; // the caller says what is wrong with it
  std::string real = resolved;
  std::free(resolved);
  struct stat next {};
  std::string problem = openToOthers(real, /*child=*/false, next);
  for (std::string path = real; problem.empty();) {
    if (::lstat(path.c_str(), &next) != 0)
      break;
    std::string parent = llvm::sys::path::parent_path(path).str();
    if (parent.empty() || parent == path)
      break;
    problem = openToOthers(parent, /*child=*/true, next);
    path = parent;
  }
  if (!problem.empty()) {
    why = problem + ": tgc does not run programs others can choose; chmod "
                    "go-w it, or give another --build-cache";
    return false;
  }
  entries = real;
  return true;
}

bool openBuildCacheDirectory(llvm::StringRef directory, std::string &entries,
                             std::string &why) {
  entries = childOf(directory, kBuildCacheSubdirectory);
  if (ownedByTgc(entries))
    return privateTo(entries, why);
  if (typeOf(entries) == fs::file_type::file_not_found) {
    if (!makeOwnedDirectory(directory, entries, why))
      return false;
    if (ownedByTgc(entries))
      return privateTo(entries, why);
  }
  why = entries +
        " was not made by tgc (it is not a directory holding "
        "tgc's " +
        kMarkerName.str() +
        "): tgc neither uses nor changes it; remove it, or give another "
        "--build-cache";
  return false;
}

void trimBuildCache(llvm::StringRef directory, uint64_t maxBytes) {
  std::string entries = childOf(directory, kBuildCacheSubdirectory), why;
  if (!ownedByTgc(entries) || !privateTo(entries, why))
    return;
  struct Entry {
    std::string path;
    uint64_t bytes;
    llvm::sys::TimePoint<> used;
  };
  std::vector<Entry> found;
  uint64_t total = 0;
  std::error_code ec;
  auto leftOverBefore = std::chrono::system_clock::now() - kLeftOverAfter;
  for (fs::directory_iterator it(entries, ec), end; !ec && it != end;
       it.increment(ec)) {
    fs::file_status status;
    if (fs::status(it->path(), status, /*Follow=*/false) ||
        status.type() != fs::file_type::regular_file)
      continue;
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    if (isEntryName(name)) {
      found.push_back(
          {it->path(), status.getSize(), status.getLastModificationTime()});
      total += status.getSize();
      continue;
    }
    bool orphan = isDescriptionName(name) &&
                  !fs::exists(llvm::StringRef(it->path()).drop_back(4));
    if ((orphan || isPartialName(name)) &&
        status.getLastModificationTime() < leftOverBefore)
      fs::remove(it->path());
  }
  std::sort(found.begin(), found.end(),
            [](const Entry &a, const Entry &b) { return a.used < b.used; });
  for (const Entry &entry : found) {
    if (total <= maxBytes)
      break;
    // Another tgc may have removed it already: not an error.
    fs::remove(entry.path);
    fs::remove(entry.path + ".txt");
    total -= entry.bytes;
  }
}

} // namespace tgc
