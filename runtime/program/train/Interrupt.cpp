//===- Interrupt.cpp - Ctrl-C and SIGTERM end training cleanly -----------===//
#include "runtime/program/train/Interrupt.h"

#include "runtime/program/ProcessEnd.h"
#include "runtime/program/train/StatusLine.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <pthread.h>
#include <thread>

namespace tgc::runtime {
namespace {

/// The signal that asked the program to stop, or 0. Written by the thread
/// that waits for signals (or by the handler), read by the loops: an atomic
/// (lock-free, so a handler may store to it too).
std::atomic<int> interrupt{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void onInterrupt(int signal) { interrupt.store(signal); }

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
    int signal = 0;
    if (sigwait(&set, &signal) != 0)
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
  action.sa_handler = onInterrupt;
  sigemptyset(&action.sa_mask);
  // The next signal takes the default action: stop now.
  action.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int pendingInterrupt() { return interrupt.load(); }

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
