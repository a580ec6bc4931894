//===- BuildCacheDirectory.h - what the build cache owns --------*- C++ -*-===//
//
// The directory given as --build-cache (or $TGC_BUILD_CACHE) is the user's:
// it may hold anything. tgc keeps its entries in a subdirectory of it,
// tgc-build-cache/, that it made itself: it is created under a temporary
// name with its marker (CACHEDIR.TAG, the cache directory tag that backup
// tools know, with a line naming tgc) and renamed into place, so that a
// tgc-build-cache/ without that exact marker was not made by tgc and is
// neither read, written nor trimmed. Inside it, trimming removes only
// regular files named exactly as tgc names them: an entry (32 hex digits),
// its description (<entry>.txt) and their temporaries
// (<name>-XXXXXXXX.partial); nothing else, whoever put it there.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TOOLS_DRIVER_BUILDCACHEDIRECTORY_H
#define TGC_TOOLS_DRIVER_BUILDCACHEDIRECTORY_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace tgc {

/// The subdirectory of a cache directory that holds tgc's entries.
inline constexpr llvm::StringLiteral kBuildCacheSubdirectory =
    "tgc-build-cache";

/// `<directory>/tgc-build-cache` in `entries`, made with its marker when it
/// is missing (and `directory` with it). False with `why` when it cannot be
/// made, or exists and is not a directory with tgc's marker.
bool openBuildCacheDirectory(llvm::StringRef directory, std::string &entries,
                             std::string &why);

/// Removes the least recently used entries of the cache in `directory` (the
/// directory given as --build-cache) and their descriptions until its
/// programs take at most `maxBytes`, and what killed runs left there over
/// an hour ago; nothing at all when tgc-build-cache/ has no tgc marker.
void trimBuildCache(llvm::StringRef directory, uint64_t maxBytes);

} // namespace tgc

#endif // TGC_TOOLS_DRIVER_BUILDCACHEDIRECTORY_H
