//===- CompiledStep.h - what generated code gives the runtime ---*- C++ -*-===//
//
// The contract between a training step that `tgc --emit=cpp` generated and
// the runtime that drives it (TrainMain.cpp). The generated file defines
// `tgc::runtime::kCompiledModel`; everything the runtime needs to allocate,
// initialize, batch and schedule comes from it, so one runtime serves every
// model.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_TRAIN_COMPILEDSTEP_H
#define TGC_RUNTIME_TRAIN_COMPILEDSTEP_H

#include <cstdint>
#include <string>

namespace tgc::runtime {

/// One tg.variable: where it lives in the state buffer and how to fill it.
struct CompiledVariable {
  const char *name;
  int rank;
  int64_t shape[8];
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
  float loss;   ///< out: the label-smoothed loss per target token
  int32_t tokens; ///< out: the target tokens counted
  /// out of predict: [batch, targetLength, vocabulary] logits, in the arena
  /// (valid until the next call).
  const float *logits;
};

/// How the runtime reaches a model that runs on a GPU; null for the CPU.
/// The state lives on the device: the runtime's host copy is uploaded after
/// initialization or a resume and downloaded before a checkpoint or a dump,
/// so checkpoints are the same files on both.
struct DeviceHooks {
  /// Selects the device and allocates; false with the reason (no GPU).
  bool (*open)(std::string &why);
  void (*upload)(const float *state);
  void (*download)(float *state);
};

/// One static shape the model was compiled for (`tgc --buckets`); every
/// bucket reads and writes the same state and arena.
struct CompiledBucket {
  int64_t batchSize, sourceLength, targetLength;
  void (*trainStep)(StepFrame &frame);
  /// Inference without dropout: reads sourceIds and targetInIds, sets
  /// logits. nullptr when the module has no @predict.
  void (*predict)(StepFrame &frame);
};

struct CompiledModel {
  const char *name; ///< the module's name, e.g. "transformer-tiny"
  int64_t vocabulary;
  /// FNV-1a of the SentencePiece model it was compiled for; 0: any.
  uint64_t vocabularyHash;
  /// The warmup schedule of the module's tg.schedule.
  int64_t scheduleDModel, scheduleWarmup;
  double scheduleFactor;
  const CompiledVariable *variables;
  int numVariables;
  int64_t stateFloats;
  int64_t arenaBytes; ///< shared by every bucket's step and predict
  /// In the order tgc was given them; the last is the largest.
  const CompiledBucket *buckets;
  int numBuckets;
  const DeviceHooks *device;
};

extern const CompiledModel kCompiledModel;

} // namespace tgc::runtime

#endif // TGC_RUNTIME_TRAIN_COMPILEDSTEP_H
