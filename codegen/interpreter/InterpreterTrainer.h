//===- InterpreterTrainer.h - the training step on the interpreter -*- C++ -*-===//
//
// Runs a compiled training step (the output of tg-training-pipeline) on the
// reference interpreter: binds a batch, the dropout key (seed, step), the
// learning rate and the step to @train_step's arguments by their `tg.name`.
// The oracle the generated binaries' steps are compared with, and the step
// backend of `tgc --emit=train --target=interp`
// (runtime/program/train/TrainingLoop.h runs it as it runs a generated
// program's compiled step).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_INTERPRETER_INTERPRETERTRAINER_H
#define TGC_CODEGEN_INTERPRETER_INTERPRETERTRAINER_H

#include "codegen/StepSignature.h"
#include "codegen/interpreter/Interpreter.h"
#include "runtime/data/Tasks.h"
#include "runtime/program/train/TrainingLoop.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <memory>
#include <optional>

namespace tgc {

class InterpreterTrainer final : public runtime::StepBackend {
public:
  struct StepResult {
    double loss;
    int64_t tokens;
    double learningRate;
    double gradNorm; ///< the global gradient norm, before clipping
    /// The loss's cross-entropy part where it has other terms.
    std::optional<double> crossEntropy;
  };

  /// Fails with a diagnostic if `module` has no `stepFunction` taking
  /// source_ids, target_in_ids, target_out_ids, dropout_key, lr and step, or
  /// no warmup schedule.
  static mlir::FailureOr<std::unique_ptr<InterpreterTrainer>>
  create(mlir::ModuleOp module, Precision precision, uint32_t seed,
         llvm::StringRef stepFunction = "train_step");

  /// Runs step number stepsDone()+1 on `batch` at the module's schedule's
  /// learning rate.
  mlir::FailureOr<StepResult> step(const runtime::Batch &batch);

  /// The training loop's entry: the step, seed and rate it gives.
  bool runStep(const runtime::Batch &batch, const runtime::StepInput &input,
               runtime::StepOutcome &outcome) override;

  /// Re-runs the step on `batch` and `input` without changing the state:
  /// its first op with a NaN or an infinity in a result, or null.
  mlir::FailureOr<mlir::Operation *>
  firstNonFinite(const runtime::Batch &batch, const runtime::StepInput &input);

  int64_t stepsDone() const { return stepsDone_; }
  runtime::BatchShape batchShape() const { return signature_.shape; }
  const WarmupSchedule &schedule() const { return signature_.schedule; }
  /// The model's AdamW weight decay (0: Adam).
  float defaultWeightDecay() const { return signature_.defaultWeightDecay; }
  /// The step's inputs and the model's defaults.
  const StepSignature &signature() const { return signature_; }
  Interpreter &interpreter() { return interpreter_; }

private:
  InterpreterTrainer(mlir::ModuleOp module, Precision precision, uint32_t seed)
      : interpreter_(module, precision), seed_(seed) {}

  mlir::FailureOr<StepResult> run(const runtime::Batch &batch,
                                  const runtime::StepInput &input);
  /// @train_step's arguments, by their tg.name.
  std::vector<HostTensor> arguments(const runtime::Batch &batch,
                                    const runtime::StepInput &input) const;

  Interpreter interpreter_;
  StepSignature signature_;
  uint32_t seed_;
  int64_t stepsDone_ = 0;
};

} // namespace tgc

#endif // TGC_CODEGEN_INTERPRETER_INTERPRETERTRAINER_H
