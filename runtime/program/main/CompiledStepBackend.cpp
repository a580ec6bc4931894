//===- CompiledStepBackend.cpp - the loop's compiled step -----------------===//
#include "runtime/program/main/CompiledStepBackend.h"

#include <cstdio>

namespace tgc::runtime {
namespace {

/// The bucket `batch` was packed for; null after a message when there is
/// none (a bug: the batcher packs only the model's bucket shapes).
const CompiledBucket *bucketOf(const CompiledModel &model, const Batch &batch) {
  for (int b = 0; b < model.numBuckets; ++b)
    if (model.buckets[b].batchSize == batch.batchSize &&
        model.buckets[b].sourceLength == batch.sourceLength &&
        model.buckets[b].targetLength == batch.targetLength)
      return &model.buckets[b];
  std::fprintf(stderr, "internal error: no bucket of shape %lldx%lldx%lld\n",
               static_cast<long long>(batch.batchSize),
               static_cast<long long>(batch.sourceLength),
               static_cast<long long>(batch.targetLength));
  return nullptr;
}

} // namespace

bool deviceOk(const std::string &when) {
  std::string why;
  if (!deviceFailed || !deviceFailed(why))
    return true;
  std::fprintf(stderr, "error: GPU failure %s: %s\n", when.c_str(),
               why.c_str());
  return false;
}

bool CompiledStepBackend::runStep(const Batch &batch, const StepInput &input,
                                  StepOutcome &outcome) {
  const CompiledBucket *bucket = bucketOf(model, batch);
  if (!bucket)
    return false;
  StepFrame frame = frameOf(batch, input);
  if (profile && profileWhole)
    profile->runWhole(*bucket, frame);
  else if (profile)
    profile->run(*bucket, frame);
  else
    bucket->trainStep(frame);
  if (!deviceOk("in step " + std::to_string(input.step)))
    return false;
  outcome = {frame.loss, frame.tokens, frame.gradNorm};
  if (frame.hasCrossEntropy)
    outcome.crossEntropy = frame.crossEntropy;
  return true;
}

void CompiledStepBackend::explainNonFinite(const Batch &batch,
                                           const StepInput &input) {
  long long step = static_cast<long long>(input.step);
  // A GPU's state is on the device (its optimizer, as the CPU's step, made
  // no update after a non-finite loss or from a non-finite gradient norm).
  if (model.device) {
    model.device->download(memory.state());
    if (!deviceOk("reading the state after step " + std::to_string(step)))
      return;
  }
  if (const char *variable = memory.firstNonFinite()) {
    std::fprintf(stderr,
                 "note: %s already held a NaN or an infinity before step "
                 "%lld: the update of an earlier step (with a finite loss) "
                 "made it so\n",
                 variable, step);
    return;
  }
  const CompiledBucket *bucket = bucketOf(model, batch);
  if (!bucket || !bucket->checkStep)
    return;
  StepFrame frame = frameOf(batch, input);
  frame.allReduceSum = nullptr; // this process's own values, alone
  const char *op = bucket->checkStep(frame);
  if (!deviceOk("re-running step " + std::to_string(step) + " op by op"))
    return;
  if (op)
    std::fprintf(stderr, "note: the first NaN or infinity of step %lld comes "
                         "from %s\n", step, op);
  else if (allReduceSum)
    std::fprintf(stderr, "note: re-running step %lld op by op on this "
                         "process's batch alone gave no NaN or infinity: "
                         "another process's batch made the summed gradient "
                         "so\n", step);
  else
    std::fprintf(stderr, "note: re-running step %lld op by op gave no NaN "
                         "or infinity\n", step);
}

StepFrame CompiledStepBackend::frameOf(const Batch &batch,
                                       const StepInput &input) {
  StepFrame frame{};
  frame.state = memory.state();
  frame.arena = memory.arena();
  frame.sourceIds = batch.source.data();
  frame.targetInIds = batch.targetIn.data();
  frame.targetOutIds = batch.targetOut.data();
  frame.dropoutKey[0] = static_cast<int32_t>(input.seed);
  frame.dropoutKey[1] = static_cast<int32_t>(input.dropoutStep);
  frame.lr = input.lr;
  frame.step = static_cast<int32_t>(input.step);
  frame.gradWeight = input.gradWeight;
  frame.updatePhase = input.updatePhase;
  frame.clipNorm = input.clipNorm;
  frame.weightDecay = input.weightDecay;
  const StepHyperparameters &h = input.hyper;
  frame.labelSmoothing = h.labelSmoothing.value_or(model.labelSmoothing.value);
  frame.adamBeta1 = h.adamBeta1.value_or(model.adamBeta1.value);
  frame.adamBeta2 = h.adamBeta2.value_or(model.adamBeta2.value);
  frame.adamEps = h.adamEps.value_or(model.adamEps.value);
  frame.dropout = h.dropout.value_or(model.dropout.value);
  frame.attentionDropout =
      h.attentionDropout.value_or(model.attentionDropout.value);
  frame.allReduceSum = allReduceSum;
  frame.optimizerStep = optimizerStep;
  frame.firstExample = input.firstExample;
  frame.batchTokens = static_cast<float>(batch.targetTokens());
  frame.cudaGraphs = cudaGraphs;
  // The CPU's gradient accumulator, for the first accumulating step (a
  // GPU program keeps its own on the device, a sharded optimizer one of its
  // share).
  if (input.updatePhase != 0 && accumulator.empty() && !model.device &&
      !optimizerStep)
    accumulator.assign(static_cast<size_t>(model.gradientFloats), 0.0f);
  frame.gradAccumulator = accumulator.empty() ? nullptr : accumulator.data();
  return frame;
}

} // namespace tgc::runtime
