//===- ThreadDefaults.h - OpenMP threads of training programs -----*- C++ -*-===//
//
// Two defaults a training program sets for OpenMP (GCC's libgomp), each only
// where the user did not choose:
// - Waiting: a step of at least kSpinStepFlops lets an idle worker spin
//   GOMP_SPINCOUNT=kSpinCount rounds (about 0.1 ms) for the next parallel
//   loop before it sleeps; smaller steps sleep at once
//   (OMP_WAIT_POLICY=passive). A step runs hundreds of parallel loops back
//   to back, and waking a sleeping worker costs tens of microseconds each
//   time: sleeping at once made the small GPT's bf16 step (45 GFLOP) 116.5
//   ms against 100.5 spinning, the 3+3 Transformer's (95 GFLOP) 183-199
//   against 174-175 (2 threads, Intel Xeon with AMX). Spinning costs other
//   processes their share of the cores: next to a busy loop 217-224 ms
//   against 206 (the GPT), two copies at once 212 against 192, 350-355
//   against 320 (the Transformer). On smaller steps, whose parallel loops
//   are shorter, both sides grow: the 2+2 row's bf16 step (6.7 GFLOP) 33.6
//   ms sleeping against 21.7 spinning idle, but two copies at once 40.2
//   against 51.7. The threshold keeps the spin where what it costs others
//   stays near a tenth; OMP_WAIT_POLICY or GOMP_SPINCOUNT choose otherwise
//   (GOMP_SPINCOUNT=3000 on a machine of one's own). Where the workers
//   sleep, the kernels keep GEMMs too small to pay for a wake-up on the
//   calling thread (runtime/kernels/cpu/WakeCost.h). libgomp's own default
//   spins 100 times longer (the README's main job once ran 185 ms a step
//   that way instead of 9.8 next to a busy process).
// - Threads: a step of less than kSmallStepFlops gains nothing from more
//   threads (each of its hundreds of parallel loops costs a wake-up) and
//   loses most under load, so it runs on one (the main job: 8.3 ms a step
//   idle, 9.1 under load) unless OMP_NUM_THREADS is set.
// And one limit on the user's choice: an OMP_NUM_THREADS count over the
// cores the process may use (its affinity mask) is cut to them, with a note
// (OMP_NUM_THREADS=100000 crashed libgomp).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_PROGRAM_THREADDEFAULTS_H
#define TGC_RUNTIME_PROGRAM_THREADDEFAULTS_H

#include <string>

namespace tgc::runtime {

/// From this estimate of a step's FLOPs up, idle workers spin kSpinCount
/// rounds before they sleep, by default.
inline constexpr double kSpinStepFlops = 20e9;
inline constexpr const char *kSpinCount = "3000";

/// Below this estimate of a step's FLOPs, one thread by default.
inline constexpr double kSmallStepFlops = 1e9;

/// First thing in main(): sets the defaults above that the user did not
/// choose and executes the program again. libgomp reads its settings once,
/// while it is loaded, before any code of the program runs (even an
/// executable's .preinit_array runs before the C library has its
/// environment), so a second start is the only way to change them: the
/// program's own file by its path, with argv kept, so the process keeps its
/// name. Returns only when nothing had to change, or the new start failed
/// or the file cannot be named (removed or replaced since it started); then
/// the program runs with libgomp's defaults.
void chooseThreadDefaults(char **argv, double stepFlops);

/// "2 threads, GOMP_SPINCOUNT=3000", "1 thread (a small step), passive
/// waiting", or the user's choice, e.g. "2 threads, OMP_WAIT_POLICY=active":
/// for the log's first line.
/// Empty in a program without OpenMP (CUDA).
std::string describeThreads();

} // namespace tgc::runtime

#endif // TGC_RUNTIME_PROGRAM_THREADDEFAULTS_H
