//===- RunFileChecks.h - what one tgc run may write -------------*- C++ -*-===//
//
// Before tgc builds or writes anything: no output of the run (-o, the
// source --keep-cpp keeps beside it, --dump-params, --loss-log) may be the
// same file as one it reads (the input, --model-file, --config, --corpus,
// tgc itself) or as another output (common/RunFiles.h); and a program
// (--emit=binary) is only ever written to a regular file, never renamed
// over a device or a FIFO given as -o.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TOOLS_DRIVER_RUNFILECHECKS_H
#define TGC_TOOLS_DRIVER_RUNFILECHECKS_H

#include "tools/driver/DriverOptions.h"

namespace tgc {

/// False after a message ("tgc: error: ...") when the run must not start.
bool checkRunFiles(const DriverOptions &options);

} // namespace tgc

#endif // TGC_TOOLS_DRIVER_RUNFILECHECKS_H
