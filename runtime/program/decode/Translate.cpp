//===- Translate.cpp - decoding and validation with the compiled @predict -===//
#include "runtime/program/decode/Translate.h"

#include "runtime/data/SplitMix64.h"
#include "runtime/program/Progress.h"
#include "runtime/program/train/Batcher.h"
#include "runtime/program/train/Interrupt.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

namespace tgc::runtime {
namespace {

BatchShape shapeOf(const CompiledModel &model, const CompiledBucket &bucket) {
  return {bucket.batchSize, bucket.sourceLength, bucket.targetLength,
          static_cast<int32_t>(model.vocabulary)};
}

/// Calls the bucket's predict on `batch`; the logits stay valid until the
/// next call.
const float *predict(const CompiledBucket &bucket, float *state, char *arena,
                     const Batch &batch) {
  StepFrame frame{};
  frame.state = state;
  frame.arena = arena;
  frame.sourceIds = batch.source.data();
  frame.targetInIds = batch.targetIn.data();
  bucket.predict(frame);
  noteProgress(); // a validation or decoding may take minutes
  return frame.logits;
}

/// The next-token logits of every row of one bucket's batch: @decode_step on
/// each row's newest token with the caches, or @predict on whole prefixes.
class RowDecoder {
public:
  RowDecoder(const CompiledModel &model, const CompiledBucket &bucket,
             float *state, char *arena, Decoding decoding)
      : bucket(bucket), vocabulary(model.vocabulary), device(model.device),
        state(state), arena(arena),
        incremental(decoding == Decoding::Incremental && bucket.decodeStep),
        batch(emptyBatch(shapeOf(model, bucket))) {
    if (incremental) {
      // A GPU model keeps its caches on the device.
      if (!device)
        cache.assign(static_cast<size_t>(bucket.cacheFloats), 0.0f);
      stepIds.assign(static_cast<size_t>(bucket.batchSize), kPadId);
    }
  }

  /// Row `row` translates `source`; call encode() when all are set.
  void setSource(int64_t row, std::span<const int32_t> source) {
    packRow(batch, row, source, {});
  }

  void encode() {
    if (!incremental)
      return;
    StepFrame frame = makeFrame();
    frame.sourceIds = batch.source.data();
    bucket.encode(frame);
  }

  /// Logits of position `t` for every row, whose prefix (the symbols after
  /// BOS, t of them) is `prefixes[row]`, or null for a row nobody reads.
  /// Row r's are at result + r * rowStride().
  const float *next(int64_t t, std::span<const std::vector<int32_t> *const> prefixes) {
    if (!incremental) {
      for (int64_t r = 0; r < bucket.batchSize; ++r) {
        auto row = batch.targetIn.begin() + r * bucket.targetLength;
        std::fill_n(row, bucket.targetLength, kPadId);
        if (!prefixes[r])
          continue;
        row[0] = kBosId;
        std::copy(prefixes[r]->begin(), prefixes[r]->end(), row + 1);
      }
      return predict(bucket, state, arena, batch) + t * vocabulary;
    }
    for (int64_t r = 0; r < bucket.batchSize; ++r)
      stepIds[r] = !prefixes[r]          ? kPadId
                   : prefixes[r]->empty() ? kBosId
                                         : prefixes[r]->back();
    StepFrame frame = makeFrame();
    frame.targetInIds = stepIds.data();
    frame.position = static_cast<int32_t>(t);
    bucket.decodeStep(frame);
    noteProgress();
    return frame.logits;
  }

  int64_t rowStride() const {
    return incremental ? vocabulary : bucket.targetLength * vocabulary;
  }

  /// Row r continues the prefix of row parents[r] (beam search): the
  /// per-hypothesis caches' rows follow.
  void reorder(std::span<const int64_t> parents) {
    bool moved = false;
    for (int64_t r = 0; r < bucket.batchSize; ++r)
      moved |= parents[r] != r;
    if (!incremental || !moved)
      return;
    if (device) {
      device->reorderCaches(bucket, parents.data());
      return;
    }
    std::vector<float> copy;
    for (int c = 0; c < bucket.numCaches; ++c) {
      const CompiledCache &entry = bucket.caches[c];
      if (!entry.perHypothesis)
        continue;
      float *rows = cache.data() + entry.offset;
      int64_t width = entry.size / bucket.batchSize;
      copy.assign(rows, rows + entry.size);
      for (int64_t r = 0; r < bucket.batchSize; ++r)
        if (parents[r] != r)
          std::copy_n(copy.data() + parents[r] * width, width, rows + r * width);
    }
  }

private:
  StepFrame makeFrame() {
    StepFrame frame{};
    frame.state = state;
    frame.arena = arena;
    frame.cache = device ? nullptr : cache.data();
    return frame;
  }

