//===- WakeCost.h - small GEMMs on the calling thread -----------*- C++ -*-===//
//
// A parallel region on two threads costs little where the idle worker spins
// (GOMP_SPINCOUNT, the default of large steps: runtime/program/main/
// ThreadDefaults.h) and tens of microseconds where it sleeps at once
// (OMP_WAIT_POLICY=passive, the default of smaller steps): a futex wake-up,
// in a virtual machine an interrupt to another virtual CPU, and often a
// second one for the caller waiting at the region's end. A small GEMM is
// shorter than that, so where the workers sleep it runs on the calling
// thread (Intel Xeon with AMX, 2 threads: a 1024x128x128 bf16 product 103
// us on two threads waking a sleeping worker, 50 on one, 29 on two
// spinning).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_CPU_WAKECOST_H
#define TGC_RUNTIME_CPU_WAKECOST_H

#include <cstdint>

namespace tgc::cpu {

/// Whether idle OpenMP workers sleep at once: OMP_WAIT_POLICY=passive, or
/// GOMP_SPINCOUNT=0 (read once: libgomp reads them as it loads).
bool workersSleep();

/// Below this many multiply-adds a GEMM runs on the calling thread where the
/// workers sleep. The 2+2 row's step (bench/configs/full-2l-d128.pbtxt,
/// 1024 tokens, d 128: its 72 projection products of 2^24 below, its
/// feed-forward ones of 2^26 above), 2 threads, sleeping workers: bf16
/// 34.8-35.8 -> 31.8-32.9 ms (a second program compiled the same way
/// 33.4-36.1 -> 29.5-33.3); from 2^27 it was slower again (33.6-35.2). The
/// f32 step's projections already run as side-by-side pairs (tg-pair-gemms),
/// one thread each: level.
inline constexpr int64_t kSleepingGemmFrom = int64_t{1} << 25;

/// A product of `macs` multiply-adds: on the calling thread where the
/// workers sleep and it is small.
inline bool gemmOnCallingThread(int64_t macs) {
  return macs < kSleepingGemmFrom && workersSleep();
}

/// For its scope, the libraries called from this thread run on it alone
/// where `alone` holds: oneDNN and OpenBLAS size their teams by
/// omp_get_max_threads(), which this sets to 1 and then back. Nothing
/// changes inside a parallel region (the libraries run one thread there).
class CallingThreadOnly {
public:
  explicit CallingThreadOnly(bool alone);
  ~CallingThreadOnly();
  CallingThreadOnly(const CallingThreadOnly &) = delete;
  CallingThreadOnly &operator=(const CallingThreadOnly &) = delete;

private:
  int restore = 0; ///< the thread count to restore; 0: none changed
};

} // namespace tgc::cpu

#endif // TGC_RUNTIME_CPU_WAKECOST_H
