//===- Interrupt.h - Ctrl-C and SIGTERM end training cleanly ---*- C++ -*-===//
//
// The first SIGINT or SIGTERM only sets a flag: the training loop finishes
// its step, saves a checkpoint and exits with 128 + the signal's number. A
// second one ends the program at once (the checkpoint is written to a
// temporary file and renamed, so the previous one is never half-written).
//
// The long loops outside training steps (evaluation, validation, --translate)
// poll the flag once per batch and per decoded position (and every few
// thousand held-out sentences drawn for a task), so that a signal
// takes effect within a fraction of a second there too: interruptRequested()
// ends the program (128 + the signal, after "interrupted by SIGINT while
// <activity>") unless an InterruptScope asks the loop to return instead, as
// validation does (its caller then sees pendingInterrupt()). How it ends is
// main's choice (ProcessEnd.h): a training program exits with std::exit.
//
// A compiled program takes the two signals on a thread of their own
// (watchInterruptSignals, first thing in main): every other thread blocks
// them, so no signal handler ever runs in the middle of a kernel. oneDNN's
// JIT-compiled GEMMs do not survive that: an interrupted one sometimes
// corrupted the heap (glibc aborted in the GEMM after a Ctrl-C).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_TRAIN_INTERRUPT_H
#define TGC_RUNTIME_TRAIN_INTERRUPT_H

#include <sys/types.h>

namespace tgc::runtime {

/// Blocks SIGINT and SIGTERM in the calling thread, and so in every thread
/// it starts later, and starts the thread that waits for them. Until
/// installInterruptHandlers, a signal ends the program at once (its default
/// action). Call it in main before any other thread exists.
void watchInterruptSignals();

/// From now on the first SIGINT or SIGTERM sets the flag that
/// pendingInterrupt() reads, and a second one ends the program at once.
/// Without watchInterruptSignals (a program that did not call it), a signal
/// handler does the same.
void installInterruptHandlers();

/// The signal that asked the program to stop, or 0.
int pendingInterrupt();

/// `relay` passes this process the signals sent to it (tgc's parent while a
/// model file's code may run, tools/driver/ModelCodeWatch.h): a signal that
/// arrives both from it and from another sender within 2 s (a process
/// group's kill reaches both processes) is one request, not a second.
void takeSignalsRelayedBy(pid_t relay);

/// "SIGINT", "SIGTERM" or "signal N".
const char *signalName(int signal);

/// Prints "interrupted by SIG... while <activity>" and ends the process with
/// 128 + the pending signal (endProcess: main's orderly ender, else the
/// signal's default action).
[[noreturn]] void exitForInterrupt(const char *activity);

/// What interruptRequested() does inside a scope (innermost wins): with
/// `returns`, it returns true so that the loop stops and its caller decides;
/// else it exits (exitForInterrupt) naming `activity`. Outside every scope
/// it exits naming "evaluating".
class InterruptScope {
public:
  InterruptScope(const char *activity, bool returns);
  ~InterruptScope();
  InterruptScope(const InterruptScope &) = delete;
  InterruptScope &operator=(const InterruptScope &) = delete;

private:
  const char *previousActivity;
  bool previousReturns;
};

/// Polled by long loops: false while no interrupt is pending, true when one
/// is and the innermost InterruptScope returns; otherwise it exits.
bool interruptRequested();

} // namespace tgc::runtime

#endif // TGC_RUNTIME_TRAIN_INTERRUPT_H
