//===- ModelInvariantsTest.cpp - the Transformer on the interpreter ------===//
//
// Properties the model must have whatever its weights: causal masking,
// invariance to extra source padding, and a loss at initialization close to
// the label-smoothed cross-entropy of a uniform prediction.
//
//===----------------------------------------------------------------------===//
#include "test/unit/TestContext.h"

#include "codegen/interpreter/Interpreter.h"
#include "models/Transformer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace mlir;
using namespace tgc;

namespace {

struct Batch {
  HostTensor source, targetIn, targetOut;
};

/// A built model with its variables initialized from `seed`.
class ModelRun {
public:
  ModelRun(test::TestContext &t, const models::TransformerConfig &config,
           uint32_t seed = 7) {
    auto built = buildGraph(t.context, "loss", [&](tgc::Builder &b) {
      models::buildTransformer(b, config);
    });
    EXPECT_TRUE(succeeded(built)) << ::testing::PrintToString(t.messages);
    module = std::move(*built);
    interpreter = std::make_unique<Interpreter>(*module, Precision::F64);
    interpreter->initializeVariables(seed);
  }

  /// Returns (loss, tokens) for `batch`, with dropout key (seed 11, step 1)
  /// when the model has dropout (and so a key input).
  std::pair<double, double> loss(const Batch &batch) {
    std::vector<HostTensor> args{batch.source, batch.targetIn, batch.targetOut};
    auto function = module->lookupSymbol<func::FuncOp>("loss");
    if (function.getNumArguments() == 4)
      args.push_back(HostTensor::i32({2}, {11, 1}));
    auto out = interpreter->run("loss", args);
    EXPECT_TRUE(succeeded(out));
    if (failed(out))
      return {NAN, NAN};
    return {(*out)[0][0], (*out)[1][0]};
  }

  OwningOpRef<ModuleOp> module;
  std::unique_ptr<Interpreter> interpreter;
};

/// Random non-pad tokens in [1, vocab) for `rows` x `length`, with position
/// >= lengths[row] set to pad (0).
HostTensor tokens(std::mt19937 &rng, int64_t vocab, int64_t rows,
                  int64_t length, const std::vector<int64_t> &lengths) {
  std::uniform_int_distribution<int> token(1, static_cast<int>(vocab) - 1);
  HostTensor ids = HostTensor::i32({rows, length},
                                   std::vector<double>(rows * length, 0.0));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < lengths[r]; ++i)
      ids[r * length + i] = token(rng);
  return ids;
}

models::TransformerConfig tinyConfig() {
  return *models::transformerPreset("tiny");
}

TEST(ModelInvariants, LaterTargetTokensDoNotChangeEarlierPositions) {
  // Dropout stays on: its masks depend on positions, not on token values.
  test::TestContext t;
  auto config = tinyConfig();
  ModelRun run(t, config);
  std::mt19937 rng(3);
  int64_t B = config.batch_size(), S = config.source_length(),
          T = config.target_length(), V = config.vocab_size();
  const int64_t visible = 3; // positions 0..3 are scored
  Batch batch{tokens(rng, V, B, S, std::vector<int64_t>(B, S)),
              tokens(rng, V, B, T, std::vector<int64_t>(B, T)),
              tokens(rng, V, B, T, std::vector<int64_t>(B, visible + 1))};
  auto [before, counted] = run.loss(batch);
  EXPECT_EQ(counted, double(B * (visible + 1)));

  Batch changed = batch;
  std::uniform_int_distribution<int> token(1, static_cast<int>(V) - 1);
  for (int64_t r = 0; r < B; ++r)
    for (int64_t i = visible + 1; i < T; ++i)
      changed.targetIn[r * T + i] = token(rng);
  ASSERT_NE(changed.targetIn.data, batch.targetIn.data);
  EXPECT_EQ(run.loss(changed).first, before);

  // Changing a visible input token does change the loss (the test can fail).
  changed.targetIn[visible] = changed.targetIn[visible] == 1 ? 2 : 1;
  EXPECT_NE(run.loss(changed).first, before);
}

TEST(ModelInvariants, ExtraSourcePaddingChangesNothing) {
  // Without dropout (its masks are laid out by shape) the same sentences
  // padded to 8 and to 13 source positions give the same loss.
  test::TestContext t;
  auto config = tinyConfig();
  config.set_dropout(0.0);
  config.set_attention_dropout(0.0);
  auto longer = config;
  longer.set_source_length(13);
  ModelRun shortRun(t, config), longRun(t, longer);

  std::mt19937 rng(5);
  int64_t B = config.batch_size(), T = config.target_length(),
          V = config.vocab_size();
  std::vector<int64_t> lengths{8, 5, 1, 7};
  lengths.resize(B, 6);
  Batch batch{tokens(rng, V, B, 8, lengths),
              tokens(rng, V, B, T, std::vector<int64_t>(B, T)),
              tokens(rng, V, B, T, std::vector<int64_t>(B, T))};
  Batch padded = batch;
  padded.source = HostTensor::i32({B, 13}, std::vector<double>(B * 13, 0.0));
  for (int64_t r = 0; r < B; ++r)
    for (int64_t i = 0; i < 8; ++i)
      padded.source[r * 13 + i] = batch.source[r * 8 + i];

  double expected = shortRun.loss(batch).first;
  EXPECT_NEAR(longRun.loss(padded).first, expected, 1e-12 * std::abs(expected));
}

TEST(ModelInvariants, InitialLossIsNearUniformPrediction) {
  // With q = (1 - s) onehot + s / V, the cross-entropy of the uniform
  // prediction is -sum_c q(c) log(1/V) = log V for any smoothing s.
  test::TestContext t;
  auto config = tinyConfig();
  config.set_vocab_size(1000);
  config.set_dropout(0.0);
  config.set_attention_dropout(0.0);
  ModelRun run(t, config);
  std::mt19937 rng(9);
  int64_t B = config.batch_size(), S = config.source_length(),
          T = config.target_length(), V = config.vocab_size();
  Batch batch{tokens(rng, V, B, S, std::vector<int64_t>(B, S)),
              tokens(rng, V, B, T, std::vector<int64_t>(B, T)),
              tokens(rng, V, B, T, std::vector<int64_t>(B, T))};
  double uniform = std::log(double(V));
  double loss = run.loss(batch).first;
  ::testing::Test::RecordProperty("initial_loss", std::to_string(loss));
  ::testing::Test::RecordProperty("log_vocab", std::to_string(uniform));
  // Logits at initialization have a standard deviation near 1 (unit-variance
  // LayerNorm output against N(0, 1/d) embeddings), which adds about half a
  // nat over log V; 10% of log V = 0.69 nats bounds that.
  EXPECT_NEAR(loss, uniform, 0.1 * uniform) << "loss " << loss << ", log V " << uniform;
}

} // namespace
