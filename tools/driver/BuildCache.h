//===- BuildCache.h - programs tgc compiled, found again by what made them -===//
//
// Compiling a training step takes seconds (minutes for CUDA or big models),
// and compiling the same step again gives the same program. With a build
// cache (--build-cache=DIR, or $TGC_BUILD_CACHE), tgc keeps every program
// and every model file's shared object it compiles under a key of all that
// made it, and copies the entry out instead of compiling when the key is
// there. The key covers:
//   - the compiler's path, its bytes (a rebuild that keeps the version
//     macros is another compiler; for GCC and nvcc this is the driver,
//     updated with the compiler proper by the same package), and its
//     flags, in order;
//   - the source as that compiler preprocesses it with those flags (`-E -dD`:
//     every header it includes, and the predefined macros, which name the
//     compiler's version and the instruction set -march selects), with the
//     source file's own path left out (generated steps get a temporary one);
//   - for nvcc, whose -E writes only the first architecture's device pass,
//     also the bytes of every file that any of its passes reads (-M): code
//     that only the host compiler or a later architecture sees;
//   - what is linked in: the contents of each library file, the other link
//     arguments (-lfoo, -fopenmp) as written, the bytes of the linker a
//     -fuse-ld= names;
//   - the environment variables that change the build outside that text
//     (NVCC_PREPEND_FLAGS, NVCC_APPEND_FLAGS, LIBRARY_PATH, COMPILER_PATH,
//     GCC_EXEC_PREFIX), where set.
// An entry is written under a temporary name and renamed, so tgc runs can
// share a cache and a crash or Ctrl-C never leaves half an entry; its
// description beside it (<key>.txt, written first) ends with the checksum
// of its bytes, and an entry that no longer matches it (a disk error, an
// edit) is removed and compiled again. A reused entry is touched; past
// kBuildCacheBytes the least recently used entries go, and temporaries or
// descriptions without an entry that a killed tgc left go after an hour.
// The entries live in a subdirectory of the cache directory that tgc made
// and marked, and nothing else is ever removed (BuildCacheDirectory.h).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TOOLS_DRIVER_BUILDCACHE_H
#define TGC_TOOLS_DRIVER_BUILDCACHE_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tgc {

/// The most a build cache keeps: about 2 GiB, a hundred big programs.
inline constexpr uint64_t kBuildCacheBytes = uint64_t{2} << 30;

/// One run of the host compiler: compiler flags... source -o output
/// libraries...
struct CompileCommand {
  std::string compiler; ///< the compiler's path
  std::vector<std::string> flags;
  std::string source, output;
  std::vector<std::string> libraries;
  /// What makes `compiler` preprocess and print its macros (nvcc hands
  /// -dD to its host compiler).
  std::vector<std::string> preprocessFlags = {"-E", "-dD"};
  /// What makes `compiler` write a make rule of every file it reads in all
  /// its passes (nvcc: -M), whose bytes the key covers too; none where the
  /// preprocessed source shows them all.
  std::vector<std::string> dependencyFlags;
  /// Whether the program holds the source's path (a model file: its
  /// std::source_location errors name it), so that the same text elsewhere
  /// is another program; a generated step's temporary file is not.
  bool holdsSourcePath = false;

  std::vector<std::string> arguments() const;
};

/// `path` as a compiler's operand: a relative path that starts with '-'
/// gets "./" before it, or the compiler would read it as an option.
std::string compilerOperand(llvm::StringRef path);

/// The prerequisites of a make rule as compilers write them (-M): the
/// paths after the first ": ", with line continuations, escaped spaces and
/// "$$" undone.
std::vector<std::string> makeRulePrerequisites(llvm::StringRef rule);

/// The build cache's key of `command` (32 hex digits) and the description it
/// is the hash of (one input a line, stored beside the entry). False with
/// `why` when the compiler cannot preprocess the source: compiling it would
/// fail too, and says why better.
bool buildCacheKey(const CompileCommand &command, std::string &key,
                   std::string &description, std::string &why);

/// Runs `command`, or with a cache directory (non-empty `cacheDirectory`)
/// copies its entry to the output when there is one, and stores the output
/// after a successful compile. A cache that cannot be read or written is a
/// warning, never a failed build; an output that exists and is not a
/// regular file is never replaced by an entry. The compiler's exit status (0
/// for a reused entry), or -1 with `error` when it could not start.
int compileWithBuildCache(const CompileCommand &command,
                          llvm::StringRef cacheDirectory, bool verbose,
                          std::string &error);

} // namespace tgc

#endif // TGC_TOOLS_DRIVER_BUILDCACHE_H
