//===- ModelCodeWatch.cpp - a model file's _exit() seen from outside ------===//
#include "tools/driver/ModelCodeWatch.h"

#include "runtime/program/train/Interrupt.h"

#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <iostream>
#include <new>
#include <string>

#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tgc {
namespace {

/// In a page the parent and the child share: 1 while model code runs.
std::atomic<int> *modelCodeRunning = nullptr;
std::atomic<pid_t> watchedChild{0};

/// What the parent passes on. A process group's kill reaches the child as
/// well: the child takes the two copies as one
/// (runtime::takeSignalsRelayedBy).
constexpr int kForwardedSignals[] = {SIGINT,  SIGTERM,   SIGHUP,  SIGQUIT,
                                     SIGUSR1, SIGUSR2,   SIGALRM, SIGVTALRM,
                                     SIGPROF, SIGXCPU,   SIGXFSZ};

sigset_t forwardedSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int signal : kForwardedSignals)
    sigaddset(&set, signal);
  return set;
}

/// The parent's handler: a signal another process sent to tgc reaches the
/// child that does its work. A terminal's (si_code SI_KERNEL) reached the
/// child already, being in the same process group.
void forwardToChild(int signal, siginfo_t *info, void *) {
  if (info && info->si_code == SI_KERNEL)
    return;
  if (pid_t child = watchedChild.load(); child > 0)
    kill(child, signal);
}

/// The threads of this process, from /proc (1 when it cannot tell: the
/// caller's own).
int threadCount() {
  DIR *tasks = opendir("/proc/self/task");
  if (!tasks)
    return 1;
  int count = 0;
  while (dirent *entry = readdir(tasks))
    count += entry->d_name[0] != '.';
  closedir(tasks);
  return count;
}

bool dumpsCore(int signal) {
  for (int s : {SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV,
                SIGSYS, SIGXCPU, SIGXFSZ})
    if (s == signal)
      return true;
  return false;
}

/// Ends the parent as the child ended; first an error where the child's
/// process ended inside model code by a way that runs no hook of tgc's
/// (exit() and a crash there clear the mark after their own message).
[[noreturn]] void endAsTheChildDid(int status, const std::string &modelFile,
                                   const std::string &object) {
  // The model's object, made before the fork: a child that ended at once
  // (a crash while loading, _exit) left it.
  ::unlink(object.c_str());
  if (WIFEXITED(status)) {
    int code = WEXITSTATUS(status);
    if (modelCodeRunning->load()) {
      std::string message =
          "tgc: error: model file " + modelFile + " ended tgc with status " +
          std::to_string(code) + " while tgc ran its code (_exit() or "
          "_Exit(), which run no hook): a model file builds its graph or "
          "reports an error, it does not end tgc\n";
      [[maybe_unused]] ssize_t ignored =
          write(STDERR_FILENO, message.data(), message.size());
      _exit(1);
    }
    _exit(code);
  }
  int signal = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
  // A crash's core is the child's: the parent's would replace it.
  if (dumpsCore(signal))
    _exit(128 + signal);
  std::signal(signal, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signal);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  raise(signal);
  _exit(128 + signal);
}

} // namespace

void markModelCodeRunning(bool running) {
  if (modelCodeRunning)
    modelCodeRunning->store(running ? 1 : 0);
}

void watchModelCodeFromOutside(llvm::StringRef modelFile,
                               llvm::StringRef object) {
  if (modelCodeRunning || threadCount() != 1)
    return;
  void *page = mmap(nullptr, sizeof(std::atomic<int>), PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED)
    return;
  // Nothing buffered is written twice, by both processes.
  std::cout.flush();
  std::fflush(nullptr);
  llvm::outs().flush();
  llvm::errs().flush();
  // Until each side has its handlers: a signal in between would reach
  // LLVM's in the parent (removing the object the child loads).
  sigset_t forwarded = forwardedSignals(), before;
  sigprocmask(SIG_BLOCK, &forwarded, &before);
  // Inherited as ignored, SIGCHLD would reap the child by itself, and the
  // parent could not wait for its status.
  struct sigaction childAction = {}, previousChildAction;
  childAction.sa_handler = SIG_DFL;
  sigemptyset(&childAction.sa_mask);
  sigaction(SIGCHLD, &childAction, &previousChildAction);
  const pid_t parent = getpid();
  pid_t child = fork();
  if (child < 0) {
    sigaction(SIGCHLD, &previousChildAction, nullptr);
    sigprocmask(SIG_SETMASK, &before, nullptr);
    munmap(page, sizeof(std::atomic<int>));
    return;
  }
  modelCodeRunning = new (page) std::atomic<int>(0);
  if (child == 0) {
    sigaction(SIGCHLD, &previousChildAction, nullptr);
    runtime::takeSignalsRelayedBy(parent);
    // A parent that dies (kill -9) takes its work along: the child stops
    // as on SIGTERM, removing its temporary files.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
      raise(SIGTERM);
    sigprocmask(SIG_SETMASK, &before, nullptr);
    return;
  }

  watchedChild.store(child);
  struct sigaction forward = {};
  forward.sa_sigaction = forwardToChild;
  forward.sa_flags = SA_SIGINFO | SA_RESTART;
  forward.sa_mask = forwarded;
  for (int signal : kForwardedSignals)
    sigaction(signal, &forward, nullptr);
  sigprocmask(SIG_SETMASK, &before, nullptr);
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) {
      std::string message = std::string("tgc: error: cannot wait for the "
                                        "process that runs the model file: ") +
                            std::strerror(errno) + "\n";
      [[maybe_unused]] ssize_t ignored =
          write(STDERR_FILENO, message.data(), message.size());
      _exit(1);
    }
  }
  // Its pid may be another process's from now on.
  watchedChild.store(0);
  sigprocmask(SIG_BLOCK, &forwarded, nullptr);
  endAsTheChildDid(status, modelFile.str(), object.str());
}

} // namespace tgc
