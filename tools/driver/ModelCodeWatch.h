//===- ModelCodeWatch.h - a model file's _exit() seen from outside -*- C++ -*-===//
//
// exit() and quick_exit() in a model file's code run hooks tgc installs
// (ModelCodeGuard), but _exit() and _Exit() end the process at once: tgc
// ended with the model's status, 0 a silent success with no output written.
// Only another process can see that. So before it loads a model file, tgc
// forks: the child does all the work, and the parent waits for it and
// passes its status on, except an end while model code was running, which
// it reports as an error. The child marks when model code runs in a page
// both share. (To debug a model file's code in gdb: set follow-fork-mode
// child.)
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TOOLS_DRIVER_MODELCODEWATCH_H
#define TGC_TOOLS_DRIVER_MODELCODEWATCH_H

#include "llvm/ADT/StringRef.h"

namespace tgc {

/// Forks, where the process has one thread (fork copies only the caller's):
/// returns in the child, never in the parent, which ends as the child did
/// (its status, or its signal raised again; a crash's as status 128 + the
/// signal, so that the child's core stays) after an error naming
/// `modelFile` when the child ended while model code ran, and removes
/// `object` (the compiled model file, which the child removes too unless
/// it ended at once). Returns at once, watching nothing, where it cannot
/// fork. Signals sent to the parent by another process (kill) are passed to
/// the child 0.2 s later unless it has ended by then (a process group's
/// signal reached it too); the child takes such a copy as the same signal
/// (runtime::takeSignalsRelayedBy). A terminal's Ctrl-C reaches both
/// processes and is not passed on. A parent that dies (kill -9) sends the
/// child SIGTERM.
void watchModelCodeFromOutside(llvm::StringRef modelFile,
                               llvm::StringRef object);

/// Whether model code runs now, as the parent reads it (ModelCodeGuard;
/// its exit and crash hooks clear it after their own message).
void markModelCodeRunning(bool running);

} // namespace tgc

#endif // TGC_TOOLS_DRIVER_MODELCODEWATCH_H
