//===- Progress.h - long work says that it is still going -------*- C++ -*-===//
//
// In a data-parallel run the other processes wait while rank 0 validates,
// decodes or writes a checkpoint, which may take far longer than any step.
// Instead of a limit on the whole of that work, they take rank 0's word that
// it is still at it: the work calls noteProgress() between its pieces (each
// decoder call, each checkpoint tensor), and the process group passes that
// on to the others while they wait (ProcessGroup::beginFirstsWork). A rank 0
// that gives none for the peer timeout has died or hangs.
//
// Anywhere else (one process, the other ranks, tgc's own tools) nothing
// listens and noteProgress() costs one atomic load. Header-only, so that
// checkpoints and decoding need not link the process group.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_PROGRAM_PROGRESS_H
#define TGC_RUNTIME_PROGRAM_PROGRESS_H

#include <atomic>

namespace tgc::runtime {

/// Who hears of progress: set by the process group of a run of several
/// processes, on the thread that makes its exchanges (MPI's funneled
/// threading: noteProgress is called from that thread only).
using ProgressListener = void (*)();
inline std::atomic<ProgressListener> progressListener{nullptr};

/// One more piece of long work done.
inline void noteProgress() {
  if (ProgressListener listener =
          progressListener.load(std::memory_order_relaxed))
    listener();
}

} // namespace tgc::runtime

#endif // TGC_RUNTIME_PROGRAM_PROGRESS_H
