//===- HostCompiler.h - running the host C++ compiler -----------*- C++ -*-===//
//
// What every compilation tgc starts shares: the choice of compiler,
// temporary files that a signal removes, and running the compiler so that a
// signal to tgc (Ctrl-C, SIGTERM) stops it too. Used for generated training
// steps (BinaryBuilder.h) and users' model files (ModelFile.h).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TOOLS_DRIVER_HOSTCOMPILER_H
#define TGC_TOOLS_DRIVER_HOSTCOMPILER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace tgc {

/// `requested` (--cxx) if given, else $TGC_CXX, else the compiler tgc was
/// built with.
std::string chooseCompiler(llvm::StringRef requested);

/// Removes a file when it goes out of scope, or when a signal (Ctrl-C,
/// SIGTERM) ends tgc before that, unless told to keep it.
struct TemporaryFile {
  std::string path;
  bool keep = false;
  bool onSignal = false; ///< registered with RemoveFileOnSignal
  void removeOnSignal();
  void keepIt();
  ~TemporaryFile();
};

/// Where a temporary file without a directory of its own is made, for a
/// message: "in DIR", and " ($TMPDIR)" where that variable chose it.
std::string systemTemporaryDirectory();

/// Runs `program` with `args` (args[0] is the program) and waits for it,
/// forwarding SIGINT, SIGTERM, SIGHUP and SIGQUIT to it while it runs. The
/// exit status, or -1 with `error` when it could not start. `quiet`: its
/// output and messages go to /dev/null.
int runCompiler(llvm::StringRef program, llvm::ArrayRef<llvm::StringRef> args,
                std::string &error, bool quiet = false);

} // namespace tgc

#endif // TGC_TOOLS_DRIVER_HOSTCOMPILER_H
