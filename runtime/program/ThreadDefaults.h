//===- ThreadDefaults.h - how OpenMP threads wait in training programs -*- C++ -*-===//
//
// libgomp's default lets idle workers spin for a while before they sleep. On
// a machine whose cores are shared with another busy process, the spinning
// workers steal the time the working ones need: a training step measured 19x
// slower that way (185 ms instead of 9.8 ms with passive waiting; idle, 5.6
// ms). So unless the user chose (OMP_WAIT_POLICY or GOMP_SPINCOUNT set), a
// training program waits passively.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_PROGRAM_THREADDEFAULTS_H
#define TGC_RUNTIME_PROGRAM_THREADDEFAULTS_H

#include <string>

namespace tgc::runtime {

/// First thing in main(): unless the user chose a wait policy, sets
/// OMP_WAIT_POLICY=passive and executes the program again. libgomp reads
/// its settings once, while it is loaded, before any code of the program
/// runs (even an executable's .preinit_array runs before the C library has
/// its environment), so a second start is the only way to change them.
/// Returns only when nothing had to change, or the new start failed (then
/// the program runs with libgomp's default).
void waitPassivelyUnlessChosen(char **argv);

/// "2 threads, passive waiting", or the user's choice, e.g.
/// "1 thread, GOMP_SPINCOUNT=1000": for the log's first line. Empty in a
/// program without OpenMP (CUDA).
std::string describeThreads();

} // namespace tgc::runtime

#endif // TGC_RUNTIME_PROGRAM_THREADDEFAULTS_H