  const CompiledBucket &bucket;
  int64_t vocabulary;
  const DeviceHooks *device; ///< null on the CPU
  float *state;
  char *arena;
  bool incremental;
  Batch batch;
  std::vector<float> cache;
  std::vector<int32_t> stepIds;
};

/// The bucket to decode a source of `symbols` in: the output's length is
/// unknown, so the longest target among those that hold the source and
/// have `rows` rows for its hypotheses (a beam's), then the smallest; among
/// those that hold it where none has the rows (the beam search then says
/// so). -1 when none holds it.
int decodingBucket(const CompiledModel &model, size_t symbols,
                   int64_t rows = 1) {
  int best = -1;
  for (int b = 0; b < model.numBuckets; ++b) {
    const CompiledBucket &bucket = model.buckets[b];
    if (static_cast<int64_t>(symbols) + 1 > bucket.sourceLength ||
        bucket.batchSize < rows)
      continue;
    if (best < 0 || bucket.targetLength > model.buckets[best].targetLength ||
        (bucket.targetLength == model.buckets[best].targetLength &&
         bucket.sourceLength < model.buckets[best].sourceLength))
      best = b;
  }
  return best >= 0 || rows == 1 ? best : decodingBucket(model, symbols);
}

/// Indices of `count` sources grouped by their decoding bucket, in input
/// order; sources too long for every bucket are left out.
template <typename SourceOf>
std::map<int, std::vector<size_t>> groupByBucket(const CompiledModel &model,
                                                 size_t count,
                                                 SourceOf sourceOf,
                                                 int64_t rows = 1) {
  std::map<int, std::vector<size_t>> groups;
  for (size_t i = 0; i < count; ++i)
    if (int bucket = decodingBucket(model, sourceOf(i).size(), rows);
        bucket >= 0)
      groups[bucket].push_back(i);
  return groups;
}

/// log(sum(exp(logits))) over the whole vocabulary, in double.
double logSumExp(const float *logits, int64_t vocabulary) {
  float max = *std::max_element(logits, logits + vocabulary);
  double sum = 0;
  for (int64_t id = 0; id < vocabulary; ++id)
    sum += std::exp(static_cast<double>(logits[id]) - max);
  return max + std::log(sum);
}

struct Hypothesis {
  std::vector<int32_t> tokens;
  double score = 0; ///< sum of log-probabilities
  int parent = 0;   ///< the live hypothesis of the last step it extends
};

struct Candidate {
  double score;
  int hypothesis;
  int32_t id;
};

/// The beam search state of one sentence.
struct SentenceBeam {
  std::vector<Hypothesis> live{Hypothesis{}};
  std::vector<Hypothesis> finished;
  bool done = false;
};

double lengthPenalty(size_t length, double alpha) {
  return std::pow((5.0 + static_cast<double>(length)) / 6.0, alpha);
}

/// One step of one sentence: `logits(j)` gives the next-token logits of
/// live hypothesis j. `last`: no position follows, so every live hypothesis
/// ends here with EOS, scored (a token here would leave its EOS no place:
/// no training target was ever that long);
/// `maxLength`: the most symbols an output can have; the sentence is done
/// when `wanted` finished hypotheses beat every live prefix.
void advance(SentenceBeam &sentence, int64_t beam, double alpha,
             int64_t vocabulary, bool last, int64_t maxLength, int64_t wanted,
             const std::function<const float *(int)> &logits) {
  std::vector<Candidate> candidates;
  for (int j = 0; j < static_cast<int>(sentence.live.size()); ++j) {
    const float *row = logits(j);
    double normalizer = logSumExp(row, vocabulary);
    for (int32_t id = kEosId; id < (last ? kEosId + 1 : vocabulary); ++id)
      candidates.push_back({sentence.live[j].score + row[id] - normalizer, j, id});
  }
  // Best first; ties by hypothesis, then the smaller id (as greedy's argmax).
  size_t keep = std::min(candidates.size(), static_cast<size_t>(2 * beam));
  std::partial_sort(candidates.begin(), candidates.begin() + keep,
                    candidates.end(), [](const Candidate &a, const Candidate &b) {
                      if (a.score != b.score)
                        return a.score > b.score;
                      if (a.hypothesis != b.hypothesis)
                        return a.hypothesis < b.hypothesis;
                      return a.id < b.id;
                    });
  std::vector<Hypothesis> next;
  for (size_t rank = 0; rank < keep && static_cast<int64_t>(next.size()) < beam;
       ++rank) {
    const Candidate &c = candidates[rank];
    Hypothesis h{sentence.live[c.hypothesis].tokens, c.score, c.hypothesis};
    if (c.id == kEosId) {
      // EOS counts only among the beam's best, so beam 1 is greedy.
      if (static_cast<int64_t>(rank) < beam)
        sentence.finished.push_back(std::move(h));
      continue;
    }
    h.tokens.push_back(c.id);
    next.push_back(std::move(h));
  }
  sentence.live = std::move(next);
  // Done when no live prefix can still win: log-probabilities only fall as
  // a prefix grows, so the best live one ends no better than its score over
  // the largest length penalty.
  sentence.done = sentence.live.empty();
  if (!sentence.done && !sentence.finished.empty()) {
    double bound = sentence.live.front().score /
                   lengthPenalty(static_cast<size_t>(maxLength) + 1, alpha);
    int64_t beaten = 0;
    for (const Hypothesis &h : sentence.finished)
      if (h.score / lengthPenalty(h.tokens.size() + 1, alpha) >= bound)
        ++beaten;
    sentence.done = beaten >= wanted;
  }
}

/// The `n` finished hypotheses with the best length-normalized scores
/// (length with EOS), best first; ties keep the order they finished in.
std::vector<ScoredHypothesis> best(const SentenceBeam &sentence, double alpha,
                                   int64_t n) {
  std::vector<ScoredHypothesis> ranked;
  for (const Hypothesis &h : sentence.finished)
    ranked.push_back({h.tokens, h.score,
                      h.score / lengthPenalty(h.tokens.size() + 1, alpha)});
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const ScoredHypothesis &a, const ScoredHypothesis &b) {
                     return a.score > b.score;
                   });
  if (static_cast<int64_t>(ranked.size()) > n)
    ranked.resize(static_cast<size_t>(n));
  return ranked;
}

} // namespace

