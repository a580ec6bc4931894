//===- ModelFile.cpp - tgc --model-file: a model without CMake ------------===//
#include "tools/driver/ModelFile.h"

#include "runtime/program/ProcessEnd.h"
#include "tools/driver/BuildCache.h"
#include "tools/driver/BuildPaths.h"
#include "tools/driver/HostCompiler.h"
#include "tools/driver/ModelCodeWatch.h"
#include "tools/driver/Toolchain.h"

#include "frontend/InputFile.h"
#include "frontend/ModelRegistry.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <iostream>
#include <iterator>

#include <dlfcn.h>
#include <unistd.h>

namespace tgc {
namespace {

bool fail(const llvm::Twine &message) {
  llvm::errs() << "tgc: error: " << message << "\n";
  return false;
}

/// The host compiler's command for `path` -> shared object `output`.
CompileCommand compileCommand(llvm::StringRef path, llvm::StringRef output,
                              const std::string &compiler,
                              const Toolchain &toolchain) {
  // -O1: a model file only builds a graph; compiling it is what takes time.
  CompileCommand command{compiler,
                         {"-std=c++20", "-O1", "-fPIC", "-shared",
                          "-I" + toolchain.includeDir},
                         path.str(),
                         output.str(),
                         {}};
  command.holdsSourcePath = true;
  for (llvm::StringRef dir : llvm::split(kMlirIncludeDirs, ';'))
    if (!dir.empty())
      command.flags.push_back(("-isystem" + dir).str());
  for (llvm::StringRef list : {kLlvmDefinitions, kSanitizerFlags})
    for (llvm::StringRef flag : llvm::split(list, ';'))
      if (!flag.empty())
        command.flags.push_back(flag.str());
  // C++ whatever the file's name ends in (without it, a name without .cpp
  // went to the linker as a script).
  command.flags.insert(command.flags.end(), {"-x", "c++"});
  return command;
}

bool compileModelFile(llvm::StringRef path, llvm::StringRef output,
                      const DriverOptions &options) {
  std::string compiler = chooseCompiler(options.compiler);
  auto program = llvm::sys::findProgramByName(compiler);
  if (!program)
    return fail("compiler '" + compiler + "' not found (--cxx, $TGC_CXX)");
  CompileCommand command = compileCommand(
      path, output, *program, locateToolchain(options.toolchainPrefix));
  std::string commandLine = llvm::join(command.arguments(), " ");
  if (options.verbose)
    llvm::errs() << "tgc: " << commandLine << "\n";
  std::string error;
  int status = compileWithBuildCache(command, options.buildCache,
                                     options.verbose, error);
  if (status != 0)
    return fail("compiling model file " + path + " failed (" +
                (error.empty() ? "exit " + std::to_string(status) : error) +
                "); command: " + commandLine);
  return true;
}

constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
struct sigaction previousCrashActions[std::size(kCrashSignals)];
/// The message a crash prints, up to the signal's name; written before the
/// guard is installed, read by the handler only.
char crashMessage[1024];
size_t crashMessageLength = 0;

const char *crashName(int signal) {
  switch (signal) {
  case SIGSEGV:
    return "SIGSEGV: an invalid memory access";
  case SIGBUS:
    return "SIGBUS: an invalid memory access";
  case SIGFPE:
    return "SIGFPE: an arithmetic error";
  case SIGILL:
    return "SIGILL: an illegal instruction";
  default:
    return "SIGABRT: an uncaught exception, a failed assertion or abort()";
  }
}

/// Async-signal-safe: write(2), then main's immediate end (ProcessEnd.h:
/// _Exit in tgc and a model driver), with status 1.
void reportCrash(int signal) {
  const char *name = crashName(signal);
  [[maybe_unused]] ssize_t ignored =
      write(STDERR_FILENO, crashMessage, crashMessageLength);
  ignored = write(STDERR_FILENO, name, std::strlen(name));
  ignored = write(STDERR_FILENO, ")\n", 2);
  runtime::endProcessNow(1); // tgc's: the watching parent says no more
}

/// Everything written so far to fd 1 through C's, C++'s and LLVM's streams,
/// before fd 1 changes.
void flushStandardOutput() {
  std::cout.flush();
  std::fflush(stdout);
  llvm::outs().flush();
}

/// What a guard's exit hook says when the model's code calls exit():
/// empty while no guard is alive.
std::string exitMessage;

/// Registered once with atexit: exit() from a model file's code (its
/// status would have been tgc's, 0 a silent success) ends tgc with a
/// message and status 1; the temporary files are removed as on a signal.
void reportExitFromModelCode() {
  if (exitMessage.empty())
    return;
  // What the model printed before (fd 1 is stderr now): _Exit would drop
  // it. Not a signal handler: flushing is safe here.
  flushStandardOutput();
  [[maybe_unused]] ssize_t ignored =
      write(STDERR_FILENO, exitMessage.data(), exitMessage.size());
  llvm::sys::RunInterruptHandlers();
  runtime::endProcessNow(1);
}

/// Compiles and loads `path`; the models it registered into `names`.
bool loadModelFile(llvm::StringRef path, const DriverOptions &options,
                   std::vector<std::string> &names) {
  if (!llvm::sys::fs::exists(path))
    return fail("cannot open model file '" + path + "': no such file");
  if (std::string why = checkInputPath(path, "the model file"); !why.empty())
    return fail(why);
  TemporaryFile object;
  llvm::SmallString<128> objectPath;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
          "tgc-model", "so", objectPath))
    return fail("cannot create a temporary file " +
                systemTemporaryDirectory() + ": " + ec.message());
  object.path = objectPath.str().str();
  object.removeOnSignal();
  if (!compileModelFile(path, object.path, options))
    return false;

