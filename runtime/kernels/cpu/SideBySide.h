//===- SideBySide.h - two independent ops at once, one thread each -*- C++ -*-===//
//
// The generated step runs each pair that tg-pair-gemms marked
// (tg.beside_next) through sideBySide. On two threads, a small GEMM split
// over both spends much of its time packing and at its library's barriers;
// two of them, each on its own thread, do not (the libraries run one thread
// each inside an OpenMP region). With any other thread count there is no
// such even split, and the two run one after the other.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CPU_SIDEBYSIDE_H
#define TGC_RUNTIME_CPU_SIDEBYSIDE_H

#include <omp.h>

namespace tgc::cpu {

/// first() and second(), at once on the program's two threads, or one
/// after the other (another thread count, or already inside a region).
template <typename First, typename Second>
void sideBySide(First &&first, Second &&second) {
  if (omp_get_max_threads() != 2 || omp_in_parallel()) {
    first();
    second();
    return;
  }
#pragma omp parallel num_threads(2)
  {
    // The region may get one thread (OMP_DYNAMIC, a thread limit): that
    // thread then runs both.
    if (omp_get_thread_num() == 0) {
      first();
      if (omp_get_num_threads() == 1)
        second();
    } else {
      second();
    }
  }
}

} // namespace tgc::cpu

#endif // TGC_RUNTIME_CPU_SIDEBYSIDE_H
