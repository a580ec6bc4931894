//===- Driver.h - tgc's command line, reusable by custom drivers -*- C++ -*-===//
//
// A user's own model file gets a driver with tgc's flags by registering its
// model and calling tgcMain:
//
//   int main(int argc, char **argv) {
//     tgc::registerModel({"my_model", "...", {"small"}, "small", buildMyModel});
//     return tgc::tgcMain(argc, argv);
//   }
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TOOLS_DRIVER_DRIVER_H
#define TGC_TOOLS_DRIVER_DRIVER_H

#include "tools/driver/DriverOptions.h"

namespace tgc {

/// Parses the command line (CommandLine.h) and runs it. Returns the process
/// exit code (0 on success).
int tgcMain(int argc, char **argv);

/// Builds or reads the module, runs the pipeline `options` asks for and
/// writes the stage, builds the program or runs the interpreter. Returns the
/// exit code; errors are printed, never fatal.
int runDriver(const DriverOptions &options);

} // namespace tgc

#endif // TGC_TOOLS_DRIVER_DRIVER_H
