//===- Interrupt.cpp - Ctrl-C and SIGTERM end training cleanly -----------===//
#include "runtime/program/Interrupt.h"

#include <csignal>

namespace tgc::runtime {
namespace {

volatile std::sig_atomic_t interrupt = 0;

extern "C" void onInterrupt(int signal) { interrupt = signal; }

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

} // namespace tgc::runtime
