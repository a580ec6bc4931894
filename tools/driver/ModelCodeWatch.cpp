//===- ModelCodeWatch.cpp - a model file's _exit() seen from outside ------===//
#include "tools/driver/ModelCodeWatch.h"

#include "runtime/program/train/Interrupt.h"

#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <ctime>
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

/// What the parent passes on.
constexpr int kForwardedSignals[] = {SIGINT,  SIGTERM,   SIGHUP,  SIGQUIT,
                                     SIGUSR1, SIGUSR2,   SIGALRM, SIGVTALRM,
                                     SIGPROF, SIGXCPU,   SIGXFSZ};

/// How long the parent holds a signal before it passes it on: a process
/// group's signal (timeout, kill %1, a job manager) reached the child too,
/// which has ended by then unless it finishes a training step; then the
/// copy comes within the 2 s runtime::takeSignalsRelayedBy takes as one
/// request. (LLVM's handlers, which remove tgc's temporary files, take a
/// second copy as the signal's default action: it would cut their work
/// short.)
constexpr long kHoldNanoseconds = 200'000'000;

sigset_t forwardedSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int signal : kForwardedSignals)
    sigaddset(&set, signal);
  return set;
}

int64_t monotonicNanoseconds() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * int64_t{1000000000} + now.tv_nsec;
}

/// The parent's whole work: waits for `child`, with every signal it passes
/// on blocked and taken here (sigtimedwait, no handler), and returns the
/// child's status. A terminal's SIGINT or SIGQUIT (si_code SI_KERNEL)
/// reached the child's process group already and is not passed on; a
/// terminal's hangup reaches only the session's leader, which tgc may be.
int waitForChild(pid_t child) {
  sigset_t set = forwardedSignals();
  sigaddset(&set, SIGCHLD);
  uint64_t held = 0; // a bit per signal number
  int64_t heldSince = 0;
  for (;;) {
    int status = 0;
    pid_t ended = waitpid(child, &status, WNOHANG);
    if (ended == child)
      return status;
    if (ended < 0 && errno != EINTR) {
      std::string message = std::string("tgc: error: cannot wait for the "
                                        "process that runs the model file: ") +
                            std::strerror(errno) + "\n";
      [[maybe_unused]] ssize_t ignored =
          write(STDERR_FILENO, message.data(), message.size());
      _exit(1);
    }
    // Not yet reaped, so `child` is still its pid: a signal goes to it.
    if (held && monotonicNanoseconds() - heldSince >= kHoldNanoseconds) {
      for (int signal : kForwardedSignals)
        if (held & (uint64_t{1} << signal))
          kill(child, signal);
      held = 0;
    }
    timespec wait = {held ? 0 : 1, held ? 10'000'000 : 0};
    siginfo_t info;
    int signal = sigtimedwait(&set, &info, &wait);
    if (signal <= 0 || signal == SIGCHLD)
      continue;
    if (info.si_code == SI_KERNEL && (signal == SIGINT || signal == SIGQUIT))
      continue;
    if (!held)
      heldSince = monotonicNanoseconds();
    held |= uint64_t{1} << signal;
  }
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
  // The parent takes them blocked (waitForChild); the child unblocks them
  // (a signal before would reach LLVM's handlers in the parent, removing
  // the object the child loads).
  sigset_t blocked = forwardedSignals(), before;
  sigaddset(&blocked, SIGCHLD);
  sigprocmask(SIG_BLOCK, &blocked, &before);
  // Inherited as ignored, SIGCHLD would reap the child by itself, and the
  // parent could not wait for its status.
  struct sigaction childAction = {}, previousChildAction;
  childAction.sa_handler = SIG_DFL;
  sigemptyset(&childAction.sa_mask);
  sigaction(SIGCHLD, &childAction, &previousChildAction);
  // Made before the fork: one made after it in both processes could reset
  // a mark the child had set already.
  modelCodeRunning = new (page) std::atomic<int>(0);
  const pid_t parent = getpid();
  pid_t child = fork();
  if (child < 0) {
    sigaction(SIGCHLD, &previousChildAction, nullptr);
    sigprocmask(SIG_SETMASK, &before, nullptr);
    modelCodeRunning = nullptr;
    munmap(page, sizeof(std::atomic<int>));
    return;
  }
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

  endAsTheChildDid(waitForChild(child), modelFile.str(), object.str());
}

} // namespace tgc
