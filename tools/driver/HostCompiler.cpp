//===- HostCompiler.cpp - running the host C++ compiler -------------------===//
#include "tools/driver/HostCompiler.h"
#include "tools/driver/BuildPaths.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <iterator>
#include <optional>

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tgc {

std::string chooseCompiler(llvm::StringRef requested) {
  if (!requested.empty())
    return requested.str();
  if (const char *env = std::getenv("TGC_CXX"); env && *env)
    return env;
  return kBuildCompiler;
}

std::string systemTemporaryDirectory() {
  llvm::SmallString<128> directory;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, directory);
  const char *variable = std::getenv("TMPDIR");
  return "in " + directory.str().str() +
         (variable && *variable ? " ($TMPDIR)" : "");
}

void TemporaryFile::removeOnSignal() {
  onSignal = !llvm::sys::RemoveFileOnSignal(path);
}

void TemporaryFile::keepIt() {
  keep = true;
  if (onSignal)
    llvm::sys::DontRemoveFileOnSignal(path);
  onSignal = false;
}

TemporaryFile::~TemporaryFile() {
  if (onSignal)
    llvm::sys::DontRemoveFileOnSignal(path);
  if (!keep && !path.empty())
    llvm::sys::fs::remove(path);
}

namespace {

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

} // namespace

int runCompiler(llvm::StringRef program, llvm::ArrayRef<llvm::StringRef> args,
                std::string &error, bool quiet) {
  bool failedToStart = false;
  const std::optional<llvm::StringRef> toNull[] = {std::nullopt, "", ""};
  llvm::ArrayRef<std::optional<llvm::StringRef>> redirects;
  if (quiet)
    redirects = toNull;
  llvm::sys::ProcessInfo started = llvm::sys::ExecuteNoWait(
      program, args, std::nullopt, redirects, 0, &error, &failedToStart);
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

} // namespace tgc
