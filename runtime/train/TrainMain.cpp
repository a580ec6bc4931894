//===- TrainMain.cpp - main() of every generated training binary ---------===//
//
// Allocates the state and the arena the compiled model asks for, fills the
// parameters from the seed (runtime/Initializers.h, as the interpreter
// does), and runs the step on a built-in task's batches with the warmup
// schedule, logging every --log-every steps.
//
//===----------------------------------------------------------------------===//
#include "runtime/Initializers.h"
#include "runtime/Schedule.h"
#include "runtime/Tasks.h"
#include "runtime/train/CompiledStep.h"
#include "runtime/train/Options.h"
#include "runtime/train/ProgressLog.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>

using namespace tgc;
using namespace tgc::runtime;

namespace {

struct FreeDeleter {
  void operator()(void *p) const { std::free(p); }
};
template <typename T> using Buffer = std::unique_ptr<T[], FreeDeleter>;

/// 64-byte aligned, zero-filled storage for `bytes` bytes.
template <typename T> Buffer<T> allocate(int64_t bytes) {
  size_t rounded = (static_cast<size_t>(bytes) + 63) / 64 * 64;
  void *p = std::aligned_alloc(64, rounded > 0 ? rounded : 64);
  if (!p) {
    std::fprintf(stderr, "error: cannot allocate %lld bytes\n",
                 static_cast<long long>(bytes));
    std::exit(1);
  }
  std::memset(p, 0, rounded);
  return Buffer<T>(static_cast<T *>(p));
}

bool initializeState(const CompiledModel &model, float *state, uint32_t seed) {
  for (int i = 0; i < model.numVariables; ++i) {
    const CompiledVariable &v = model.variables[i];
    std::span<const int64_t> shape(v.shape, static_cast<size_t>(v.rank));
    if (!initializeTensor(state + v.offset, shape,
                          static_cast<InitKind>(v.init), v.initScale, seed,
                          v.name)) {
      std::fprintf(stderr, "error: cannot initialize variable %s\n", v.name);
      return false;
    }
  }
  return true;
}

/// Every variable's values as raw little-endian f32, in declaration order.
bool dumpParameters(const CompiledModel &model, const float *state,
                    const std::string &path) {
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file) {
    std::fprintf(stderr, "error: cannot write %s: %s\n", path.c_str(),
                 std::strerror(errno));
    return false;
  }
  bool ok = true;
  for (int i = 0; i < model.numVariables && ok; ++i) {
    const CompiledVariable &v = model.variables[i];
    ok = std::fwrite(state + v.offset, sizeof(float),
                     static_cast<size_t>(v.size), file) ==
         static_cast<size_t>(v.size);
  }
  ok = std::fclose(file) == 0 && ok;
  if (!ok)
    std::fprintf(stderr, "error: writing %s failed\n", path.c_str());
  return ok;
}

} // namespace

int main(int argc, char **argv) {
  const CompiledModel &model = kCompiledModel;
  TrainOptions parsed;
  int exitCode = 0;
  if (!parseTrainOptions(argc, argv, parsed, exitCode))
    return exitCode;
  const TrainOptions *options = &parsed;
  BatchShape shape{model.batchSize, model.sourceLength, model.targetLength,
                   static_cast<int32_t>(model.vocabulary)};
  if (std::string_view why = validateBatchShape(shape); !why.empty()) {
    std::fprintf(stderr, "error: the model cannot take task '%s': %.*s\n",
                 taskName(options->task), static_cast<int>(why.size()),
                 why.data());
    return 1;
  }

  Buffer<float> state = allocate<float>(model.stateFloats * 4);
  Buffer<char> arena = allocate<char>(model.arenaBytes);
  if (!initializeState(model, state.get(), options->seed))
    return 1;
  std::printf("%s: task %s, batch %lld, seed %u, %lld steps; state %.2f MiB, "
              "arena %lld bytes (%.2f MiB)\n",
              model.name, taskName(options->task),
              static_cast<long long>(model.batchSize), options->seed,
              static_cast<long long>(options->steps),
              model.stateFloats * 4.0 / (1 << 20),
              static_cast<long long>(model.arenaBytes),
              model.arenaBytes / double(1 << 20));

  WarmupSchedule schedule{model.scheduleDModel, model.scheduleWarmup,
                          model.scheduleFactor};
  ProgressLog log(options->steps, options->logEvery);
  if (!options->lossLog.empty() && !log.openLossLog(options->lossLog))
    return 1;
  for (int64_t step = 1; step <= options->steps; ++step) {
    Batch batch = makeBatch(options->task, options->seed,
                            static_cast<uint64_t>(step - 1), shape);
    StepFrame frame{};
    frame.state = state.get();
    frame.arena = arena.get();
    frame.sourceIds = batch.source.data();
    frame.targetInIds = batch.targetIn.data();
    frame.targetOutIds = batch.targetOut.data();
    frame.dropoutKey[0] = static_cast<int32_t>(options->seed);
    frame.dropoutKey[1] = static_cast<int32_t>(step);
    frame.lr = static_cast<float>(schedule.learningRate(step));
    frame.step = static_cast<int32_t>(step);
    model.trainStep(frame);
    log.record(step, frame.loss, frame.lr, frame.tokens);
  }
  log.finish();
  if (!options->dumpParameters.empty() &&
      !dumpParameters(model, state.get(), options->dumpParameters))
    return 1;
  return 0;
}
