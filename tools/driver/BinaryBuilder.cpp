//===- BinaryBuilder.cpp - host compiler invocation -----------------------===//
#include "tools/driver/BinaryBuilder.h"
#include "tools/driver/BuildPaths.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <iterator>
#include <vector>

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tgc {

namespace {

std::string chooseCompiler(const BinaryOptions &options) {
  if (!options.compiler.empty())
    return options.compiler;
  if (const char *env = std::getenv("TGC_CXX"); env && *env)
    return env;
  return kBuildCompiler;
}

/// Removes a file when it goes out of scope, or when a signal (Ctrl-C,
/// SIGTERM) ends tgc before that, unless told to keep it.
struct TemporaryFile {
  std::string path;
  bool keep = false;
  bool onSignal = false; ///< registered with RemoveFileOnSignal
  void removeOnSignal() {
    onSignal = !llvm::sys::RemoveFileOnSignal(path);
  }
  void keepIt() {
    keep = true;
    if (onSignal)
      llvm::sys::DontRemoveFileOnSignal(path);
    onSignal = false;
  }
  ~TemporaryFile() {
    if (onSignal)
      llvm::sys::DontRemoveFileOnSignal(path);
    if (!keep && !path.empty())
      llvm::sys::fs::remove(path);
  }
};


/// The host compiler while it runs, for the signal handler.
std::atomic<pid_t> runningCompiler{0};

constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
struct sigaction previousActions[std::size(kForwardedSignals)];

/// A signal to tgc (SIGTERM from `kill`, not only Ctrl-C to the process
/// group) stops the compiler too: it gets the signal, is waited for (up to
/// 2 s, then SIGKILL), and the previous handler (LLVM's, which removes the
/// temporary files and re-raises) runs. Async-signal-safe calls only.
void forwardSignal(int signal) {
  pid_t child = runningCompiler.exchange(0);
  if (child > 0) {
    kill(child, signal);
    int status;
    timespec tick{0, 20 * 1000 * 1000};
    int ticks = 0;
    while (waitpid(child, &status, WNOHANG) == 0) {
      if (++ticks == 100)
        kill(child, SIGKILL);
      nanosleep(&tick, nullptr);
    }
  }
  for (size_t i = 0; i < std::size(kForwardedSignals); ++i)
    if (kForwardedSignals[i] == signal)
      sigaction(signal, &previousActions[i], nullptr);
  raise(signal); // delivered, to the previous handler, when this returns
}

/// Runs the compiler with forwardSignal installed; ExecuteAndWait's result.
int runCompiler(llvm::StringRef program, llvm::ArrayRef<llvm::StringRef> args,
                std::string &error) {
  bool failedToStart = false;
  llvm::sys::ProcessInfo started = llvm::sys::ExecuteNoWait(
      program, args, std::nullopt, {}, 0, &error, &failedToStart);
  if (failedToStart)
    return -1;
  runningCompiler = started.Pid;
  struct sigaction forward = {};
  forward.sa_handler = forwardSignal;
  sigemptyset(&forward.sa_mask);
  // A signal tgc ignores (SIGHUP under nohup) stays ignored.
  bool installed[std::size(kForwardedSignals)] = {};
  for (size_t i = 0; i < std::size(kForwardedSignals); ++i) {
    sigaction(kForwardedSignals[i], nullptr, &previousActions[i]);
    if (previousActions[i].sa_handler != SIG_IGN)
      installed[i] = !sigaction(kForwardedSignals[i], &forward, nullptr);
  }
  llvm::sys::ProcessInfo done =
      llvm::sys::Wait(started, std::nullopt, &error);
  runningCompiler = 0;
  for (size_t i = 0; i < std::size(kForwardedSignals); ++i)
    if (installed[i])
      sigaction(kForwardedSignals[i], &previousActions[i], nullptr);
  return done.ReturnCode;
}

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
      llvm::errs() << "tgc: cannot create a temporary file: " << ec.message()
                   << "\n";
      return false;
    }
    file.path = path.str().str();
    file.removeOnSignal();
  }
  // The compiler's output too: a signal must not leave half a program (the
  // compiler, in the same process group, stops as well).
  TemporaryFile partialOutput;
  bool outputExisted = llvm::sys::fs::exists(output);
  if (!outputExisted) {
    partialOutput.path = output.str();
    partialOutput.keep = true; // removed only by a signal
    partialOutput.removeOnSignal();
  }
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(file.path, ec);
    if (ec) {
      llvm::errs() << "tgc: cannot write " << file.path << ": "
                   << ec.message() << "\n";
      return false;
    }
    os << source;
  }

  auto program = llvm::sys::findProgramByName(compiler);
  if (!program) {
    llvm::errs() << "tgc: compiler '" << compiler << "' not found\n";
    return false;
  }
  std::vector<std::string> args = {*program};
  args.insert(args.end(), flags.begin(), flags.end());
  args.insert(args.end(), {file.path, "-o", output.str()});
  args.insert(args.end(), libraries.begin(), libraries.end());
  std::vector<llvm::StringRef> argRefs(args.begin(), args.end());
  if (options.verbose)
    llvm::errs() << "tgc: " << llvm::join(args, " ") << "\n";
  std::string error;
  int status = runCompiler(*program, argRefs, error);
  if (status != 0) {
    llvm::errs() << "tgc: compiling the generated step failed ("
                 << (error.empty() ? "exit " + std::to_string(status) : error)
                 << "); the generated source is kept at " << file.path
                 << "; command: " << llvm::join(args, " ") << "\n";
    file.keepIt();
    return false;
  }
  return true;
}

