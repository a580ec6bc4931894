//===- ThreadDefaults.h - OpenMP threads of training programs -----*- C++ -*-===//
//
// Two defaults a training program sets for OpenMP (GCC's libgomp), each only
// where the user did not choose:
// - Waiting: libgomp's default lets idle workers spin before they sleep. On
//   a machine whose cores are shared with another busy process, spinning
//   workers steal the time the working ones need: the README's main job ran
//   185 ms a step that way instead of 9.8 ms with passive waiting (idle:
//   7.3 ms). So OMP_WAIT_POLICY=passive unless OMP_WAIT_POLICY or
//   GOMP_SPINCOUNT is set.
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

/// "2 threads, passive waiting", "1 thread (a small step)", or the user's
/// choice, e.g. "1 thread, GOMP_SPINCOUNT=1000": for the log's first line.
/// Empty in a program without OpenMP (CUDA).
std::string describeThreads();

} // namespace tgc::runtime

#endif // TGC_RUNTIME_PROGRAM_THREADDEFAULTS_H