int64_t longestOutput(const CompiledModel &model, size_t symbols,
                      int64_t beam) {
  int bucket = decodingBucket(model, symbols, beam);
  return bucket < 0 ? 0 : model.buckets[bucket].targetLength - 1;
}

std::vector<std::vector<int32_t>>
translateGreedy(const CompiledModel &model, float *state, char *arena,
                std::span<const SentencePair> pairs, Decoding decoding,
                int64_t maxRows) {
  std::vector<std::vector<int32_t>> outputs(pairs.size());
  auto groups = groupByBucket(model, pairs.size(),
                              [&](size_t i) { return pairs[i].source; });
  for (const auto &[bucketIndex, members] : groups) {
    const CompiledBucket &bucket = model.buckets[bucketIndex];
    const size_t perCall = static_cast<size_t>(
        maxRows > 0 ? std::min(maxRows, bucket.batchSize) : bucket.batchSize);
    for (size_t first = 0; first < members.size(); first += perCall) {
      if (interruptRequested())
        return outputs; // partial: the caller sees pendingInterrupt()
      size_t rows = std::min(perCall, members.size() - first);
      RowDecoder decoder(model, bucket, state, arena, decoding);
      for (size_t r = 0; r < rows; ++r)
        decoder.setSource(static_cast<int64_t>(r), pairs[members[first + r]].source);
      decoder.encode();
      // Row r's prefix is its output so far; null once it has ended.
      std::vector<const std::vector<int32_t> *> prefixes(bucket.batchSize, nullptr);
      for (size_t r = 0; r < rows; ++r)
        prefixes[r] = &outputs[members[first + r]];
      // The last position is EOS's (as beam search's advance): no token
      // is chosen there.
      for (int64_t t = 0; t + 1 < bucket.targetLength; ++t) {
        if (interruptRequested())
          return outputs;
        const float *logits = decoder.next(t, prefixes);
        bool all = true;
        for (size_t r = 0; r < rows; ++r) {
          if (!prefixes[r])
            continue;
          const float *row = logits + r * decoder.rowStride();
          int32_t chosen = kEosId;
          for (int32_t id = kEosId; id < model.vocabulary; ++id)
            if (row[id] > row[chosen])
              chosen = id;
          if (chosen == kEosId) {
            prefixes[r] = nullptr;
            continue;
          }
          outputs[members[first + r]].push_back(chosen);
          all = false;
        }
        if (all)
          break;
      }
    }
  }
  return outputs;
}

