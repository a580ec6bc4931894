//===- Interrupt.cpp - Ctrl-C and SIGTERM end training cleanly -----------===//
#include "runtime/program/Interrupt.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>

namespace tgc::runtime {
namespace {

volatile std::sig_atomic_t interrupt = 0;

extern "C" void onInterrupt(int signal) { interrupt = signal; }

const char *currentActivity = "evaluating";
bool currentReturns = false;

} // namespace

void installInterruptHandlers() {
  struct sigaction action = {};
  action.sa_handler = onInterrupt;
  sigemptyset(&action.sa_mask);
  // The next signal takes the default action: stop now.
  action.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int pendingInterrupt() { return interrupt; }

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
  int signal = interrupt ? interrupt : SIGINT;
  std::fflush(stdout);
  std::fprintf(stderr, "interrupted by %s while %s\n", signalName(signal),
               activity);
  std::exit(128 + signal);
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
  if (!interrupt)
    return false;
  if (currentReturns)
    return true;
  exitForInterrupt(currentActivity);
}

} // namespace tgc::runtime
