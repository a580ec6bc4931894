//===- ProcessEnd.h - only main ends the process ----------------*- C++ -*-===//
//
// No library calls exit: where one cannot return to its caller (an
// interrupt in a loop with no way back, a data-parallel peer that stopped
// answering) it calls endProcess or endProcessNow, and what they do is
// main's choice, installed first thing (setProcessEnders). A training
// program's main (main/Main.cpp) and tgc's end with std::exit, so that exit
// handlers run (checkpoint locks are removed, stdout is flushed) and the
// status is the 128 + signal that shells and tests read, and with
// std::_Exit from a watchdog thread. A process whose main installed nothing
// (a unit test, a user's own driver) ends by a signal's default action
// instead, raised in the calling thread: what would have happened had
// nothing caught the signal, and safe wherever a signal may be raised.
//
// Header-only, so that every room and every main can use it without linking
// one more library.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_PROGRAM_PROCESSEND_H
#define TGC_RUNTIME_PROGRAM_PROCESSEND_H

#include <atomic>
#include <csignal>
#include <pthread.h>

namespace tgc::runtime {

/// Ends the process with exit status `status`; must not return.
using ProcessEnder = void (*)(int status);

/// Main's choices, null until it installs them. Atomic: the thread that
/// waits for signals and the data-parallel watchdog read them.
inline std::atomic<ProcessEnder> orderlyProcessEnder{nullptr};
inline std::atomic<ProcessEnder> immediateProcessEnder{nullptr};

/// Installs how the process ends: `orderly` from the program's own flow,
/// with its exit handlers (std::exit); `immediate` at once, from any thread,
/// while others may be blocked in a collective or a kernel (std::_Exit).
inline void setProcessEnders(ProcessEnder orderly, ProcessEnder immediate) {
  orderlyProcessEnder.store(orderly);
  immediateProcessEnder.store(immediate);
}

/// Ends the process by `signal`'s default action, unblocked and raised in
/// this thread: the end of a process that never caught the signal.
[[noreturn]] inline void dieOfSignal(int signal) {
  std::signal(signal, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signal);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  for (;;)
    raise(signal); // delivered before raise returns: the process ends
}

/// Ends the process in order with `status` (main's orderly ender); without
/// one, by `signal`'s default action.
[[noreturn]] inline void endProcess(int status, int signal) {
  if (ProcessEnder end = orderlyProcessEnder.load())
    end(status);
  dieOfSignal(signal);
}

/// Ends the process at once with `status` (main's immediate ender); without
/// one, by SIGKILL.
[[noreturn]] inline void endProcessNow(int status) {
  if (ProcessEnder end = immediateProcessEnder.load())
    end(status);
  dieOfSignal(SIGKILL);
}

} // namespace tgc::runtime

#endif // TGC_RUNTIME_PROGRAM_PROCESSEND_H