/// The runtime archives, then the semicolon-separated `linkFlags`.
std::vector<std::string> runtimeLibraries(llvm::StringRef linkFlags) {
  std::vector<std::string> libraries(std::begin(kRuntimeLibraries),
                                     std::end(kRuntimeLibraries));
  for (llvm::StringRef flag : llvm::split(linkFlags, ';'))
    if (!flag.empty())
      libraries.push_back(flag.str());
  return libraries;
}

/// The flags of a CPU program's compilation.
std::vector<std::string> cpuFlags() {
  std::vector<std::string> flags = {"-std=c++20", "-O3",
                                    "-march=" + std::string(kCpuArch),
                                    "-fno-math-errno",
                                    "-I" + std::string(kSourceDir)};
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
bool cudaFlags(const BinaryOptions &options, std::vector<std::string> &flags) {
  // The shared CUDA runtime, as runtime/kernels/cuda's archive was built for.
  flags = {"-std=c++20", "-O3", "-cudart=shared",
           "-I" + std::string(kSourceDir)};
  for (llvm::StringRef arch : llvm::split(options.cudaArchitectures, ',')) {
    arch = arch.trim();
    if (arch.empty() || !llvm::all_of(arch, llvm::isDigit))
      return false;
    flags.push_back(
        ("-gencode=arch=compute_" + arch + ",code=sm_" + arch).str());
  }
  return true;
}

} // namespace

std::string compileCommand(const BinaryOptions &options, bool cuda) {
  std::vector<std::string> flags = cpuFlags();
  if (cuda)
    cudaFlags(options, flags);
  std::string command = cuda ? cudaCompiler(options) : chooseCompiler(options);
  for (const std::string &flag : flags)
    command += " " + flag;
  return command;
}

bool buildBinary(llvm::StringRef cppSource, llvm::StringRef output,
                 const BinaryOptions &options) {
  return compileAndLink(cppSource, "cpp", output, chooseCompiler(options),
                        cpuFlags(), runtimeLibraries(kCpuLinkFlags), options);
}

bool buildCudaBinary(llvm::StringRef cuSource, llvm::StringRef output,
                     const BinaryOptions &options) {
  if (!kHaveCuda) {
    llvm::errs() << "tgc: this tgc was built without CUDA (no nvcc at "
                    "configure time); --target=cuda cannot build programs\n";
    return false;
  }
  std::string compiler = cudaCompiler(options);
  std::vector<std::string> flags;
  if (!cudaFlags(options, flags)) {
    llvm::errs() << "tgc: --cuda-arch wants numbers like 80,90, not '"
                 << options.cudaArchitectures << "'\n";
    return false;
  }
  std::vector<std::string> libraries;
  for (llvm::StringRef library : llvm::split(kCudaLibraries, ';'))
    if (!library.empty())
      libraries.push_back(library.str());
  for (const std::string &library : runtimeLibraries(kCudaLinkFlags))
    libraries.push_back(library);
  return compileAndLink(cuSource, "cu", output, compiler, flags, libraries,
                        options);
}

} // namespace tgc
