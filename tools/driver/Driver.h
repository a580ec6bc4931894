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

namespace tgc {

/// Parses the command line, builds or reads the module, writes the requested
/// stage. Returns the process exit code (0 on success).
int tgcMain(int argc, char **argv);

} // namespace tgc

#endif // TGC_TOOLS_DRIVER_DRIVER_H
