//===- BinaryBuilder.cpp - host compiler invocation -----------------------===//
#include "tools/driver/BinaryBuilder.h"
#include "tools/driver/BuildPaths.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <vector>

namespace tgc {

namespace {

std::string chooseCompiler(const BinaryOptions &options) {
  if (!options.compiler.empty())
    return options.compiler;
  if (const char *env = std::getenv("TGC_CXX"); env && *env)
    return env;
  return kBuildCompiler;
}

/// Removes a file when it goes out of scope unless told to keep it.
struct TemporaryFile {
  std::string path;
  bool keep = false;
  ~TemporaryFile() {
    if (!keep && !path.empty())
      llvm::sys::fs::remove(path);
  }
};

} // namespace

bool buildBinary(llvm::StringRef cppSource, llvm::StringRef output,
                 const BinaryOptions &options) {
  TemporaryFile source;
  if (options.keepSource) {
    source.path = (output + ".cpp").str();
    source.keep = true;
  } else {
    llvm::SmallString<128> path;
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("tgc-step", "cpp", path)) {
      llvm::errs() << "tgc: cannot create a temporary file: " << ec.message()
                   << "\n";
      return false;
    }
    source.path = path.str().str();
  }
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(source.path, ec);
    if (ec) {
      llvm::errs() << "tgc: cannot write " << source.path << ": "
                   << ec.message() << "\n";
      return false;
    }
    os << cppSource;
  }

  std::string compiler = chooseCompiler(options);
  auto program = llvm::sys::findProgramByName(compiler);
  if (!program) {
    llvm::errs() << "tgc: C++ compiler '" << compiler
                 << "' not found (set --cxx or TGC_CXX)\n";
    return false;
  }
  std::vector<std::string> args = {*program,     "-std=c++20", "-O3",
                                   "-march=native", "-fno-math-errno",
                                   "-I" + std::string(kSourceDir),
                                   source.path, "-o", output.str()};
  for (const char *library : kRuntimeLibraries)
    args.push_back(library);
  for (llvm::StringRef flag : llvm::split(kCpuLinkFlags, ';'))
    if (!flag.empty())
      args.push_back(flag.str());
  std::vector<llvm::StringRef> argRefs(args.begin(), args.end());
  if (options.verbose)
    llvm::errs() << "tgc: " << llvm::join(args, " ") << "\n";
  std::string error;
  int status = llvm::sys::ExecuteAndWait(*program, argRefs, std::nullopt, {},
                                         0, 0, &error);
  if (status != 0) {
    llvm::errs() << "tgc: compiling the generated step failed ("
                 << (error.empty() ? "exit " + std::to_string(status) : error)
                 << "); the generated source is kept at " << source.path
                 << "; command: " << llvm::join(args, " ") << "\n";
    source.keep = true;
    return false;
  }
  return true;
}

} // namespace tgc
