//===- BinaryBuilder.cpp - host compiler invocation -----------------------===//
#include "tools/driver/BinaryBuilder.h"
#include "tools/driver/BuildCache.h"
#include "tools/driver/BuildPaths.h"
#include "tools/driver/HostCompiler.h"
#include "tools/driver/Toolchain.h"

#include "runtime/data/FileChecks.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <vector>

namespace tgc {

namespace {

/// Writes `source` where the options say (next to the output, or a
/// temporary file), compiles it with `compiler` and `flags`, and links
/// `libraries`. Keeps the source when compiling fails.
bool compileAndLink(llvm::StringRef source, llvm::StringRef extension,
                    llvm::StringRef output, const std::string &compiler,
                    const std::vector<std::string> &flags,
                    const std::vector<std::string> &libraries,
                    const BinaryOptions &options) {
  TemporaryFile file;
  if (options.keepSource) {
    file.path = (output + "." + extension).str();
    file.keep = true;
  } else {
    llvm::SmallString<128> path;
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("tgc-step", extension, path)) {
      llvm::errs() << "tgc: error: cannot create a temporary file "
                   << systemTemporaryDirectory() << ": " << ec.message()
                   << "\n";
      return false;
    }
    file.path = path.str().str();
    file.removeOnSignal();
  }
  // The compiler writes beside the output, and the program is renamed over
  // it once whole: a failed build (a full disk, `ulimit -f`, a signal, which
  // the compiler in the same process group gets too) leaves what the output
  // held (the link's failure used to remove it). Something that is not a
  // regular file (a device) is written in place, never renamed over.
  llvm::sys::fs::file_status existing;
  const bool replaceable = llvm::sys::fs::status(output, existing) ||
                           llvm::sys::fs::is_regular_file(existing);
  TemporaryFile partialOutput;
  partialOutput.path = output.str();
  partialOutput.keep = !replaceable;
  if (replaceable) {
    // Made here first, empty, with O_EXCL and O_NOFOLLOW: a name the
    // linker is told but tgc never made could be another's link planted
    // there (a predictable pid), which GNU ld wrote through and tgc then
    // renamed over the output.
    int fd = runtime::createTemporaryFor(output.str(), partialOutput.path);
    if (fd < 0) {
      llvm::errs() << "tgc: error: cannot write " << output << ": creating "
                   << partialOutput.path << ": " << std::strerror(errno)
                   << "\n";
      partialOutput.keep = true; // not made: nothing of tgc's to remove
      return false;
    }
    ::close(fd);
    partialOutput.removeOnSignal();
  }
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(file.path, ec);
    if (!ec) {
      os << source;
      os.close();
      ec = os.error();
      os.clear_error(); // reported here, not as LLVM's fatal IO failure
    }
    if (ec) {
      llvm::errs() << "tgc: error: cannot write " << file.path << ": "
                   << ec.message() << "\n";
      return false;
    }
  }

  auto program = llvm::sys::findProgramByName(compiler);
  if (!program) {
    llvm::errs() << "tgc: error: compiler '" << compiler << "' not found\n";
    return false;
  }
  CompileCommand command{*program, flags, file.path, partialOutput.path,
                         libraries};
  if (extension == "cu") {
    command.preprocessFlags = {"-E", "-Xcompiler", "-dD"};
    command.dependencyFlags = {"-M"};
  }
  std::string commandLine = llvm::join(command.arguments(), " ");
  if (options.verbose)
    llvm::errs() << "tgc: " << commandLine << "\n";
  std::string error;
  int status = compileWithBuildCache(command, options.buildCache,
                                     options.verbose, error);
  if (status != 0) {
    llvm::errs() << "tgc: error: compiling the generated step failed ("
                 << (error.empty() ? "exit " + std::to_string(status) : error)
                 << "); the generated source is kept at " << file.path
                 << "; command: " << commandLine << "\n";
    file.keepIt();
    return false;
  }
  if (replaceable) {
    if (std::error_code ec = llvm::sys::fs::rename(partialOutput.path, output)) {
      llvm::errs() << "tgc: error: cannot write " << output << ": renaming "
                   << partialOutput.path << ": " << ec.message() << "\n";
      return false;
    }
    partialOutput.keep = true; // renamed: nothing left to remove
  }
  return true;
}

/// The runtime archives, then the semicolon-separated `linkFlags`.
std::vector<std::string> runtimeLibraries(const Toolchain &toolchain,
                                          llvm::StringRef linkFlags) {
  std::vector<std::string> libraries = toolchain.runtimeLibraries;
  for (llvm::StringRef flag : llvm::split(linkFlags, ';'))
    if (!flag.empty())
      libraries.push_back(flag.str());
  return libraries;
}

