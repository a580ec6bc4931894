//===- ModelCodeWatch.cpp - a model file's _exit() seen from outside ------===//
#include "tools/driver/ModelCodeWatch.h"

#include "llvm/Support/Signals.h"
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
#include <sys/wait.h>
#include <unistd.h>

namespace tgc {
namespace {

/// In a page the parent and the child share: 1 while model code runs.
std::atomic<int> *modelCodeRunning = nullptr;
pid_t watchedChild = 0;

constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT,
                                     SIGUSR1, SIGUSR2};

/// The parent's handler: a signal another process sent to tgc reaches the
/// child that does its work. A terminal's (si_code SI_KERNEL) reached the
/// child too, being in the same process group.
void forwardToChild(int signal, siginfo_t *info, void *) {
  if (info && info->si_code == SI_KERNEL)
    return;
  if (watchedChild > 0)
    kill(watchedChild, signal);
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

[[noreturn]] void endAsTheChildDid(int status, const std::string &modelFile) {
  if (WIFEXITED(status)) {
    int code = WEXITSTATUS(status);
    if (code == 0 && modelCodeRunning->load()) {
      std::string message =
          "tgc: error: model file " + modelFile + " ended tgc with _exit() "
          "or _Exit() while tgc ran its code: a model file builds its graph "
          "or reports an error, it does not end tgc\n";
      [[maybe_unused]] ssize_t ignored =
          write(STDERR_FILENO, message.data(), message.size());
      // The temporary files made before the fork (the model's object).
      llvm::sys::RunInterruptHandlers();
      _exit(1);
    }
    _exit(code);
  }
  int signal = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
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

void watchModelCodeFromOutside(llvm::StringRef modelFile) {
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
  pid_t child = fork();
  if (child < 0) {
    munmap(page, sizeof(std::atomic<int>));
    return;
  }
  modelCodeRunning = new (page) std::atomic<int>(0);
  if (child == 0)
    return;

  watchedChild = child;
  struct sigaction forward = {};
  forward.sa_sigaction = forwardToChild;
  forward.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&forward.sa_mask);
  for (int signal : kForwardedSignals)
    sigaction(signal, &forward, nullptr);
  int status = 0;
  while (waitpid(child, &status, 0) < 0)
    if (errno != EINTR)
      _exit(1);
  endAsTheChildDid(status, modelFile.str());
}

} // namespace tgc
