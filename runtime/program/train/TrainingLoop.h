//===- TrainingLoop.h - the one training loop -------------------*- C++ -*-===//
//
// Both ways tgc trains run this loop: a generated program (its compiled
// step, main/CompiledStepBackend.h) and `tgc --emit=train --target=interp`
// (the reference interpreter, codegen/interpreter/InterpreterTrainer.h).
// What differs is behind StepBackend; the batches, the warmup schedule, the dropout key,
// the log (ProgressLog.h), the limits (--max-epochs, --max-time), Ctrl-C
// and the hooks for validation and checkpoints are the loop's.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_PROGRAM_TRAININGLOOP_H
#define TGC_RUNTIME_PROGRAM_TRAININGLOOP_H

#include "common/Schedule.h"
#include "runtime/data/Tasks.h"
#include "runtime/program/parallel/ProcessGroup.h"
#include "runtime/program/train/Metrics.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace tgc::runtime {

/// The step's run-time hyperparameters besides lr and the optimizer's
/// controls (ir/TgOptimizerOps.td, tg.cross_entropy); unset: the model's
/// compiled value.
struct StepHyperparameters {
  std::optional<float> labelSmoothing, adamBeta1, adamBeta2, adamEps;
  std::optional<float> dropout, attentionDropout;
};

/// What one step is given besides its batch.
struct StepInput {
  uint32_t seed;  ///< dropout key (seed, dropoutStep)
  int64_t step;   ///< the update's number, >= 1 (Adam's bias correction)
  float lr;       ///< of the model's warmup schedule at `step`
  /// The batch's number from 1: `step` unless updates are accumulated over
  /// several batches (--update-freq), each of which gets its own dropout.
  int64_t dropoutStep;
  /// The optimizer step's controls (runtime/kernels/KernelTypes.h): the
  /// batch's share of the update's target tokens (1 for one batch; in a
  /// data-parallel run counted over every process, and the step divides it
  /// by the batch's global tokens: StepFrame::allReduceSum), the
  /// accumulation phase, the clipping norm.
  float gradWeight = 1.0f;
  int32_t updatePhase = 0;
  float clipNorm = 0.0f;
  float weightDecay = 0.0f; ///< AdamW's (0: Adam)
  StepHyperparameters hyper; ///< unset: the model's
  /// The batch's first row in the global batch (data-parallel runs; 0 in
  /// one process): its dropout masks are keyed by the global example.
  int64_t firstExample = 0;
};

/// What one step reports.
struct StepOutcome {
  float loss = 0;     ///< see StepFrame::loss
  int32_t tokens = 0; ///< target tokens counted
  float gradNorm = 0; ///< see StepFrame::gradNorm
  /// The loss's cross-entropy part where it has other terms (see
  /// StepFrame::crossEntropy); none otherwise.
  std::optional<float> crossEntropy;
};

/// Runs one training step (forward, loss, gradients, and the optimizer step
/// its input asks for) in place on the backend's parameters.
class StepBackend {
public:
  virtual ~StepBackend() = default;
  /// False after a message on stderr (no compiled bucket of the batch's
  /// shape, a failed GPU, an interpreter error); nothing it computed may
  /// then be used or saved.
  virtual bool runStep(const Batch &batch, const StepInput &input,
                       StepOutcome &outcome) = 0;
};

/// What happens after a step.
enum class AfterStep {
  Continue,
  Stop, ///< end the run early, successfully (early stopping)
  Fail, ///< end the run with exit code 1 (a message was printed)
  /// As Fail, once the step's state is saved (onInterrupt): what failed was
  /// a record (a log or metrics file), not the training.
  FailAfterSaving,
};

struct TrainingLoop {
  StepBackend &backend;
  /// Batch number `index` (0-based: (step - 1) * updateFreq + k) of the
  /// run seeded `seed`; in a data-parallel run, this process's share of
  /// the global batch `index`.
  std::function<Batch(uint32_t seed, uint64_t index)> batch;
  /// The processes of a data-parallel run (null: one process). Each step
  /// sums its gradients with the batch's target tokens (StepFrame::
  /// allReduceSum; with updateFreq > 1 the loop first sums the update's
  /// token counts); the loop sums the loss, tokens and padding after it,
  /// and the processes agree on interrupts, early stops and failures, so
  /// all stop at the same step.
  ProcessGroup *group = nullptr;
  WarmupSchedule schedule;
  uint32_t seed = 1;
  int64_t firstStep = 1, lastStep = 1, logEvery = 1;
  /// Batches per update (--update-freq): their gradients, weighted by
  /// their target tokens, make one update, as one batch as large would.
  int64_t updateFreq = 1;
  /// Global gradient-norm clipping (--clip-norm); 0: none.
  float clipNorm = 0.0f;
  /// AdamW's weight decay (--weight-decay or the model's); 0: Adam.
  float weightDecay = 0.0f;
  /// --label-smoothing, --adam-betas, --adam-eps, --dropout,
  /// --attention-dropout; unset: the model's.
  StepHyperparameters hyper;
  /// Also "step loss tokens" per step to this file (ProgressLog.h).
  std::string lossLog;
  /// Also each log line as a record (null: none).
  MetricsFile *metrics = nullptr;
  /// After every update whose loss is finite, before any hook that may
  /// save: the update's loss per target token (a run watches it, so as not
  /// to save a state that diverged: Divergence.h).
  std::function<void(float loss)> onLoss;
  /// Passes over the training data once the loop's first `batches` batches
  /// are done (2.5: half of the third pass); null: data without epochs (a
  /// task). Shown in the log; --max-epochs goes by it.
  std::function<double(uint64_t batches)> epochs;
  /// Stop after the step that completes this many passes (--max-epochs;
  /// 0: no limit). Needs `epochs`.
  int64_t maxEpochs = 0;
  /// Stop after the step that ends this many seconds after the loop began
  /// (--max-time; 0: no limit). A group stops when any process's time is up.
  double maxSeconds = 0;
  /// After every step that was not interrupted and whose loss is finite
  /// (validation, periodic checkpoints, early stopping). `last`: the run
  /// ends after it (its steps, epochs or time are done).
  std::function<AfterStep(int64_t step, bool last)> afterStep;
  /// Whether rank 0's afterStep may run long at `step` (it validates or
  /// saves): the other processes then wait for its verdict for as long as
  /// it shows progress (ProcessGroup::beginFirstsWork). Null: never.
  std::function<bool(int64_t step, bool last)> afterStepRunsLong;
  /// After a step whose loss is NaN or infinite, once the loop has said so:
  /// finds out where it came from, given that step's batch and input
  /// (nothing is saved after such a step).
  std::function<void(const Batch &batch, const StepInput &input)> onNonFinite;
  /// After the step during which SIGINT or SIGTERM arrived, or whose log
  /// line or record could not be written (AfterStep::FailAfterSaving): saves
  /// what can be resumed and returns how ("; continue with --resume F"), or
  /// "" when nothing was saved. Every process of a group calls it. Null:
  /// nothing to save.
  std::function<std::string(int64_t step)> onInterrupt;
};

/// Trains steps firstStep..lastStep. Returns 0 when they all ran, a limit
/// (maxEpochs, maxSeconds) ended the run or afterStep stopped early, 1 after
/// an error message (a non-finite loss included), or 128 + the signal when
/// interrupted.
int runTrainingLoop(const TrainingLoop &loop);

} // namespace tgc::runtime

#endif // TGC_RUNTIME_PROGRAM_TRAININGLOOP_H