/// The flags of a CPU program's compilation. Where -march has AVX-512, GCC
/// still prefers 256-bit vectors for the generated loops unless told:
/// 512-bit ones halve the calls to libmvec's vector expf and tanhf, e.g. the
/// 124M GPT's GELU-gradient loops 43 -> 23 ms a bf16 step and the small
/// GPT's step 2-3% shorter, the Transformer rows level (Intel Xeon with
/// AMX, 2 threads). Without AVX-512 the flag changes nothing.
std::vector<std::string> cpuFlags(const Toolchain &toolchain) {
  std::vector<std::string> flags = {"-std=c++20",
                                    "-O3",
                                    "-march=" + std::string(kCpuArch),
                                    "-mprefer-vector-width=512",
                                    "-fno-math-errno",
                                    "-I" + toolchain.includeDir};
  for (llvm::StringRef flag : llvm::split(kSanitizerFlags, ';'))
    if (!flag.empty())
      flags.push_back(flag.str());
  return flags;
}

std::string cudaCompiler(const BinaryOptions &options) {
  if (!options.compiler.empty())
    return options.compiler;
  const char *env = std::getenv("TGC_NVCC");
  return env && *env ? env : kNvcc;
}

/// The flags of a CUDA program's compilation; false when --cuda-arch is not
/// a list of numbers.
bool cudaFlags(const BinaryOptions &options, const Toolchain &toolchain,
               std::vector<std::string> &flags) {
  // The shared CUDA runtime, as runtime/kernels/cuda's archive was built for.
  flags = {"-std=c++20", "-O3", "-cudart=shared",
           "-I" + toolchain.includeDir};
  if (!cudaArchitecturesError(options.cudaArchitectures).empty())
    return false;
  for (llvm::StringRef arch : llvm::split(options.cudaArchitectures, ','))
    flags.push_back(
        ("-gencode=arch=compute_" + arch.trim() + ",code=sm_" + arch.trim())
            .str());
  return true;
}

} // namespace

std::string cudaArchitecturesError(llvm::StringRef list) {
  for (llvm::StringRef arch : llvm::split(list, ',')) {
    arch = arch.trim();
    if (arch.empty() || arch.size() > 4 || !llvm::all_of(arch, llvm::isDigit))
      return "--cuda-arch wants numbers like 80,90, not '" + list.str() + "'";
  }
  return "";
}

std::string compileCommand(const BinaryOptions &options, bool cuda) {
  Toolchain toolchain = locateToolchain(options.toolchainPrefix);
  std::vector<std::string> flags = cpuFlags(toolchain);
  if (cuda)
    cudaFlags(options, toolchain, flags);
  std::string command =
      cuda ? cudaCompiler(options) : chooseCompiler(options.compiler);
  for (const std::string &flag : flags)
    command += " " + flag;
  return command;
}

bool buildBinary(llvm::StringRef cppSource, llvm::StringRef output,
                 const BinaryOptions &options) {
  Toolchain toolchain = locateToolchain(options.toolchainPrefix);
  std::string compiler = chooseCompiler(options.compiler);
  std::vector<std::string> libraries =
      runtimeLibraries(toolchain, kCpuLinkFlags);
  // lld, where the build found the compiler able to use it and it is still
  // installed; another compiler (--cxx, $TGC_CXX) links with its own.
  if (*kBuildCompilerLinker && compiler == kBuildCompiler &&
      llvm::sys::findProgramByName("ld.lld"))
    libraries.push_back(kBuildCompilerLinker);
  return compileAndLink(cppSource, "cpp", output, compiler, cpuFlags(toolchain),
                        libraries, options);
}

bool buildCudaBinary(llvm::StringRef cuSource, llvm::StringRef output,
                     const BinaryOptions &options) {
  if (!kHaveCuda) {
    llvm::errs() << "tgc: error: this tgc was built without CUDA (no nvcc at "
                    "configure time); --target=cuda cannot build programs\n";
    return false;
  }
  std::string compiler = cudaCompiler(options);
  Toolchain toolchain = locateToolchain(options.toolchainPrefix);
  std::vector<std::string> flags;
  if (!cudaFlags(options, toolchain, flags)) {
    llvm::errs() << "tgc: error: " << cudaArchitecturesError(options.cudaArchitectures)
                 << "\n";
    return false;
  }
  std::vector<std::string> libraries = toolchain.cudaLibraries;
  for (const std::string &library : runtimeLibraries(toolchain, kCudaLinkFlags))
    libraries.push_back(library);
  return compileAndLink(cuSource, "cu", output, compiler, flags, libraries,
                        options);
}

} // namespace tgc
