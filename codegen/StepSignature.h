//===- StepSignature.h - what a compiled training step takes ---*- C++ -*-===//
//
// tg-training-pipeline makes @train_step(source_ids, target_in_ids,
// target_out_ids, dropout_key, lr, step, grad_weight, update_phase,
// clip_norm, weight_decay) -> (loss, tokens, grad_norm), arguments named
// by `tg.name`, and the module carries its schedule (`tg.schedule`). Every
// backend that runs the step (the interpreter's trainer, the C++ emitter)
// reads both through here.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_STEPSIGNATURE_H
#define TGC_CODEGEN_STEPSIGNATURE_H

#include "common/Schedule.h"
#include "runtime/data/Tasks.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace tgc {

struct StepSignature {
  mlir::func::FuncOp function;
  WarmupSchedule schedule;
  runtime::BatchShape shape{};
  /// Argument positions; `key` is -1 when the step has no dropout.
  int source = -1, targetIn = -1, targetOut = -1, key = -1, lr = -1, step = -1;
  /// The optimizer step's controls (tg.multi_adam_update).
  int gradWeight = -1, updatePhase = -1, clipNorm = -1;
  /// AdamW's weight decay: its argument (-1: the step has none, Adam) and
  /// the model's default (tg.optimizer's weight_decay, else 0).
  int weightDecay = -1;
  float defaultWeightDecay = 0.0f;
};

/// Fails with a diagnostic when `module` has no `stepFunction` with those
/// arguments, no cross-entropy loss, or no usable warmup schedule.
mlir::FailureOr<StepSignature>
readStepSignature(mlir::ModuleOp module,
                  llvm::StringRef stepFunction = "train_step");

} // namespace tgc

#endif // TGC_CODEGEN_STEPSIGNATURE_H
