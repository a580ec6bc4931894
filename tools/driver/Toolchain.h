//===- Toolchain.h - the headers and archives tgc compiles against -*- C++ -*-===//
//
// Generated training steps and users' model files are compiled against
// tgc's headers and linked with its runtime archives. They are found in an
// installed tree (`cmake --install`: <prefix>/include/tgc, <prefix>/lib/tgc)
// or, for a tgc that runs where it was built, in the source and build trees.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TOOLS_DRIVER_TOOLCHAIN_H
#define TGC_TOOLS_DRIVER_TOOLCHAIN_H

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace tgc {

struct Toolchain {
  /// Where includes written from the repository root resolve
  /// ("runtime/program/CompiledStep.h").
  std::string includeDir;
  /// The runtime archives a CPU program links, users before what they use.
  std::vector<std::string> runtimeLibraries;
  /// The archives a CUDA program links before those (empty without CUDA).
  std::vector<std::string> cudaLibraries;
  /// Where tgc's tools are (<prefix>/bin, or the build's bin): a program
  /// runs the tgc-data there for SentencePiece (runtime VocabularyTool.h).
  std::string toolsDir;
};

/// The installed tree at `prefix` when one is given (a driver that
/// tgc_add_model builds names its package's); else the tree the running
/// executable is installed in (<prefix>/bin/tgc with <prefix>/lib/tgc); else
/// the source and build trees tgc was built from.
Toolchain locateToolchain(llvm::StringRef prefix);

} // namespace tgc

#endif // TGC_TOOLS_DRIVER_TOOLCHAIN_H
