//===- Driver.h - tgc's command line, reusable by custom drivers -*- C++ -*-===//
//
// A user's own model gets a driver with tgc's flags by registering the
// model and calling tgcMain:
//
//   int main(int argc, char **argv) {
//     tgc::registerModel({"my_model", "...", {"small"}, "small", buildMyModel});
//     return tgc::tgcMain(argc, argv);
//   }
//
// tgc_add_model (find_package(tgc)) builds such a driver from model files
// that register their models with TGC_REGISTER_MODEL (tools/package).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TOOLS_DRIVER_DRIVER_H
#define TGC_TOOLS_DRIVER_DRIVER_H

#include "tools/driver/DriverOptions.h"

namespace tgc {

/// Parses the command line (CommandLine.h) and runs it. Returns the process
/// exit code (0 on success). `toolchainPrefix` names the installed tree
/// whose headers and runtime archives the training programs are built
/// against (tools/driver/Toolchain.h); null: the tree tgc runs from.
int tgcMain(int argc, char **argv, const char *toolchainPrefix = nullptr);

/// Builds or reads the module, runs the pipeline `options` asks for and
/// writes the stage, builds the program or runs the interpreter. Returns the
/// exit code; errors are printed, never fatal.
int runDriver(const DriverOptions &options);

} // namespace tgc

#endif // TGC_TOOLS_DRIVER_DRIVER_H