std::vector<std::vector<int32_t>>
translateBeam(const CompiledModel &model, float *state, char *arena,
              std::span<const std::vector<int32_t>> sources,
              const BeamOptions &options, std::string &error) {
  std::vector<std::vector<ScoredHypothesis>> lists =
      translateBeamNBest(model, state, arena, sources, options, 1, error);
  std::vector<std::vector<int32_t>> outputs(lists.size());
  for (size_t i = 0; i < lists.size(); ++i)
    if (!lists[i].empty())
      outputs[i] = std::move(lists[i].front().tokens);
  return outputs;
}

std::vector<std::vector<ScoredHypothesis>>
translateBeamNBest(const CompiledModel &model, float *state, char *arena,
                   std::span<const std::vector<int32_t>> sources,
                   const BeamOptions &options, int64_t nbest,
                   std::string &error) {
  std::vector<std::vector<ScoredHypothesis>> outputs(sources.size());
  const int64_t beam = options.beam;
  auto groups = groupByBucket(
      model, sources.size(),
      [&](size_t i) -> const std::vector<int32_t> & { return sources[i]; },
      beam);
  // A beam of 1 is greedy decoding: with a length penalty, the hypothesis
  // that went on past the first EOS could outscore the one it ended.
  const double alpha = beam == 1 ? 0.0 : options.alpha;
  for (const auto &[bucketIndex, members] : groups) {
    const CompiledBucket &bucket = model.buckets[bucketIndex];
    if (beam > bucket.batchSize) {
      error = "beam " + std::to_string(beam) + " exceeds the batch of bucket " +
              std::to_string(bucket.batchSize) + "x" +
              std::to_string(bucket.sourceLength) + "x" +
              std::to_string(bucket.targetLength);
      return {};
    }
    // Row s * beam + j holds live hypothesis j of sentence s.
    size_t perCall = static_cast<size_t>(bucket.batchSize / beam);
    if (options.maxSentences > 0)
      perCall = std::min(perCall, static_cast<size_t>(options.maxSentences));
    for (size_t first = 0; first < members.size(); first += perCall) {
      if (interruptRequested())
        return outputs;
      size_t count = std::min(perCall, members.size() - first);
      std::vector<SentenceBeam> sentences(count);
      RowDecoder decoder(model, bucket, state, arena, options.decoding);
      for (size_t s = 0; s < count; ++s)
        for (int64_t j = 0; j < beam; ++j)
          decoder.setSource(static_cast<int64_t>(s) * beam + j,
                            sources[members[first + s]]);
      decoder.encode();
      std::vector<const std::vector<int32_t> *> prefixes(bucket.batchSize);
      std::vector<int64_t> parents(bucket.batchSize);
      for (int64_t t = 0; t < bucket.targetLength; ++t) {
        if (interruptRequested())
          return outputs;
        std::fill(prefixes.begin(), prefixes.end(), nullptr);
        for (size_t s = 0; s < count; ++s)
          for (size_t j = 0; !sentences[s].done && j < sentences[s].live.size(); ++j)
            prefixes[s * beam + j] = &sentences[s].live[j].tokens;
        const float *logits = decoder.next(t, prefixes);
        bool all = true;
        for (int64_t r = 0; r < bucket.batchSize; ++r)
          parents[r] = r;
        for (size_t s = 0; s < count; ++s) {
          if (sentences[s].done)
            continue;
          int64_t base = static_cast<int64_t>(s) * beam;
          advance(sentences[s], beam, alpha, model.vocabulary,
                  t + 1 == bucket.targetLength, bucket.targetLength, nbest,
                  [&](int j) { return logits + (base + j) * decoder.rowStride(); });
          for (size_t j = 0; j < sentences[s].live.size(); ++j)
            parents[base + j] = base + sentences[s].live[j].parent;
          all = all && sentences[s].done;
        }
        if (all)
          break;
        decoder.reorder(parents);
      }
      for (size_t s = 0; s < count; ++s)
        outputs[members[first + s]] = best(sentences[s], alpha, nbest);
    }
  }
  return outputs;
}

