//===- InterpreterRuns.h - tgc --target=interp ------------------*- C++ -*-===//
//
// What tgc runs on the reference interpreter: one function on a synthetic
// batch (--emit=tg), its gradients against central differences
// (--check-gradients), or training on a built-in task (--emit=train) through
// the same training loop as a generated program
// (runtime/program/train/TrainingLoop.h).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TOOLS_DRIVER_INTERPRETERRUNS_H
#define TGC_TOOLS_DRIVER_INTERPRETERRUNS_H

#include "tools/driver/DriverOptions.h"

#include "mlir/IR/BuiltinOps.h"

namespace tgc {

/// Runs the module's function once on a synthetic batch and prints its
/// results; the exit code.
int runInterpreter(mlir::ModuleOp module, const DriverOptions &options);

/// Trains @train_step for --steps on --task; the exit code (128 + signal
/// when interrupted).
int trainOnInterpreter(mlir::ModuleOp module, const DriverOptions &options);

/// --check-gradients: differentiates the model's loss with dropout off and
/// compares every parameter's gradient with central differences on the
/// f64 interpreter, for a synthetic batch; the exit code (1 above the
/// tolerance).
int checkGradientsOnInterpreter(mlir::ModuleOp module,
                                const DriverOptions &options);

} // namespace tgc

#endif // TGC_TOOLS_DRIVER_INTERPRETERRUNS_H
