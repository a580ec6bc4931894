//===- Toolchain.cpp - the headers and archives tgc compiles against -------===//
#include "tools/driver/Toolchain.h"
#include "tools/driver/BuildPaths.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <iterator>

namespace tgc {
namespace {

std::vector<std::string> splitList(llvm::StringRef list) {
  std::vector<std::string> items;
  for (llvm::StringRef item : llvm::split(list, ';'))
    if (!item.empty())
      items.push_back(item.str());
  return items;
}

/// The build tree's archives under <prefix>/lib/tgc, where the install
/// rules (tools/package) put them under the same file names.
std::vector<std::string> installedArchives(llvm::StringRef prefix,
                                           llvm::ArrayRef<std::string> built) {
  std::vector<std::string> archives;
  for (const std::string &archive : built) {
    llvm::SmallString<256> path(prefix);
    llvm::sys::path::append(path, "lib", "tgc",
                            llvm::sys::path::filename(archive));
    archives.push_back(path.str().str());
  }
  return archives;
}

Toolchain installedToolchain(llvm::StringRef prefix, const Toolchain &built) {
  llvm::SmallString<256> include(prefix);
  llvm::sys::path::append(include, "include", "tgc");
  llvm::SmallString<256> tools(prefix);
  llvm::sys::path::append(tools, "bin");
  return {include.str().str(),
          installedArchives(prefix, built.runtimeLibraries),
          installedArchives(prefix, built.cudaLibraries), tools.str().str()};
}

/// <prefix> when this executable is <prefix>/bin/NAME of an installed tree.
std::string installPrefixOfExecutable(const Toolchain &built) {
  static int anchor;
  std::string executable = llvm::sys::fs::getMainExecutable(nullptr, &anchor);
  if (executable.empty())
    return {};
  llvm::StringRef prefix = llvm::sys::path::parent_path(
      llvm::sys::path::parent_path(executable));
  Toolchain installed = installedToolchain(prefix, built);
  bool complete = llvm::sys::fs::is_directory(installed.includeDir);
  for (const std::string &archive : installed.runtimeLibraries)
    complete = complete && llvm::sys::fs::exists(archive);
  return complete ? prefix.str() : std::string();
}

} // namespace

Toolchain locateToolchain(llvm::StringRef prefix) {
  Toolchain built{kSourceDir,
                  {std::begin(kRuntimeLibraries), std::end(kRuntimeLibraries)},
                  splitList(kCudaLibraries), kToolsDir};
  if (!prefix.empty())
    return installedToolchain(prefix, built);
  std::string own = installPrefixOfExecutable(built);
  return own.empty() ? built : installedToolchain(own, built);
}

} // namespace tgc
