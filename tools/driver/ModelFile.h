//===- ModelFile.h - tgc --model-file: a model without CMake ----*- C++ -*-===//
//
// `tgc --model-file my_model.cpp` compiles one DSL file with the host
// compiler against tgc's headers (Toolchain.h) into a shared object, loads
// it, and compiles the model the file registers with TGC_REGISTER_MODEL
// (frontend/ModelRegistry.h) like a built-in one.
//
// The shared object is left with undefined references to the DSL
// (tgc::Builder, the ops, tgc::registerModel): they resolve to the tgc
// executable's own copies, which it exports (tools/tgc/CMakeLists.txt), and
// MLIR's to the libMLIR tgc has loaded. So the file's model lands in tgc's
// one registry and builds in tgc's MLIRContext; nothing of tgc is linked
// twice.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TOOLS_DRIVER_MODELFILE_H
#define TGC_TOOLS_DRIVER_MODELFILE_H

#include "tools/driver/DriverOptions.h"

#include "llvm/ADT/StringRef.h"

namespace tgc {

/// Compiles and loads `options.modelFile` (with --cxx, -v and the
/// toolchain the options name) and, without --model, sets
/// `options.modelName` to the model the file registers. False after a
/// message naming the file (the compiler's own errors come first): the
/// compile failed, the object does not load, its code crashed while
/// loading, it registered no model, or several and --model picks none.
bool useModelFile(DriverOptions &options);

/// While one is alive, a crash in the model file's code (SIGSEGV, SIGBUS,
/// SIGFPE, SIGILL, or SIGABRT from an uncaught exception) ends tgc with a
/// message naming the file and what tgc was doing, and exit status 1,
/// rather than a stack dump of tgc; so does a call of exit() (whose status,
/// 0 too, would have been tgc's without a word; _exit() is seen from outside,
/// ModelCodeWatch.h). What the code prints to stdout goes to stderr.
class ModelCodeGuard {
public:
  ModelCodeGuard(llvm::StringRef path, llvm::StringRef doing);
  ~ModelCodeGuard();
  ModelCodeGuard(const ModelCodeGuard &) = delete;
  ModelCodeGuard &operator=(const ModelCodeGuard &) = delete;

private:
  /// fd 1 as it was, -1 if it could not be kept.
  int savedStdout = -1;
};

} // namespace tgc

#endif // TGC_TOOLS_DRIVER_MODELFILE_H
