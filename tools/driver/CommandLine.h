//===- CommandLine.h - tgc's flags into DriverOptions -----------*- C++ -*-===//
#ifndef TGC_TOOLS_DRIVER_COMMANDLINE_H
#define TGC_TOOLS_DRIVER_COMMANDLINE_H

#include "tools/driver/DriverOptions.h"

namespace tgc {

/// Parses tgc's flags and MLIR's (IR printing, pass timing, diagnostics)
/// from argv into `options`; --help and --version print and exit here, as
/// bad flags do (LLVM's command-line library), so this runs in the tool only.
DriverOptions parseCommandLine(int argc, char **argv);

} // namespace tgc

#endif // TGC_TOOLS_DRIVER_COMMANDLINE_H
