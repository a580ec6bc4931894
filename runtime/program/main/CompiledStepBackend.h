//===- CompiledStepBackend.h - the loop's compiled step ---------*- C++ -*-===//
//
// The training loop (train/TrainingLoop.h) runs whatever StepBackend it is
// given; a generated program gives it this one: the compiled step of the
// bucket each batch was packed for, on the program's state and arena. Here
// too the check that a GPU model's device has not failed, which every phase
// of a run asks before it uses what the device computed.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_PROGRAM_COMPILEDSTEPBACKEND_H
#define TGC_RUNTIME_PROGRAM_COMPILEDSTEPBACKEND_H

#include "runtime/program/CompiledStep.h"
#include "runtime/program/main/StepProfile.h"
#include "runtime/program/train/ModelState.h"
#include "runtime/program/train/TrainingLoop.h"

#include <string>
#include <vector>

namespace tgc::runtime {

/// False after "error: GPU failure <when>: <the first CUDA error>" once a
/// GPU model's device has failed (deviceFailed); always true on the CPU.
/// Asked before anything the device computed is used or saved.
bool deviceOk(const std::string &when);

/// The compiled step of the bucket each batch was packed for.
struct CompiledStepBackend final : StepBackend {
  const CompiledModel &model;
  ModelState &memory;
  /// --profile: steps run through it, op by op with the clock; with
  /// `profileWhole` (a GPU program's --cuda-graphs) as usual, recorded whole.
  StepProfile *profile = nullptr;
  bool profileWhole = false;
  /// Data-parallel runs: what the step's gradients and tokens are summed
  /// with, and the sharded optimizer that sums and applies them.
  decltype(StepFrame::allReduceSum) allReduceSum = nullptr;
  decltype(StepFrame::optimizerStep) optimizerStep = nullptr;
  /// --cuda-graphs (a GPU program): StepFrame::cudaGraphs.
  bool cudaGraphs = false;

  CompiledStepBackend(const CompiledModel &model, ModelState &memory)
      : model(model), memory(memory) {}

  bool runStep(const Batch &batch, const StepInput &input,
               StepOutcome &outcome) override;

  /// After a non-finite loss (the step skipped Adam): names the first op of
  /// the step that produced a NaN or an infinity, re-running it on the same
  /// batch and state op by op, or the parameter that an earlier update
  /// already made non-finite.
  void explainNonFinite(const Batch &batch, const StepInput &input);

  StepFrame frameOf(const Batch &batch, const StepInput &input);

  std::vector<float> accumulator;
};

} // namespace tgc::runtime

#endif // TGC_RUNTIME_PROGRAM_COMPILEDSTEPBACKEND_H
