//===- CompiledStep.h - what generated code gives the runtime ---*- C++ -*-===//
//
// The contract between a training step that `tgc --emit=cpp` generated and
// the runtime that drives it (main/). The generated file defines
// `tgc::runtime::kCompiledModel`; everything the runtime needs to allocate,
// initialize, batch and schedule comes from it, so one runtime serves every
// model.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_TRAIN_COMPILEDSTEP_H
#define TGC_RUNTIME_TRAIN_COMPILEDSTEP_H

#include "runtime/kernels/KernelTypes.h"

#include <cmath>
#include <cstdint>
#include <string>

namespace tgc::runtime {

/// One tg.variable: where it lives in the state buffer and how to fill it.
struct CompiledVariable {
  const char *name;
  int rank;
  int64_t shape[kMaxRank];
  int64_t size;   ///< elements
  int64_t offset; ///< in floats, from the state buffer's start
  int32_t init;   ///< runtime::InitKind
  double initScale;
  bool trainable;
};

/// What one call of the step (or of predict) reads and writes.
struct StepFrame {
  float *state; ///< every variable, packed (CompiledVariable::offset)
  char *arena;  ///< intermediates, CompiledModel::arenaBytes
  const int32_t *sourceIds, *targetInIds, *targetOutIds; ///< [batch, length]
  int32_t dropoutKey[2]; ///< (seed, step)
  float lr;
  int32_t step; ///< >= 1
  /// The optimizer step's controls (runtime/kernels/KernelTypes.h): the
  /// gradient's weight, the accumulation phase, the clipping norm (<= 0:
  /// none).
  float gradWeight = 1.0f;
  int32_t updatePhase = 0;
  float clipNorm = 0.0f;
  /// AdamW's weight decay on the parameters that decay (0: Adam).
  float weightDecay = 0.0f;
  /// The run-time hyperparameters the step reads where it takes them
  /// (CompiledModel's, which are their defaults).
  float labelSmoothing = 0.0f;
  float adamBeta1 = 0.9f, adamBeta2 = 0.98f, adamEps = 1e-9f;
  float dropout = 0.0f, attentionDropout = 0.0f;
  /// CPU: CompiledModel::gradientFloats floats for the accumulating phases,
  /// the runtime's (null while it does not accumulate).
  float *gradAccumulator = nullptr;
  /// Data-parallel runs (runtime/program/parallel/ProcessGroup.h): the step
  /// calls it between its backward and the optimizer step on its gradient
  /// region, `count` floats at `data` (device memory on a GPU) whose last
  /// float is the token count slot. It multiplies this process's gradients
  /// (per-token means of its batch) by batchTokens and sets the slot to
  /// batchTokens, then sums all `count` floats over every process in one
  /// call, in place: the gradients become the global batch's per-token loss
  /// sums and the slot its target tokens G, by which it divides gradWeight.
  /// Null in one process: no call.
  void (*allReduceSum)(StepFrame &f, float *data, int64_t count) = nullptr;
  /// This process's target tokens in the batch (those the loss counts).
  float batchTokens = 0.0f;
  /// CUDA: replay the step's ops as one CUDA graph (--cuda-graphs;
  /// runtime/program/cuda/StepGraphs.h). The CPU ignores it.
  bool cudaGraphs = false;
  /// Data-parallel runs with a sharded optimizer (CPU; ShardedOptimizer.h):
  /// the optimizer step in place of the kernels' `plain` one, which it is
  /// given to run Adam on its share. Null: the plain step.
  using OptimizerStepFn = float (*)(const AdamTensor *tensors, int count,
                                    const OptimizerControl &control, float lr,
                                    int32_t step, float beta1, float beta2,
                                    float epsilon);
  float (*optimizerStep)(OptimizerStepFn plain, const AdamTensor *tensors,
                         int count, const OptimizerControl &control, float lr,
                         int32_t step, float beta1, float beta2,
                         float epsilon) = nullptr;
  /// The index of the batch's first row in the global batch of a
  /// data-parallel run (0 in one process): dropout masks are keyed by the
  /// global example, not by the row in this process's share.
  int64_t firstExample = 0;
  /// out: the loss, the label-smoothed cross-entropy per target token plus
  /// any extra terms the model adds to it
  float loss;
  int32_t tokens; ///< out: the target tokens counted
  /// out, only where the loss has extra terms (an L2 penalty, an auxiliary
  /// loss; tg-split-loss): its cross-entropy part per target token, and
  /// hasCrossEntropy set. The loss minus it is the other terms.
  float crossEntropy;
  bool hasCrossEntropy;
  /// out: the global gradient norm (before clipping) of the update, or of
  /// the accumulated gradient in an accumulating phase.
  float gradNorm;
  /// out of predict: [batch, targetLength, vocabulary] logits; of
  /// decodeStep: [batch, 1, vocabulary]. In the arena (valid until the next
  /// call).
  const float *logits;
  /// The bucket's decoding caches (CompiledBucket::cacheFloats): encode
  /// fills them, decodeStep reads them and appends to them.
  float *cache;
  /// decodeStep: the target position whose ids are in targetInIds [batch, 1].
  int32_t position;
};

/// One decoding cache of a bucket (a `tg.variable cache`), in
/// StepFrame::cache. Its first dimension is the batch.
struct CompiledCache {
  const char *name;
  int64_t offset; ///< in floats, from the cache buffer's start
  int64_t size;   ///< elements
  /// Appended to per position (self-attention keys and values): its rows
  /// follow their hypotheses when beam search reorders them. The others
  /// (the encoder's) are the same for every hypothesis of a sentence.
  bool perHypothesis;
};

/// One op of a training step, for --profile.
struct StepOp {
  const char *kind; ///< "tg.matmul"
  const char *what; ///< "tg.matmul at models/Transformer.cpp:130:33"
  /// Its tensor operands' and results' bytes, each counted once (a lower
  /// bound of its memory traffic), and its products' floating-point
  /// operations (0 for an op without; codegen/lowering/StepOpCost.h).
  int64_t bytes = 0, flops = 0;
};

/// f32 values of a CPU step's arena that its check tests: `count` floats
/// from byte `offset`.
struct ArenaFloats {
  int64_t offset, count;
};

/// One call of a CPU training step, in order: the generated trainStep's
/// calls as data, which checkStepCalls and profileStepCalls run (one loop
/// each in the runtime, not two more copies of the step to compile in every
/// program).
struct StepCall {
  void (*run)(StepFrame &frame);
  /// "tg.OP at file:line:col" when it has f32 results, checked after it:
  /// results[firstResult, firstResult + numResults) of the step's table.
  const char *what = nullptr;
  int firstResult = 0, numResults = 0;
  /// The optimizer: runs only where mayUpdateState says, and the check,
  /// which re-runs a step whose update was skipped, leaves it out.
  bool updatesState = false;
  /// tg.beside_next: runs at once with the next call (kernels::sideBySide),
  /// with this share of the pair's multiply-adds; 0 for a call alone.
  double shareBesideNext = 0.0;
};

/// A CPU step's calls, the arena floats its check tests, and whether its
/// optimizer may run (a finite loss, or a sharded optimizer's collectives).
struct StepCalls {
  const StepCall *calls;
  int numCalls;
  const ArenaFloats *results;
  bool (*mayUpdateState)(StepFrame &frame);
};

/// The step's calls without the optimizer's, each one's f32 results checked
/// after it: the `what` of the first call that produced a NaN or an
/// infinity, or nullptr (a CPU bucket's checkStep).
const char *checkStepCalls(const StepCalls &step, StepFrame &frame);

/// The step's calls as trainStep makes them, the time of call i added to
/// seconds[i], a pair's time shared by its multiply-adds (a CPU bucket's
/// profileStep).
void profileStepCalls(const StepCalls &step, StepFrame &frame,
                      double *seconds);

/// How the runtime reaches a model that runs on a GPU; null for the CPU.
/// The state lives on the device: the runtime's host copy is uploaded after
/// initialization or a resume and downloaded before a checkpoint or a dump,
/// so checkpoints are the same files on both.
struct CompiledBucket;
class KernelTimes;
struct DeviceHooks {
  /// Selects the device and allocates; false with the reason (no GPU).
  bool (*open)(std::string &why);
  void (*upload)(const float *state);
  void (*download)(float *state);
  /// Beam search: row r of the bucket's per-hypothesis caches (on the
  /// device, not in StepFrame::cache) becomes row parents[r].
  void (*reorderCaches)(const CompiledBucket &bucket, const int64_t *parents);
  /// Data-parallel runs: StepFrame::allReduceSum for device memory (NCCL);
  /// null where the program was built without it.
  void (*allReduceSum)(StepFrame &f, float *data, int64_t count) = nullptr;
  /// --fused-attention: cuda::setFusedAttention, for every attention call
  /// of the process (training, validation, decoding).
  void (*setFusedAttention)(bool on) = nullptr;
  /// --profile: records the device's work of every step run through
  /// profileStep into `sink` (CUPTI: runtime/program/cuda/KernelProfile.h);
  /// false with the reason when it cannot.
  bool (*startProfile)(KernelTimes *sink, std::string &why) = nullptr;
  /// Around a step run as usual (--profile with --cuda-graphs: replayed),
  /// whose device work is recorded whole, no op's time (seconds null).
  void (*beginProfiledStep)(double *seconds) = nullptr;
  void (*endProfiledStep)() = nullptr;
};

/// Whether a GPU model's device has failed: true with `why` (the first CUDA
/// or cuBLAS error, "file:line: CUDA error NAME: message"). The hooks, the
/// steps and predict do not stop the program on an error: they keep the
/// first one and go on, computing garbage, and the program shell asks after
/// each step, translation and download, and ends with the message before
/// it uses anything the device computed. Set by the device's open hook
/// (cuda::openDevice, which every generated CUDA file calls); null on the
/// CPU, where nothing fails this way.
inline bool (*deviceFailed)(std::string &why) = nullptr;

/// One static shape the model was compiled for (`tgc --buckets`); every
/// bucket reads and writes the same state and arena.
struct CompiledBucket {
  int64_t batchSize, sourceLength, targetLength;
  void (*trainStep)(StepFrame &frame);
  /// Inference without dropout: reads sourceIds and targetInIds, sets
  /// logits. nullptr when the module has no @predict.
  void (*predict)(StepFrame &frame);
  /// The incremental decoder (tg-derive-decoder); nullptr without one (an
  /// unfused build decodes with predict). encode reads sourceIds and fills
  /// the cache; decodeStep reads targetInIds [batch, 1] and position, sets
  /// logits. A GPU model keeps the caches on the device.
  void (*encode)(StepFrame &frame);
  void (*decodeStep)(StepFrame &frame);
  const CompiledCache *caches;
  int numCaches;
  int64_t cacheFloats;
  /// The step's ops without Adam, each result checked: "tg.OP at
  /// file:line:col" of the first op that produced a NaN or an infinity, or
  /// nullptr. The step itself skips Adam after a non-finite loss or
  /// gradient norm, so the runtime can re-run a diverged step with this on
  /// the same batch and state (on CUDA each result is checked on the
  /// device: cuda::allFinite).
  const char *(*checkStep)(StepFrame &frame);
  /// trainStep adding the time of op i to seconds[i] (--profile), and
  /// the ops in order. On CUDA the ops run one by one (no CUDA graph), and
  /// an op's time is its kernels' (DeviceHooks::startProfile).
  void (*profileStep)(StepFrame &frame, double *seconds);
  const StepOp *stepOps;
  int numStepOps;
};

/// Whether `values` holds no NaN and no infinity (checkStepCalls).
inline bool allFinite(const float *values, int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    if (!std::isfinite(values[i]))
      return false;
  return true;
}

struct CompiledModel {
  const char *name; ///< the module's name, e.g. "transformer-tiny"
  int64_t vocabulary;
  /// FNV-1a of the SentencePiece model it was compiled for; 0: any.
  uint64_t vocabularyHash;
  /// The warmup schedule of the module's tg.schedule: the paper's from
  /// d_model, warmup and factor, or after the warmup another shape
  /// (scheduleKind: tgc::LrScheduler's value) from a peak to a minimum.
  int64_t scheduleDModel, scheduleWarmup;
  double scheduleFactor;
  int scheduleKind;
  double schedulePeak, scheduleMinimum;
  /// AdamW's weight decay the model declares (--weight-decay overrides).
  float weightDecay;
  /// A hyperparameter the step reads at run time: whether its step takes
  /// it (a model compiled without dropout has no dropout to set), the
  /// model's compiled value, the default, and whether the model has sites
  /// of it at different compiled values (then it is not taken, and no flag
  /// may pretend to set it).
  struct Hyperparameter {
    bool taken;
    float value;
    bool mixed;
  };
  /// --label-smoothing, --adam-betas, --adam-eps, --dropout and
  /// --attention-dropout override them.
  Hyperparameter labelSmoothing, adamBeta1, adamBeta2, adamEps, dropout,
      attentionDropout;
  const CompiledVariable *variables;
  int numVariables;
  int64_t stateFloats;
  /// The trainable variables' elements (StepFrame::gradAccumulator).
  int64_t gradientFloats;
  int64_t arenaBytes; ///< shared by every bucket's step and predict
  /// In the order tgc was given them; the last is the largest.
  const CompiledBucket *buckets;
  int numBuckets;
  const DeviceHooks *device;
  /// What made the program: tgc's version and source revision, the model,
  /// its config, buckets, the generated code's hash, the compiler and its
  /// flags (tools/driver/Manifest.h), one fact a line. --version prints it;
  /// checkpoints record it, and --resume compares.
  const char *manifest;
  /// Where the tgc that compiled the program keeps its tools: the program
  /// runs the tgc-data there for SentencePiece (VocabularyTool.h).
  const char *toolsDirectory;
};

extern const CompiledModel kCompiledModel;

} // namespace tgc::runtime

#endif // TGC_RUNTIME_TRAIN_COMPILEDSTEP_H