ValidationLoss validationLoss(const CompiledModel &model, float *state,
                              char *arena, std::span<const SentencePair> pairs) {
  ValidationLoss total;
  std::map<int, std::vector<size_t>> groups;
  for (size_t i = 0; i < pairs.size(); ++i)
    if (int bucket = bucketFor(model, pairs[i].source.size(),
                               pairs[i].target.size());
        bucket >= 0)
      groups[bucket].push_back(i);
  for (const auto &[bucketIndex, members] : groups) {
    const CompiledBucket &bucket = model.buckets[bucketIndex];
    for (size_t first = 0; first < members.size(); first += bucket.batchSize) {
      if (interruptRequested())
        return total;
      size_t rows = std::min<size_t>(bucket.batchSize, members.size() - first);
      Batch batch = emptyBatch(shapeOf(model, bucket));
      for (size_t r = 0; r < rows; ++r)
        packRow(batch, static_cast<int64_t>(r), pairs[members[first + r]].source,
                pairs[members[first + r]].target);
      addBatchLoss(model, bucketIndex, state, arena, batch, total);
    }
  }
  return total;
}

void addBatchLoss(const CompiledModel &model, int bucketIndex, float *state,
                  char *arena, const Batch &batch, ValidationLoss &total) {
  const CompiledBucket &bucket = model.buckets[bucketIndex];
  const float *logits = predict(bucket, state, arena, batch);
  for (int64_t p = 0; p < bucket.batchSize * bucket.targetLength; ++p) {
    int32_t id = batch.targetOut[p];
    if (id == kPadId)
      continue;
    const float *row = logits + p * model.vocabulary;
    total.nll += logSumExp(row, model.vocabulary) - row[id];
    ++total.tokens;
  }
}

