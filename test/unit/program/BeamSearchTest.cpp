//===- BeamSearchTest.cpp - beam search against greedy decoding ----------===//
//
// Stand-in models: predict() computes each position's logits from the source
// and the prefix before it (as the causal mask makes a real model do), so
// the search can be checked without training one; one of them also as an
// incremental decoder with caches, in the frame (CPU) or behind device hooks
// (GPU).
//
//===----------------------------------------------------------------------===//
#include "runtime/program/decode/Translate.h"

#include "runtime/data/SplitMix64.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

using namespace tgc::runtime;

namespace {

constexpr int64_t kVocabulary = 12;
constexpr int64_t kBatch = 8, kSourceLength = 6, kTargetLength = 7;
float gLogits[kBatch * kTargetLength * kVocabulary];

/// Logits of one position from a hash of (source row, prefix): a model
/// whose choices depend on everything it may see, and nothing else.
void hashedPredict(StepFrame &frame) {
  for (int64_t r = 0; r < kBatch; ++r)
    for (int64_t t = 0; t < kTargetLength; ++t) {
      uint64_t h = 1469598103934665603ull;
      for (int64_t s = 0; s < kSourceLength; ++s)
        h = (h ^ static_cast<uint64_t>(frame.sourceIds[r * kSourceLength + s])) * 1099511628211ull;
      for (int64_t p = 0; p <= t; ++p)
        h = (h ^ static_cast<uint64_t>(frame.targetInIds[r * kTargetLength + p] + 100)) * 1099511628211ull;
      SplitMix64 rng(h);
      for (int64_t v = 0; v < kVocabulary; ++v)
        gLogits[(r * kTargetLength + t) * kVocabulary + v] =
            static_cast<float>(rng.next() % 6001) / 1000.0f - 3.0f;
    }
  frame.logits = gLogits;
}

/// The same model as an incremental decoder: encode copies the sources into
/// one cache, decodeStep appends each row's token to a per-hypothesis
/// history cache and hashes what the two hold, so its logits equal
/// hashedPredict's only if beam search moves the history rows with their
/// hypotheses.
constexpr int64_t kHistory = kBatch * kSourceLength;
float gCache[kBatch * (kSourceLength + kTargetLength)];
const CompiledCache kStandInCaches[] = {
    {"source", 0, kBatch * kSourceLength, false},
    {"history", kHistory, kBatch * kTargetLength, true}};

/// A GPU model's caches are not in the frame but on the device: this
/// stands in for that memory when the model has device hooks.
float gDeviceCache[std::size(gCache)];
bool gOnDevice = false;

/// Where the stand-in's caches are: the frame's, or the "device's".
float *cacheOf(StepFrame &frame) {
  if (!gOnDevice)
    return frame.cache;
  EXPECT_EQ(frame.cache, nullptr) << "a GPU model's frame has no host cache";
  return gDeviceCache;
}

void hashedEncode(StepFrame &frame) {
  float *cache = cacheOf(frame);
  for (int64_t i = 0; i < kBatch * kSourceLength; ++i)
    cache[i] = static_cast<float>(frame.sourceIds[i]);
}

void hashedDecodeStep(StepFrame &frame) {
  float *cache = cacheOf(frame);
  for (int64_t r = 0; r < kBatch; ++r) {
    float *history = cache + kHistory + r * kTargetLength;
    history[frame.position] = static_cast<float>(frame.targetInIds[r]);
    uint64_t h = 1469598103934665603ull;
    for (int64_t s = 0; s < kSourceLength; ++s)
      h = (h ^ static_cast<uint64_t>(cache[r * kSourceLength + s])) * 1099511628211ull;
    for (int64_t p = 0; p <= frame.position; ++p)
      h = (h ^ static_cast<uint64_t>(static_cast<int32_t>(history[p]) + 100)) * 1099511628211ull;
    SplitMix64 rng(h);
    for (int64_t v = 0; v < kVocabulary; ++v)
      gLogits[r * kVocabulary + v] =
          static_cast<float>(rng.next() % 6001) / 1000.0f - 3.0f;
  }
  frame.logits = gLogits;
}

/// DeviceHooks::reorderCaches of the stand-in "device"; counts its calls.
int gDeviceReorders = 0;
void reorderDeviceCaches(const CompiledBucket &bucket, const int64_t *parents) {
  ++gDeviceReorders;
  for (int c = 0; c < bucket.numCaches; ++c) {
    const CompiledCache &entry = bucket.caches[c];
    if (!entry.perHypothesis)
      continue;
    int64_t width = entry.size / bucket.batchSize;
    std::vector<float> copy(gDeviceCache + entry.offset,
                            gDeviceCache + entry.offset + entry.size);
    for (int64_t r = 0; r < bucket.batchSize; ++r)
      std::copy_n(copy.begin() + parents[r] * width, width,
                  gDeviceCache + entry.offset + r * width);
  }
}
const DeviceHooks kStandInDevice = {nullptr, nullptr, nullptr,
                                    &reorderDeviceCaches};

/// Tokens a=3, b=4. Greedy takes a (0.6), then a (0.35), then EOS: 0.21.
/// "b" EOS has 0.4 * 0.9 = 0.36: a beam of 2 finds it.
void trapPredict(StepFrame &frame) {
  std::fill(std::begin(gLogits), std::end(gLogits), -1e9f);
  for (int64_t r = 0; r < kBatch; ++r)
    for (int64_t t = 0; t < kTargetLength; ++t) {
      const int32_t *prefix = frame.targetInIds + r * kTargetLength + 1;
      std::map<int32_t, float> p;
      if (t == 0)
        p = {{3, 0.6f}, {4, 0.4f}};
      else if (t == 1 && prefix[0] == 3)
        p = {{kEosId, 0.3f}, {3, 0.35f}, {4, 0.35f}};
      else if (t == 1 && prefix[0] == 4)
        p = {{kEosId, 0.9f}, {3, 0.05f}, {4, 0.05f}};
      else
        p = {{kEosId, 1.0f}};
      for (auto [id, probability] : p)
        gLogits[(r * kTargetLength + t) * kVocabulary + id] = std::log(probability);
    }
  frame.logits = gLogits;
}

/// EOS first (0.5) or token 3 (0.45), then 3 3 3 EOS for certain: greedy
/// ends at once (log 0.5 = -0.69), while "3 3 3 3" EOS scores
/// log 0.45 / ((5 + 5) / 6)^0.6 = -0.59 with the length penalty.
void earlyEosPredict(StepFrame &frame) {
  std::fill(std::begin(gLogits), std::end(gLogits), -1e9f);
  for (int64_t r = 0; r < kBatch; ++r)
    for (int64_t t = 0; t < kTargetLength; ++t) {
      std::map<int32_t, float> p;
      if (t == 0)
        p = {{kEosId, 0.5f}, {3, 0.45f}, {4, 0.05f}};
      else
        p = {{t < 4 ? 3 : kEosId, 1.0f}};
      for (auto [id, probability] : p)
        gLogits[(r * kTargetLength + t) * kVocabulary + id] = std::log(probability);
    }
  frame.logits = gLogits;
}

/// Token 3 (0.99) or EOS (0.01) at every position: greedy search never
/// ends by itself, and a large length penalty prefers the longest output.
void endlessPredict(StepFrame &frame) {
  std::fill(std::begin(gLogits), std::end(gLogits), -1e9f);
  for (int64_t i = 0; i < kBatch * kTargetLength; ++i) {
    gLogits[i * kVocabulary + 3] = std::log(0.99f);
    gLogits[i * kVocabulary + kEosId] = std::log(0.01f);
  }
  frame.logits = gLogits;
}

CompiledBucket gBucket{kBatch, kSourceLength, kTargetLength, nullptr, nullptr};

CompiledModel standIn(void (*predict)(StepFrame &)) {
  gBucket.predict = predict;
  CompiledModel model{};
  model.name = "stand-in";
  model.vocabulary = kVocabulary;
  model.buckets = &gBucket;
  model.numBuckets = 1;
  return model;
}

TEST(BeamSearch, BeamOneIsGreedy) {
  CompiledModel model = standIn(&hashedPredict);
  SplitMix64 rng(11);
  std::vector<SentencePair> pairs;
  std::vector<std::vector<int32_t>> sources;
  for (int i = 0; i < 60; ++i) {
    std::vector<int32_t> source(1 + rng.next() % (kSourceLength - 1));
    for (int32_t &id : source)
      id = static_cast<int32_t>(kFirstSymbolId + rng.next() % (kVocabulary - kFirstSymbolId));
    pairs.push_back({source, {}});
    sources.push_back(source);
  }
  std::vector<std::vector<int32_t>> greedy =
      translateGreedy(model, nullptr, nullptr, pairs);
  std::string error;
  std::vector<std::vector<int32_t>> beam =
      translateBeam(model, nullptr, nullptr, sources, {1, 0.6}, error);
  ASSERT_EQ(error, "");
  EXPECT_EQ(beam, greedy);
  // Some outputs end at EOS, some run to the longest output (where EOS is
  // the last position's): both paths of the search are covered.
  size_t full = std::count_if(greedy.begin(), greedy.end(), [](const auto &o) {
    return static_cast<int64_t>(o.size()) == kTargetLength - 1;
  });
  EXPECT_GT(full, 0u);
  EXPECT_LT(full, greedy.size());
}

// A beam of 1 is greedy whatever the length penalty: the hypothesis that
// went on past the first EOS used to win by it.
TEST(BeamSearch, BeamOneIsGreedyWithALengthPenalty) {
  CompiledModel model = standIn(&earlyEosPredict);
  std::vector<std::vector<int32_t>> sources = {{5, 6}};
  std::vector<SentencePair> pairs = {{sources[0], {}}};
  std::string error;
  auto beam = translateBeam(model, nullptr, nullptr, sources, {1, 0.6}, error);
  ASSERT_EQ(error, "");
  EXPECT_EQ(beam, translateGreedy(model, nullptr, nullptr, pairs));
  EXPECT_EQ(beam[0], std::vector<int32_t>{});
  // A wider beam does weigh lengths: the longer sentence wins there.
  auto wide = translateBeam(model, nullptr, nullptr, sources, {2, 0.6}, error);
  EXPECT_EQ(wide[0], (std::vector<int32_t>{3, 3, 3, 3}));
}

/// The incremental decoder gives the full decoder's tokens, with the
/// caches in the frame (CPU) or, `onDevice`, behind the device hooks (GPU:
/// the runtime must reorder them through DeviceHooks::reorderCaches).
void expectIncrementalGivesFullTokens(bool onDevice) {
  CompiledModel model = standIn(&hashedPredict);
  SplitMix64 rng(5);
  std::vector<SentencePair> pairs;
  std::vector<std::vector<int32_t>> sources;
  for (int i = 0; i < 40; ++i) {
    std::vector<int32_t> source(1 + rng.next() % (kSourceLength - 1));
    for (int32_t &id : source)
      id = static_cast<int32_t>(kFirstSymbolId + rng.next() % (kVocabulary - kFirstSymbolId));
    pairs.push_back({source, {}});
    sources.push_back(source);
  }
  auto decode = [&](Decoding decoding) {
    std::string error;
    std::vector<std::vector<std::vector<int32_t>>> outputs;
    outputs.push_back(translateGreedy(model, nullptr, nullptr, pairs, decoding));
    for (int64_t beam : {1, 2, 4})
      outputs.push_back(translateBeam(model, nullptr, nullptr, sources,
                                      {beam, 0.6, decoding}, error));
    EXPECT_EQ(error, "");
    return outputs;
  };
  auto full = decode(Decoding::Full);
  if (onDevice)
    model.device = &kStandInDevice;
  gOnDevice = onDevice;
  gDeviceReorders = 0;
  gBucket.encode = &hashedEncode;
  gBucket.decodeStep = &hashedDecodeStep;
  gBucket.caches = kStandInCaches;
  gBucket.numCaches = 2;
  gBucket.cacheFloats = std::size(gCache);
  auto incremental = decode(Decoding::Incremental);
  // Decoding::Full ignores the decoder even where there is one.
  auto fullAgain = decode(Decoding::Full);
  gBucket.encode = gBucket.decodeStep = nullptr;
  gBucket.caches = nullptr;
  gBucket.numCaches = 0;
  gBucket.cacheFloats = 0;
  gOnDevice = false;
  EXPECT_EQ(incremental, full);
  EXPECT_EQ(fullAgain, full);
  // Beam 4 differs from greedy on some sentence: hypotheses did change rows.
  EXPECT_NE(full[3], full[0]);
  if (onDevice) {
    EXPECT_GT(gDeviceReorders, 0);
  }
}

TEST(BeamSearch, IncrementalDecoderGivesTheFullDecodersTokens) {
  expectIncrementalGivesFullTokens(/*onDevice=*/false);
}

TEST(BeamSearch, DeviceCachesFollowTheirHypothesesThroughTheHooks) {
  expectIncrementalGivesFullTokens(/*onDevice=*/true);
}

TEST(BeamSearch, WiderBeamFindsTheLikelierSentence) {
  CompiledModel model = standIn(&trapPredict);
  std::vector<std::vector<int32_t>> sources = {{5}, {6, 7}, {8}};
  std::string error;
  auto greedy = translateBeam(model, nullptr, nullptr, sources, {1, 0.0}, error);
  auto beam2 = translateBeam(model, nullptr, nullptr, sources, {2, 0.0}, error);
  auto beam4 = translateBeam(model, nullptr, nullptr, sources, {4, 0.0}, error);
  ASSERT_EQ(error, "");
  for (size_t i = 0; i < sources.size(); ++i) {
    EXPECT_EQ(greedy[i], (std::vector<int32_t>{3, 3}));
    EXPECT_EQ(beam2[i], (std::vector<int32_t>{4}));
    EXPECT_EQ(beam4[i], (std::vector<int32_t>{4}));
  }
}

TEST(BeamSearch, LengthPenaltyFavoursLongerSentences) {
  // "a a" EOS: log 0.21 over 3 tokens; "b" EOS: log 0.36 over 2. With
  // lp = ((5 + n) / 6)^alpha, alpha 0 prefers "b"; a large alpha divides
  // the longer sentence's (negative) score by more and prefers "a a".
  CompiledModel model = standIn(&trapPredict);
  std::vector<std::vector<int32_t>> sources = {{5}};
  std::string error;
  double a = std::log(0.21) / std::pow(8.0 / 6.0, 4.0);
  double b = std::log(0.36) / std::pow(7.0 / 6.0, 4.0);
  ASSERT_GT(a, b); // the expectation below, by hand
  auto longer = translateBeam(model, nullptr, nullptr, sources, {4, 4.0}, error);
  EXPECT_EQ(longer[0], (std::vector<int32_t>{3, 3}));
}

TEST(BeamSearch, OutputsEndWithAScoredEosAtTheLastPosition) {
  // The last of the 7 target positions is EOS's: 6 tokens at most, and the
  // EOS that ends them is scored (it used to end unscored after 7, an
  // output no training target is as long as, which could outrank finished
  // ones).
  CompiledModel model = standIn(&endlessPredict);
  std::vector<std::vector<int32_t>> sources = {{5}};
  EXPECT_EQ(longestOutput(model, 1), kTargetLength - 1);
  EXPECT_EQ(longestOutput(model, kSourceLength), 0); // no bucket holds it
  const std::vector<int32_t> six(kTargetLength - 1, 3);
  std::vector<SentencePair> pairs = {{{5}, {}}};
  EXPECT_EQ(translateGreedy(model, nullptr, nullptr, pairs)[0], six);
  std::string error;
  auto lists = translateBeamNBest(model, nullptr, nullptr, sources,
                                  {2, 4.0}, 1, error);
  ASSERT_EQ(lists.size(), 1u);
  ASSERT_EQ(lists[0].size(), 1u);
  EXPECT_EQ(lists[0][0].tokens, six);
  EXPECT_NEAR(lists[0][0].logProbability,
              6 * std::log(0.99) + std::log(0.01), 1e-5);
}

TEST(BeamSearch, BeamWiderThanTheBatchIsRefused) {
  CompiledModel model = standIn(&hashedPredict);
  std::vector<std::vector<int32_t>> sources = {{5}};
  std::string error;
  translateBeam(model, nullptr, nullptr, sources, {9, 0.6}, error);
  EXPECT_EQ(error, "beam 9 exceeds the batch of bucket 8x6x7");
}

TEST(BeamSearch, ABeamDecodesInABucketWhoseBatchHoldsIt) {
  // The longest target among the buckets that hold a source is the
  // decoding bucket, here a batch of 2; a beam of 4 goes to the bucket of 8
  // rows that holds it too (it was refused), and where no bucket has the
  // rows, the one it would be decoded in (which refuses the beam).
  CompiledBucket buckets[] = {{2, 6, 7, nullptr, nullptr},
                              {8, 6, 5, nullptr, nullptr}};
  CompiledModel model{};
  model.name = "two buckets";
  model.vocabulary = kVocabulary;
  model.buckets = buckets;
  model.numBuckets = 2;
  EXPECT_EQ(longestOutput(model, 3), 6);
  EXPECT_EQ(longestOutput(model, 3, 2), 6);
  EXPECT_EQ(longestOutput(model, 3, 4), 4);
  EXPECT_EQ(longestOutput(model, 3, 9), 6);
  EXPECT_EQ(longestOutput(model, 6), 0); // no bucket holds 6 symbols and EOS
}

} // namespace
