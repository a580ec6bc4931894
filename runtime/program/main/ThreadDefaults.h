//===- ThreadDefaults.h - OpenMP threads of training programs -----*- C++ -*-===//
//
// Two defaults a training program sets for OpenMP (GCC's libgomp), each only
// where the user did not choose:
// - Waiting: an idle worker spins GOMP_SPINCOUNT=kSpinCount rounds (about
//   0.1 ms) for the next parallel loop, then sleeps. A step runs hundreds
//   of parallel loops back to back, and waking a sleeping worker costs
//   tens of microseconds each time: sleeping at once (passive waiting) made
//   the small GPT's bf16 step 116.5 ms against 100.5 (2 threads, Intel Xeon
//   with AMX), the 3+3 Transformer's 183-199 against 174-175. libgomp's own
//   default spins 100 times longer, and on a machine whose cores are shared
//   with another busy process spinning workers steal the time the working
//   ones need (the README's main job once ran 185 ms a step that way
//   instead of 9.8). The short spin costs 6-10% there: next to a busy loop
//   217-224 against passive's 206 ms, two copies at once 212 against 192
//   (the GPT), 350-355 against 320 (the Transformer). OMP_WAIT_POLICY=passive
//   sleeps at once.
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

/// An idle worker's spin rounds before it sleeps, by default.
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

/// "2 threads, GOMP_SPINCOUNT=3000", "1 thread (a small step)", or the
/// user's choice, e.g. "2 threads, passive waiting": for the log's first
/// line.
/// Empty in a program without OpenMP (CUDA).
std::string describeThreads();

} // namespace tgc::runtime

#endif // TGC_RUNTIME_PROGRAM_THREADDEFAULTS_H
