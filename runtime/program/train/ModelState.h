//===- ModelState.h - a compiled model's memory -----------------*- C++ -*-===//
//
// The state buffer (every variable: parameters, then Adam's moments, as
// CompiledVariable::offset says) and the arena the step and predict share,
// both 64-byte aligned (2 MiB and on huge pages when that large); how to
// fill the state from a seed, save it, restore it and dump it.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_TRAIN_MODELSTATE_H
#define TGC_RUNTIME_TRAIN_MODELSTATE_H

#include "runtime/program/CompiledStep.h"
#include "runtime/program/checkpoint/Checkpoint.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tgc::runtime {

class ModelState {
public:
  /// The zero-filled state and arena `model` asks for; null after a message
  /// when the machine has too little memory.
  static std::unique_ptr<ModelState> allocate(const CompiledModel &model);

  float *state() { return stateBuffer.get(); }
  char *arena() { return arenaBuffer.get(); }

  /// Fills every variable per its initializer; false after a message.
  bool initialize(uint32_t seed);

  /// Every variable, by its name, for checkpoints.
  std::vector<CheckpointTensor> tensors();

  /// The shapes, optimizer and schedule a checkpoint records as its config.
  std::string configText() const;

  /// The first variable holding a NaN or an infinity, or null: a state
  /// that is not finite is never saved, nor resumed from.
  const char *firstNonFinite();

  /// The first trainable parameter with a value beyond +-`bound` (that
  /// value in `value`), or null: a diverged state is not saved
  /// (Divergence.h).
  const char *firstBeyond(float bound, float &value);

  /// Every variable's values as raw little-endian f32, in declaration order,
  /// written whole or not at all (AtomicFile); false after a message.
  bool dumpParameters(const std::string &path);

private:
  /// The first variable (of the trainable ones, with `trainableOnly`)
  /// holding a value `bad` is true of, and that value; null when none.
  template <typename Bad>
  const char *firstVariableWhere(bool trainableOnly, Bad bad, float &value);

  struct FreeDeleter {
    void operator()(void *p) const { std::free(p); }
  };
  using StateBuffer = std::unique_ptr<float[], FreeDeleter>;
  using ArenaBuffer = std::unique_ptr<char[], FreeDeleter>;

  ModelState(const CompiledModel &model, StateBuffer state, ArenaBuffer arena)
      : model(model), stateBuffer(std::move(state)),
        arenaBuffer(std::move(arena)) {}

  const CompiledModel &model;
  StateBuffer stateBuffer;
  ArenaBuffer arenaBuffer;
};

} // namespace tgc::runtime

#endif // TGC_RUNTIME_TRAIN_MODELSTATE_H
