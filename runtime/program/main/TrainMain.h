//===- TrainMain.h - a generated training program's run ---------*- C++ -*-===//
//
// What main() (Main.cpp) runs once the process is set up (thread defaults,
// the signal thread, the process group): the flags, then training,
// --translate or --version on the compiled model. A function of its own so
// that main() is the one place that names the generated kCompiledModel.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_PROGRAM_TRAINMAIN_H
#define TGC_RUNTIME_PROGRAM_TRAINMAIN_H

#include "runtime/program/CompiledStep.h"
#include "runtime/program/parallel/ProcessGroup.h"

namespace tgc::runtime {

/// Parses the flags and runs the program on `model`; `group` is null in
/// one process. Returns the exit code.
int trainMain(const CompiledModel &model, int argc, char **argv,
              ProcessGroup *group);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_PROGRAM_TRAINMAIN_H
