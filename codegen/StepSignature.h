//===- StepSignature.h - what a compiled training step takes ---*- C++ -*-===//
//
// tg-training-pipeline makes @train_step(source_ids, target_in_ids,
// target_out_ids, dropout_key, lr, step, grad_weight, update_phase,
// clip_norm, weight_decay) -> (loss, tokens[, cross_entropy], grad_norm),
// arguments and the named results by `tg.name`, and the module carries its
// schedule (`tg.schedule`). Every backend that runs the step (the
// interpreter's trainer, the C++ emitter) reads both through here.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_STEPSIGNATURE_H
#define TGC_CODEGEN_STEPSIGNATURE_H

#include "common/Schedule.h"
#include "runtime/data/Tasks.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace tgc {

/// The step's result positions after the loss (#0); -1 where absent.
struct StepResults {
  /// The target tokens: the one result without a name.
  int tokens = -1;
  /// The cross-entropy part of a loss with extra terms (tg-split-loss).
  int crossEntropy = -1;
  /// The gradient norm (tg-adam), the last result.
  int gradNorm = -1;
};

/// Fails with a diagnostic unless `function` returns (loss[, tokens][,
/// cross_entropy][, grad_norm]).
mlir::FailureOr<StepResults> readStepResults(mlir::func::FuncOp function);

struct StepSignature {
  mlir::func::FuncOp function;
  WarmupSchedule schedule;
  runtime::BatchShape shape{};
  /// Argument positions; `key` is -1 when the step has no dropout and
  /// `source` when the model is a language model (shape.sourceLength 0).
  int source = -1, targetIn = -1, targetOut = -1, key = -1, lr = -1, step = -1;
  /// The optimizer step's controls (tg.multi_adam_update).
  int gradWeight = -1, updatePhase = -1, clipNorm = -1;
  StepResults results;
  /// AdamW's weight decay: its argument (-1: the step has none, Adam) and
  /// the model's default (tg.optimizer's weight_decay, else 0).
  int weightDecay = -1;
  float defaultWeightDecay = 0.0f;
  /// Adam's run-time betas and epsilon (-1: compiled in) and the model's
  /// values (the update's attributes).
  int adamBeta1 = -1, adamBeta2 = -1, adamEps = -1;
  float defaultAdamBeta1 = 0.9f, defaultAdamBeta2 = 0.98f,
        defaultAdamEps = 1e-9f;
  /// The loss's run-time label smoothing (-1: none) and its compiled value.
  int labelSmoothing = -1;
  float defaultLabelSmoothing = 0.0f;
  /// The run-time dropout rates (-1: the step has no such dropout) and the
  /// model's compiled ones.
  int dropout = -1, attentionDropout = -1;
  float defaultDropout = 0.0f, defaultAttentionDropout = 0.0f;
  /// Sites of a dropout (or of label smoothing) at different compiled
  /// values, which tg-adam gave no run-time input (tg.mixed_rates): a run
  /// cannot set them.
  bool mixedDropout = false, mixedAttentionDropout = false,
       mixedLabelSmoothing = false;
};

/// Fails with a diagnostic when `module` has no `stepFunction` with those
/// arguments and results, no cross-entropy loss, or no usable warmup
/// schedule.
mlir::FailureOr<StepSignature>
readStepSignature(mlir::ModuleOp module,
                  llvm::StringRef stepFunction = "train_step");

} // namespace tgc

#endif // TGC_CODEGEN_STEPSIGNATURE_H