namespace {

/// The next token of one row under `sampling` (ids below EOS, padding and
/// BOS, are never picked).
int32_t pickToken(const float *logits, int64_t vocabulary,
                  const Sampling &sampling, SplitMix64 &rng) {
  if (sampling.temperature <= 0)
    return static_cast<int32_t>(
        std::max_element(logits + kEosId, logits + vocabulary) - logits);
  // Shifted by the largest logit before the division: a tiny temperature
  // then sends the others to -inf (probability 0), where logit / T gave
  // inf - inf = NaN and picked the least likely token.
  const double top = *std::max_element(logits + kEosId, logits + vocabulary);
  std::vector<std::pair<double, int32_t>> candidates;
  for (int32_t id = kEosId; id < vocabulary; ++id)
    candidates.push_back({(logits[id] - top) / sampling.temperature, id});
  std::sort(candidates.begin(), candidates.end(),
            [](auto &a, auto &b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
  if (sampling.topK > 0 && static_cast<size_t>(sampling.topK) < candidates.size())
    candidates.resize(sampling.topK);
  double max = candidates.front().first, sum = 0;
  for (auto &c : candidates)
    sum += (c.first = std::exp(c.first - max));
  // The smallest prefix (most likely first) that holds topP of the mass.
  size_t keep = candidates.size();
  double mass = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    mass += candidates[i].first / sum;
    if (mass >= sampling.topP) {
      keep = i + 1;
      break;
    }
  }
  candidates.resize(keep);
  double total = 0;
  for (auto &c : candidates)
    total += c.first;
  double u = static_cast<double>(rng.next() >> 11) * 0x1.0p-53 * total;
  for (auto &c : candidates)
    if ((u -= c.first) < 0)
      return c.second;
  return candidates.back().second;
}

} // namespace

std::vector<std::vector<int32_t>>
continuePrompts(const CompiledModel &model, float *state, char *arena,
                std::span<const std::vector<int32_t>> prompts,
                int64_t maxNewTokens, const Sampling &sampling,
                Decoding decoding) {
  const CompiledBucket &bucket = model.buckets[model.numBuckets - 1];
  const int64_t rows = bucket.batchSize, length = bucket.targetLength;
  const bool incremental =
      decoding == Decoding::Incremental && bucket.decodeStep;
  std::vector<std::vector<int32_t>> outputs(prompts.size());
  std::vector<float> cache;
  std::vector<int32_t> stepIds(static_cast<size_t>(rows), kPadId);
  for (size_t first = 0; first < prompts.size(); first += rows) {
    size_t count = std::min<size_t>(rows, prompts.size() - first);
    // Each row's tokens so far: the prompt's last length - 1 (a document
    // boundary for none), then what it generates.
    std::vector<std::vector<int32_t>> tokens(count);
    std::vector<bool> done(count, false);
    std::vector<int64_t> produced(count, 0);
    std::vector<SplitMix64> rngs;
    for (size_t r = 0; r < count; ++r) {
      const std::vector<int32_t> &prompt = prompts[first + r];
      size_t keep = std::min<size_t>(prompt.size(), length - 1);
      tokens[r].assign(prompt.end() - keep, prompt.end());
      if (tokens[r].empty())
        tokens[r].push_back(kEosId);
      rngs.emplace_back((uint64_t{sampling.seed} << 32) ^
                        ((first + r) * 0x9e3779b97f4a7c15ull));
      done[r] = maxNewTokens <= 0;
    }
    // Row r's token after position p from the logits of position p: the
    // next prompt token, or one picked when p is the row's last.
    auto extend = [&](size_t r, int64_t p, const float *logits) {
      if (done[r] || p + 1 != static_cast<int64_t>(tokens[r].size()))
        return;
      if (p + 1 >= length) { // the context is full
        done[r] = true;
        return;
      }
      int32_t token = pickToken(logits, model.vocabulary, sampling, rngs[r]);
      if (token == kEosId) {
        done[r] = true;
        return;
      }
      tokens[r].push_back(token);
      outputs[first + r].push_back(token);
      done[r] = ++produced[r] >= maxNewTokens;
    };
    if (incremental) {
      // One position at a time through @decode_step, its keys and values
      // cached: the prompts' positions fill the caches, then each step adds
      // a generated token.
      StepFrame frame{};
      frame.state = state;
      frame.arena = arena;
      if (!model.device) {
        cache.assign(static_cast<size_t>(bucket.cacheFloats), 0.0f);
        frame.cache = cache.data();
      }
      bucket.encode(frame);
      for (int64_t p = 0; p < length; ++p) {
        if (interruptRequested())
          return outputs;
        bool any = false;
        for (size_t r = 0; r < count; ++r) {
          bool live = !done[r] && p < static_cast<int64_t>(tokens[r].size());
          stepIds[r] = live ? tokens[r][p] : kPadId;
          any = any || live;
        }
        if (!any)
          break;
        frame.targetInIds = stepIds.data();
        frame.position = static_cast<int32_t>(p);
        bucket.decodeStep(frame);
        noteProgress();
        for (size_t r = 0; r < count; ++r)
          extend(r, p, frame.logits + r * model.vocabulary);
      }
      continue;
    }
    // @predict on whole prefixes: one call a generated token.
    Batch batch = emptyBatch(shapeOf(model, bucket));
    for (;;) {
      if (interruptRequested())
        return outputs;
      bool any = false;
      for (size_t r = 0; r < count; ++r) {
        std::copy(tokens[r].begin(), tokens[r].end(),
                  batch.targetIn.begin() + r * length);
        any = any || !done[r];
      }
      if (!any)
        break;
      const float *logits = predict(bucket, state, arena, batch);
      for (size_t r = 0; r < count; ++r) {
        int64_t p = static_cast<int64_t>(tokens[r].size()) - 1;
        extend(r, p, logits + (r * length + p) * model.vocabulary);
      }
    }
  }
  return outputs;
}

} // namespace tgc::runtime
