//===- Interrupt.h - Ctrl-C and SIGTERM end training cleanly ---*- C++ -*-===//
//
// The first SIGINT or SIGTERM only sets a flag: the training loop finishes
// its step, saves a checkpoint and exits with 128 + the signal's number. A
// second one ends the program at once (the checkpoint is written to a
// temporary file and renamed, so the previous one is never half-written).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_TRAIN_INTERRUPT_H
#define TGC_RUNTIME_TRAIN_INTERRUPT_H

namespace tgc::runtime {

void installInterruptHandlers();

/// The signal that asked the program to stop, or 0.
int pendingInterrupt();

} // namespace tgc::runtime

#endif // TGC_RUNTIME_TRAIN_INTERRUPT_H
