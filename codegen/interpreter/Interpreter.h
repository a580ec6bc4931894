//===- Interpreter.h - the reference interpreter of tg modules -*- C++ -*-===//
//
// Executes a tg module op by op on the host: the oracle that autodiff (by
// finite differences), the fusion passes and both code generators are
// checked against. Plain loops in double; obviously correct, not fast.
//
//   Interpreter interp(module, Precision::F64);
//   interp.initializeVariables(/*seed=*/1);
//   FailureOr<std::vector<HostTensor>> out = interp.run("step", {ids, key});
//
// Every op computes in double. Under Precision::F32 every f32 result (and
// every f32 argument and variable) is rounded to float, as a float backend
// would store it; Precision::F64 keeps the doubles, for gradient checks.
//
// Variables (tg.variable) are state: they persist across run() calls and
// tg.store / tg.adam_update update them in place. Dropout draws from
// runtime/kernels/Philox.h's stream; initialization from runtime/program/train/Initializers.h.
//
// Errors never crash: an op the interpreter cannot execute, a module that
// does not verify, wrong arguments or bad data (an id out of range, an Adam
// step < 1) emit an MLIR diagnostic (at the op's location where there is
// one) and run() returns failure, leaving the variables as they were.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_INTERPRETER_INTERPRETER_H
#define TGC_CODEGEN_INTERPRETER_INTERPRETER_H

#include "runtime/kernels/reference/HostTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringMap.h"

#include <cstdint>
#include <vector>

namespace tgc {

enum class Precision { F32, F64 };

/// Whether the interpreter can hold `module` in this machine's memory: the
/// bytes of every variable, function argument and op result, each kept (an
/// upper bound: the interpreter runs small shapes), at 4 bytes an element
/// (8 with `precision` F64), against the machine's memory and swap. An
/// error at the module's location otherwise (a shape the verifier accepts,
/// up to 2^40 elements, ended in LLVM's out-of-memory abort).
mlir::LogicalResult checkInterpreterMemory(mlir::ModuleOp module,
                                           Precision precision);

class Interpreter {
public:
  /// Declares every tg.variable of `module` (zero-filled until
  /// initializeVariables). The module must outlive the interpreter and not
  /// change while it is used (it is verified once, on the first run).
  Interpreter(mlir::ModuleOp module, Precision precision);

  /// Fills every variable as its `init` says, from `seed`.
  void initializeVariables(uint32_t seed);

  /// The current value of variable `name`; null if the module has none. The
  /// caller may overwrite it to set parameters; run() rejects a value whose
  /// shape differs from the declaration. The pointer stays valid across runs.
  HostTensor *variable(llvm::StringRef name);

  /// Runs func.func `funcName` on `args` (one per function argument, of its
  /// shape and element type) and returns its results.
  mlir::FailureOr<std::vector<HostTensor>> run(llvm::StringRef funcName,
                                               llvm::ArrayRef<HostTensor> args);

  /// Result `resultIndex` of `funcName` on `args`, computed from only the
  /// ops it depends on (and every op with side effects, in order); changes
  /// no state. A gradient check's loss probes skip the backward pass this
  /// way.
  mlir::FailureOr<HostTensor> evaluate(llvm::StringRef funcName,
                                       llvm::ArrayRef<HostTensor> args,
                                       unsigned resultIndex);

  /// Runs `funcName` on `args` as run() does but changes no state, and
  /// stops at the first op with a NaN or an infinity in a result: that op,
  /// or null when there is none (what a non-finite training step is traced
  /// to).
  mlir::FailureOr<mlir::Operation *>
  firstNonFinite(llvm::StringRef funcName, llvm::ArrayRef<HostTensor> args);

  Precision precision() const { return precision_; }

private:
  /// Verifies the module (once), the function and the arguments.
  mlir::FailureOr<mlir::func::FuncOp>
  checkCall(llvm::StringRef funcName, llvm::ArrayRef<HostTensor> args);
  mlir::LogicalResult checkVariables();

  mlir::ModuleOp module_;
  Precision precision_;
  llvm::StringMap<HostTensor> variables_;
  /// tg.multi_adam_update's gradient accumulator (its accumulating phases).
  std::vector<double> gradientAccumulator_;
  bool verified_ = false;
};

} // namespace tgc

#endif // TGC_CODEGEN_INTERPRETER_INTERPRETER_H
