//===- Translate.cpp - greedy decoding with the compiled @predict --------===//
#include "runtime/train/Translate.h"

#include <algorithm>

namespace tgc::runtime {

std::vector<std::vector<int32_t>>
translateGreedy(const CompiledModel &model, float *state, char *arena,
                std::span<const SentencePair> pairs) {
  BatchShape shape{model.batchSize, model.sourceLength, model.targetLength,
                   static_cast<int32_t>(model.vocabulary)};
  std::vector<std::vector<int32_t>> outputs(pairs.size());
  for (size_t first = 0; first < pairs.size(); first += model.batchSize) {
    size_t rows = std::min<size_t>(model.batchSize, pairs.size() - first);
    // Sources only: the targets are what we are about to produce.
    std::vector<SentencePair> sources(rows);
    for (size_t r = 0; r < rows; ++r)
      sources[r].source = pairs[first + r].source;
    Batch batch = packBatch(sources, shape);
    std::vector<bool> done(rows, false);
    for (int64_t t = 0; t < model.targetLength; ++t) {
      StepFrame frame{};
      frame.state = state;
      frame.arena = arena;
      frame.sourceIds = batch.source.data();
      frame.targetInIds = batch.targetIn.data();
      model.predict(frame);
      bool all = true;
      for (size_t r = 0; r < rows; ++r) {
        if (done[r])
          continue;
        const float *logits =
            frame.logits + (r * model.targetLength + t) * model.vocabulary;
        int32_t best = kEosId;
        for (int32_t id = kEosId; id < model.vocabulary; ++id)
          if (logits[id] > logits[best])
            best = id;
        if (best == kEosId) {
          done[r] = true;
          continue;
        }
        outputs[first + r].push_back(best);
        if (t + 1 < model.targetLength)
          batch.targetIn[r * model.targetLength + t + 1] = best;
        all = false;
      }
      if (all)
        break;
    }
  }
  return outputs;
}

} // namespace tgc::runtime
