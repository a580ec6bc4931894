//===- InterpreterTrainer.h - the training step on the interpreter -*- C++ -*-===//
//
// Runs a compiled training step (the output of tg-training-pipeline) on the
// reference interpreter: binds a batch, the dropout key (seed, step), the
// learning rate of the module's schedule and the step to @train_step's
// arguments by their `tg.name`. The oracle the generated binaries' steps are
// compared with, and the engine of `tgc --emit=train --target=interp`.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_INTERPRETERTRAINER_H
#define TGC_CODEGEN_INTERPRETERTRAINER_H

#include "codegen/Interpreter.h"
#include "codegen/StepSignature.h"
#include "runtime/program/Schedule.h"
#include "runtime/data/Tasks.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <memory>

namespace tgc {

class InterpreterTrainer {
public:
  struct StepResult {
    double loss;
    int64_t tokens;
    double learningRate;
  };

  /// Fails with a diagnostic if `module` has no `stepFunction` taking
  /// source_ids, target_in_ids, target_out_ids, dropout_key, lr and step, or
  /// no warmup schedule.
  static mlir::FailureOr<std::unique_ptr<InterpreterTrainer>>
  create(mlir::ModuleOp module, Precision precision, uint32_t seed,
         llvm::StringRef stepFunction = "train_step");

  /// Runs step number stepsDone()+1 on `batch`.
  mlir::FailureOr<StepResult> step(const runtime::Batch &batch);

  int64_t stepsDone() const { return stepsDone_; }
  runtime::BatchShape batchShape() const { return signature_.shape; }
  Interpreter &interpreter() { return interpreter_; }

private:
  InterpreterTrainer(mlir::ModuleOp module, Precision precision, uint32_t seed)
      : interpreter_(module, precision), seed_(seed) {}

  Interpreter interpreter_;
  StepSignature signature_;
  uint32_t seed_;
  int64_t stepsDone_ = 0;
};

} // namespace tgc

#endif // TGC_CODEGEN_INTERPRETERTRAINER_H
