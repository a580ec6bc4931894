//===- MappedFiles.cpp - SIGBUS on a watched mapping, as an error --------===//
#include "runtime/data/MappedFiles.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <unistd.h>

namespace tgc::runtime {
namespace {

/// One watched mapping; `begin` is published last, so the handler sees
/// either nothing or a whole slot.
struct Watched {
  std::atomic<const char *> begin{nullptr};
  size_t bytes = 0;
  char message[640] = {};
  size_t messageBytes = 0;
};

constexpr int kSlots = 16;
Watched slots[kSlots];
std::mutex slotsMutex;

/// Async-signal-safe: reads the slots and writes a prepared message.
void onBusError(int, siginfo_t *info, void *) {
  const char *at = static_cast<const char *>(info->si_addr);
  for (Watched &slot : slots) {
    const char *begin = slot.begin.load();
    if (begin && at >= begin && at < begin + slot.bytes) {
      ssize_t ignored = ::write(STDERR_FILENO, slot.message, slot.messageBytes);
      (void)ignored;
      ::_exit(1);
    }
  }
  // Not a watched file: the default action, as without this handler.
  ::signal(SIGBUS, SIG_DFL);
  ::raise(SIGBUS);
}

void installHandler() {
  struct sigaction action = {};
  action.sa_sigaction = onBusError;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_SIGINFO;
  sigaction(SIGBUS, &action, nullptr);
}

} // namespace

void watchMapping(const void *address, size_t bytes, const std::string &path) {
  std::lock_guard<std::mutex> lock(slotsMutex);
  static std::once_flag installed;
  std::call_once(installed, installHandler);
  for (Watched &slot : slots) {
    if (slot.begin.load())
      continue;
    slot.bytes = bytes;
    int n = std::snprintf(slot.message, sizeof slot.message,
                          "error: %.480s changed while this process read it "
                          "(it is shorter than when it was opened: another "
                          "process truncated or rewrote it)\n",
                          path.c_str());
    slot.messageBytes = n > 0 ? std::min<size_t>(n, sizeof slot.message - 1) : 0;
    slot.begin.store(static_cast<const char *>(address));
    return;
  }
}

void unwatchMapping(const void *address) {
  std::lock_guard<std::mutex> lock(slotsMutex);
  for (Watched &slot : slots)
    if (slot.begin.load() == address)
      slot.begin.store(nullptr);
}

} // namespace tgc::runtime
