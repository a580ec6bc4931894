//===- Interrupt.cpp - Ctrl-C and SIGTERM end training cleanly -----------===//
#include "runtime/program/train/Interrupt.h"

#include "runtime/program/ProcessEnd.h"
#include "runtime/program/train/StatusLine.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <pthread.h>
#include <thread>
#include <unistd.h>

namespace tgc::runtime {
namespace {

/// The signal that asked the program to stop, or 0. Written by the thread
/// that waits for signals (or by the handler), read by the loops: an atomic
/// (lock-free, so a handler may store to it too).
std::atomic<int> interrupt{0};
static_assert(std::atomic<int>::is_always_lock_free);

/// The process that passes this one the signals sent to it (tgc's watching
/// parent, ModelCodeWatch.h), or 0.
std::atomic<pid_t> relay{0};

/// The last signal taken: its number, whether the relay sent it, and when
/// (CLOCK_MONOTONIC nanoseconds). Read and written under `lastLock`: by the
/// thread that waits for signals, or by handlers, which may run on two
/// threads at once (a handler's mask keeps only its own thread from
/// running it twice, so the lock cannot be taken again by its holder).
struct LastSignal {
  int number = 0;
  bool fromRelay = false;
  int64_t nanoseconds = 0;
} last;
std::atomic_flag lastLock = ATOMIC_FLAG_INIT; // always lock-free

/// Whether `signal` from `sender` is the copy of one already taken: sent to
/// both processes (a process group's kill, timeout, a job manager), it also
/// came through the relay. Async-signal-safe.
bool isRelayedCopy(int signal, pid_t sender) {
  pid_t relayPid = relay.load();
  if (relayPid == 0)
    return false;
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  int64_t nanoseconds = now.tv_sec * int64_t{1000000000} + now.tv_nsec;
  bool fromRelay = sender == relayPid;
  constexpr int64_t kSameRequest = int64_t{2} * 1000000000; // 2 s
  while (lastLock.test_and_set(std::memory_order_acquire)) {
  }
  bool copy = last.number == signal && last.fromRelay != fromRelay &&
              nanoseconds - last.nanoseconds < kSameRequest;
  if (copy)
    last.number = 0; // a third one is a new request
  else
    last = {signal, fromRelay, nanoseconds};
  lastLock.clear(std::memory_order_release);
  return copy;
}

extern "C" void onInterrupt(int signal, siginfo_t *info, void *) {
  if (isRelayedCopy(signal, info ? info->si_pid : 0))
    return;
  // A second signal: its default action, stop now.
  if (interrupt.load() != 0) {
    std::signal(signal, SIG_DFL);
    raise(signal);
    return;
  }
  interrupt.store(signal);
}

/// Set once watchInterruptSignals' thread runs; then `polled` says whether
/// the program polls the flag yet.
std::atomic<bool> watched{false}, polled{false};

sigset_t interruptSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

void waitForSignals() {
  sigset_t set = interruptSignals();
  for (;;) {
    siginfo_t info;
    int signal = sigwaitinfo(&set, &info);
    if (signal < 0 || isRelayedCopy(signal, info.si_pid))
      continue;
    // Before the program polls, or a second signal: the signal's default
    // action ends it (the exit status a shell reports for a killed program).
    if (!polled.load() || interrupt.load() != 0)
      dieOfSignal(signal);
    interrupt.store(signal);
  }
}

const char *currentActivity = "evaluating";
bool currentReturns = false;

} // namespace

void watchInterruptSignals() {
  if (watched.exchange(true))
    return;
  sigset_t set = interruptSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread(waitForSignals).detach();
}

void installInterruptHandlers() {
  if (watched.load()) {
    polled.store(true);
    return;
  }
  struct sigaction action = {};
  action.sa_sigaction = onInterrupt;
  // One handler at a time: `last` is not shared between two.
  action.sa_mask = interruptSignals();
  action.sa_flags = SA_SIGINFO;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int pendingInterrupt() { return interrupt.load(); }

void takeSignalsRelayedBy(pid_t relayPid) { relay.store(relayPid); }

const char *signalName(int signal) {
  if (signal == SIGINT)
    return "SIGINT";
  if (signal == SIGTERM)
    return "SIGTERM";
  static char text[32];
  std::snprintf(text, sizeof text, "signal %d", signal);
  return text;
}

void exitForInterrupt(const char *activity) {
  int signal = interrupt.load() ? interrupt.load() : SIGINT;
  clearStatusLine();
  std::fflush(stdout);
  std::fprintf(stderr, "interrupted by %s while %s\n", signalName(signal),
               activity);
  endProcess(128 + signal, signal);
}

InterruptScope::InterruptScope(const char *activity, bool returns)
    : previousActivity(currentActivity), previousReturns(currentReturns) {
  currentActivity = activity;
  currentReturns = returns;
}

InterruptScope::~InterruptScope() {
  currentActivity = previousActivity;
  currentReturns = previousReturns;
}

bool interruptRequested() {
  if (!interrupt.load())
    return false;
  if (currentReturns)
    return true;
  exitForInterrupt(currentActivity);
}

} // namespace tgc::runtime