  // From here on tgc runs the file's code: a parent process sees an _exit()
  // there.
  watchModelCodeFromOutside(path, object.path);
  size_t before = registrationCount();
  void *handle;
  {
    ModelCodeGuard guard(path, "loading");
    // RTLD_NOW: a reference tgc cannot satisfy is an error here, not a
    // crash when the model is built.
    handle = dlopen(object.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (!handle) {
    const char *why = dlerror();
    return fail("cannot load model file " + path + ": " +
                (why ? why : "unknown error"));
  }
  // The handle stays open: the models' build functions live in it.
  names = registeredSince(before);
  if (names.empty())
    return fail("model file " + path +
                " registers no model: add TGC_REGISTER_MODEL({\"name\", "
                "\"description\", {presets}, \"default preset\", build}) "
                "at namespace scope (docs/writing-models.md)");
  return true;
}

} // namespace

ModelCodeGuard::ModelCodeGuard(llvm::StringRef path, llvm::StringRef doing) {
  std::string message = ("tgc: error: model file " + path + " crashed while " +
                         doing + " (")
                            .str();
  crashMessageLength = std::min(message.size(), sizeof(crashMessage));
  std::memcpy(crashMessage, message.data(), crashMessageLength);
  // quick_exit() too; _exit() runs no hook at all.
  static bool exitHookRegistered =
      std::atexit(reportExitFromModelCode) == 0 &&
      std::at_quick_exit(reportExitFromModelCode) == 0;
  (void)exitHookRegistered;
  exitMessage = ("tgc: error: model file " + path + " called exit() or quick_exit() while " +
                 doing + ": a model file builds its graph or reports an "
                 "error, it does not end tgc\n")
                    .str();
  struct sigaction report = {};
  report.sa_handler = reportCrash;
  // On the alternate stack LLVM's handlers set up: a stack overflow too.
  report.sa_flags = SA_ONSTACK;
  sigemptyset(&report.sa_mask);
  for (size_t i = 0; i < std::size(kCrashSignals); ++i)
    sigaction(kCrashSignals[i], &report, &previousCrashActions[i]);
  // The model's own printing goes to stderr: tgc's stdout carries what the
  // user asked for (--emit=tg's module, --list-models), and a printf in a
  // build function landed in the middle of it.
  markModelCodeRunning(true);
  flushStandardOutput();
  savedStdout = dup(STDOUT_FILENO);
  if (savedStdout >= 0 && dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    close(savedStdout);
    savedStdout = -1;
  }
}

ModelCodeGuard::~ModelCodeGuard() {
  if (savedStdout >= 0) {
    flushStandardOutput();
    dup2(savedStdout, STDOUT_FILENO);
    close(savedStdout);
  }
  exitMessage.clear();
  for (size_t i = 0; i < std::size(kCrashSignals); ++i)
    sigaction(kCrashSignals[i], &previousCrashActions[i], nullptr);
  markModelCodeRunning(false);
}

bool useModelFile(DriverOptions &options) {
  std::vector<std::string> names;
  if (!loadModelFile(options.modelFile, options, names))
    return false;
  // A name the file registers twice, or a built-in's name (runDriver
  // reports them all).
  if (!registrationConflicts().empty())
    return true;
  if (!options.modelName.empty() || options.listModels)
    return true;
  if (names.size() > 1)
    return fail("model file " + options.modelFile + " registers " +
                llvm::join(names, ", ") + ": pick one with --model");
  options.modelName = names.front();
  return true;
}

} // namespace tgc
