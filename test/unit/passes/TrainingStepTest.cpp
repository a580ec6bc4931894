//===- TrainingStepTest.cpp - Adam in the graph, and learning ------------===//
//
// The training step tg-training-pipeline builds: one Adam step equals the
// hand-computed update (bias correction included, hyperparameters from the
// module's tg.optimizer), and the tiny Transformer learns the copy task on
// the interpreter.
//
//===----------------------------------------------------------------------===//
#include "test/unit/passes/GradientCheck.h"

#include "codegen/interpreter/InterpreterTrainer.h"
#include "models/Transformer.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::test;

namespace {

bool runTrainingPipeline(ModuleOp module, TestContext &t) {
  PassManager pm(module.getContext());
  buildTrainingPipeline(pm);
  if (succeeded(pm.run(module)))
    return true;
  ADD_FAILURE() << ::testing::PrintToString(t.messages);
  return false;
}

// loss = sum(w * c), so dloss/dw = c.
const char *kLinearLoss = R"(
module attributes {tg.optimizer = {name = "adam", beta1 = 0.8 : f32,
                                   beta2 = 0.9 : f32, epsilon = 1.0e-3 : f32}} {
  tg.variable @w trainable init(zeros) : tensor<2xf32>
  func.func @loss(%c: tensor<2xf32>) -> tensor<f32> {
    %w = tg.load @w : tensor<2xf32>
    %p = tg.mul %w, %c : tensor<2xf32>
    %l = tg.reduce_sum %p dims [0] : tensor<2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
)";

/// @train_step's inputs for kLinearLoss: c, lr, step, then the optimizer
/// step's controls (gradient weight, accumulation phase, clipping norm,
/// weight decay) and Adam's run-time betas and epsilon (by default the
/// module's, as f32).
std::vector<HostTensor> stepInputs(HostTensor c, double lr, int step,
                                   double weight = 1.0, int phase = 0,
                                   double clip = 0.0, double decay = 0.0,
                                   float beta1 = 0.8f, float beta2 = 0.9f,
                                   float epsilon = 1.0e-3f) {
  return {std::move(c),
          HostTensor::scalar(lr),
          HostTensor::scalar(step, ElementType::I32),
          HostTensor::scalar(weight),
          HostTensor::scalar(phase, ElementType::I32),
          HostTensor::scalar(clip),
          HostTensor::scalar(decay),
          HostTensor::scalar(beta1),
          HostTensor::scalar(beta2),
          HostTensor::scalar(epsilon)};
}

TEST(AdamStep, TwoStepsEqualTheHandComputedUpdate) {
  // The hyperparameters are f32 attributes (0.9f = 0.9 - 2.4e-8, so 1 - beta2
  // is off by 2.4e-7 relative); a missing bias correction would be off by 1e-1.
  const double kTol = 1e-6;
  Program program(kLinearLoss, Precision::F64);
  ASSERT_TRUE(program.ok()) << program.diagnostics();
  ASSERT_TRUE(runTrainingPipeline(*program.module, program.t));
  // The pipeline declared the moments: interpret the module as it is now.
  program.interp = std::make_unique<Interpreter>(*program.module, Precision::F64);
  Interpreter &interp = *program.interp;
  *interp.variable("w") = HostTensor::f32({2}, {1.0, -2.0});

  // Step 1, g = (0.5, -3), lr = 0.1. Bias correction makes m^ = g and
  // v^ = g^2, so w -= 0.1 * g / (|g| + 1e-3).
  auto step1 = program.run(
      "train_step", stepInputs(HostTensor::f32({2}, {0.5, -3.0}), 0.1, 1));
  ASSERT_EQ(step1.size(), 2u);
  EXPECT_DOUBLE_EQ(step1[0][0], 1.0 * 0.5 + (-2.0) * (-3.0)); // loss at w0
  EXPECT_NEAR(step1[1][0], std::sqrt(0.25 + 9.0), kTol);      // |g|
  EXPECT_NEAR((*interp.variable("adam.m.w"))[0], 0.2 * 0.5, kTol);
  EXPECT_NEAR((*interp.variable("adam.v.w"))[1], 0.1 * 9.0, kTol);
  EXPECT_NEAR((*interp.variable("w"))[0], 1.0 - 0.1 * 0.5 / 0.501, kTol);
  EXPECT_NEAR((*interp.variable("w"))[1], -2.0 + 0.1 * 3.0 / 3.001, kTol);

  // Step 2, g = (1, 1), lr = 0.05:
  //   m = 0.8 m1 + 0.2 g, v = 0.9 v1 + 0.1 g^2,
  //   w -= 0.05 * (m / (1 - 0.8^2)) / (sqrt(v / (1 - 0.9^2)) + 1e-3).
  program.run("train_step",
              stepInputs(HostTensor::f32({2}, {1.0, 1.0}), 0.05, 2));
  double m0 = 0.8 * 0.1 + 0.2, v0 = 0.9 * 0.025 + 0.1;
  double m1 = 0.8 * -0.6 + 0.2, v1 = 0.9 * 0.9 + 0.1;
  double w0 = 1.0 - 0.1 * 0.5 / 0.501, w1 = -2.0 + 0.1 * 3.0 / 3.001;
  EXPECT_NEAR((*interp.variable("w"))[0],
              w0 - 0.05 * (m0 / 0.36) / (std::sqrt(v0 / 0.19) + 1e-3), kTol);
  EXPECT_NEAR((*interp.variable("w"))[1],
              w1 - 0.05 * (m1 / 0.36) / (std::sqrt(v1 / 0.19) + 1e-3), kTol);
}

// Adam's betas and epsilon are the step's inputs: other values than the
// module's (its attributes, the defaults) give the hand-computed update with
// those. Step 2 (after a first step with g = (0.5, -3), lr = 0.1) with
// beta1 0.5, beta2 0.75, eps 0.01.
TEST(AdamStep, RunTimeBetasAndEpsilonEqualTheHandComputedUpdate) {
  const double kTol = 1e-6;
  Program program(kLinearLoss, Precision::F64);
  ASSERT_TRUE(program.ok()) << program.diagnostics();
  ASSERT_TRUE(runTrainingPipeline(*program.module, program.t));
  program.interp = std::make_unique<Interpreter>(*program.module, Precision::F64);
  Interpreter &interp = *program.interp;
  *interp.variable("w") = HostTensor::f32({2}, {1.0, -2.0});
  const float b1 = 0.5f, b2 = 0.75f, eps = 0.01f;
  program.run("train_step",
              stepInputs(HostTensor::f32({2}, {0.5, -3.0}), 0.1, 1, 1.0, 0,
                         0.0, 0.0, b1, b2, eps));
  // Step 1: m^ = g, v^ = g^2, so w -= 0.1 * g / (|g| + eps).
  double w0 = 1.0 - 0.1 * 0.5 / (0.5 + eps), w1 = -2.0 + 0.1 * 3.0 / (3.0 + eps);
  EXPECT_NEAR((*interp.variable("w"))[0], w0, kTol);
  EXPECT_NEAR((*interp.variable("adam.m.w"))[0], (1 - b1) * 0.5, kTol);
  EXPECT_NEAR((*interp.variable("adam.v.w"))[1], (1 - b2) * 9.0, kTol);
  program.run("train_step",
              stepInputs(HostTensor::f32({2}, {1.0, 1.0}), 0.05, 2, 1.0, 0,
                         0.0, 0.0, b1, b2, eps));
  double m0 = b1 * (1 - b1) * 0.5 + (1 - b1), v0 = b2 * (1 - b2) * 0.25 + (1 - b2);
  double m1 = b1 * (1 - b1) * -3.0 + (1 - b1), v1 = b2 * (1 - b2) * 9.0 + (1 - b2);
  double c1 = 1 - double(b1) * b1, c2 = 1 - double(b2) * b2;
  EXPECT_NEAR((*interp.variable("w"))[0],
              w0 - 0.05 * (m0 / c1) / (std::sqrt(v0 / c2) + eps), kTol);
  EXPECT_NEAR((*interp.variable("w"))[1],
              w1 - 0.05 * (m1 / c1) / (std::sqrt(v1 / c2) + eps), kTol);
}

// AdamW: a parameter marked weight_decay(true) also loses lr * wd of its
// value before the step, w -= lr (g / (|g| + eps) + wd w); the same rank-1
// parameter unmarked does not decay (the rule spares biases and norms).
TEST(AdamStep, DecoupledWeightDecayEqualsTheHandComputedUpdate) {
  const double kTol = 1e-6;
  for (bool marked : {true, false}) {
    std::string text = kLinearLoss;
    if (marked)
      text.replace(text.find("trainable"), 9, "trainable weight_decay(true)");
    Program program(text, Precision::F64);
    ASSERT_TRUE(program.ok()) << program.diagnostics();
    ASSERT_TRUE(runTrainingPipeline(*program.module, program.t));
    program.interp =
        std::make_unique<Interpreter>(*program.module, Precision::F64);
    Interpreter &interp = *program.interp;
    *interp.variable("w") = HostTensor::f32({2}, {1.0, -2.0});
    program.run("train_step",
                stepInputs(HostTensor::f32({2}, {0.5, -3.0}), 0.1, 1, 1.0, 0,
                           0.0, /*decay=*/0.5));
    double decay = marked ? 0.5 : 0.0;
    EXPECT_NEAR((*interp.variable("w"))[0],
                1.0 - 0.1 * (0.5 / 0.501 + decay * 1.0), kTol)
        << "marked " << marked;
    EXPECT_NEAR((*interp.variable("w"))[1],
                -2.0 - 0.1 * (-3.0 / 3.001 + decay * -2.0), kTol)
        << "marked " << marked;
  }
}

// Clipping: g = (3, 4) has norm 5; with clip 1 the step uses (0.6, 0.8).
// Adam's first step is sign-like (w -= lr g / (|g| + eps)), so the moments
// show the scaling: m = (1 - beta1) g'.
TEST(OptimizerStep, ClippingScalesTheGradientToTheClipNorm) {
  const double kTol = 1e-6;
  Program program(kLinearLoss, Precision::F64);
  ASSERT_TRUE(program.ok()) << program.diagnostics();
  ASSERT_TRUE(runTrainingPipeline(*program.module, program.t));
  program.interp =
      std::make_unique<Interpreter>(*program.module, Precision::F64);
  Interpreter &interp = *program.interp;
  auto result = program.run(
      "train_step", stepInputs(HostTensor::f32({2}, {3.0, 4.0}), 0.1, 1,
                               /*weight=*/1.0, /*phase=*/0, /*clip=*/1.0));
  ASSERT_EQ(result.size(), 2u);
  EXPECT_NEAR(result[1][0], 5.0, kTol); // the norm before clipping
  EXPECT_NEAR((*interp.variable("adam.m.w"))[0], 0.2 * 0.6, kTol);
  EXPECT_NEAR((*interp.variable("adam.m.w"))[1], 0.2 * 0.8, kTol);
  EXPECT_NEAR((*interp.variable("w"))[0], -0.1 * 0.6 / 0.601, kTol);
  // Above the norm, clipping changes nothing.
  program.run("train_step", stepInputs(HostTensor::f32({2}, {3.0, 4.0}), 0.1, 2,
                                       1.0, 0, /*clip=*/10.0));
  EXPECT_NEAR((*interp.variable("adam.m.w"))[0], 0.8 * 0.12 + 0.2 * 3.0, kTol);
}

// Accumulation: batch 1 (phase 1, weight 0.25) only accumulates; batch 2
// (phase 3, weight 0.75) updates with 0.25 g1 + 0.75 g2, as one batch of
// both would. Phase 2 without phase 1 first is an error.
TEST(OptimizerStep, AccumulationEqualsTheWeightedSum) {
  const double kTol = 1e-6;
  Program program(kLinearLoss, Precision::F64);
  ASSERT_TRUE(program.ok()) << program.diagnostics();
  ASSERT_TRUE(runTrainingPipeline(*program.module, program.t));
  program.interp =
      std::make_unique<Interpreter>(*program.module, Precision::F64);
  Interpreter &interp = *program.interp;
  *interp.variable("w") = HostTensor::f32({2}, {1.0, -2.0});
  auto first =
      program.run("train_step", stepInputs(HostTensor::f32({2}, {4.0, 0.0}),
                                           0.1, 1, 0.25, /*phase=*/1));
  ASSERT_EQ(first.size(), 2u);
  EXPECT_NEAR(first[1][0], 1.0, kTol); // |0.25 * (4, 0)|
  EXPECT_EQ((*interp.variable("w"))[0], 1.0);
  EXPECT_EQ((*interp.variable("adam.m.w"))[0], 0.0);
  auto last =
      program.run("train_step", stepInputs(HostTensor::f32({2}, {0.0, 4.0}),
                                           0.1, 1, 0.75, /*phase=*/3));
  ASSERT_EQ(last.size(), 2u);
  EXPECT_NEAR(last[1][0], std::sqrt(1.0 + 9.0), kTol); // |(1, 3)|
  EXPECT_NEAR((*interp.variable("adam.m.w"))[0], 0.2 * 1.0, kTol);
  EXPECT_NEAR((*interp.variable("adam.m.w"))[1], 0.2 * 3.0, kTol);
  EXPECT_NEAR((*interp.variable("w"))[1], -2.0 - 0.1 * 3.0 / 3.001, kTol);

  Program fresh(kLinearLoss, Precision::F64);
  ASSERT_TRUE(runTrainingPipeline(*fresh.module, fresh.t));
  fresh.interp = std::make_unique<Interpreter>(*fresh.module, Precision::F64);
  EXPECT_TRUE(failed(fresh.interp->run(
      "train_step",
      stepInputs(HostTensor::f32({2}, {1.0, 1.0}), 0.1, 1, 1.0, /*phase=*/2))));
  EXPECT_NE(fresh.diagnostics().find("phase 2 continues an accumulation "
                                     "that phase 1 did not start"),
            std::string::npos)
      << fresh.diagnostics();
}

/// The tiny Transformer without dropout for batches of `batchSize`, through
/// the training pipeline, on the interpreter in double.
std::unique_ptr<InterpreterTrainer>
tinyTrainer(TestContext &t, OwningOpRef<ModuleOp> &module, int64_t batchSize) {
  models::TransformerConfig config = *models::transformerPreset("tiny");
  config.set_batch_size(batchSize);
  config.set_dropout(0.0);
  config.set_attention_dropout(0.0);
  auto built = buildGraph(t.context, "loss", [&](tgc::Builder &b) {
    models::buildTransformer(b, config);
  });
  if (failed(built) || !runTrainingPipeline(**built, t))
    return nullptr;
  module = std::move(*built);
  auto trainer = InterpreterTrainer::create(*module, Precision::F64, 1);
  return succeeded(trainer) ? std::move(*trainer) : nullptr;
}

/// Rows [begin, begin + rows) of `batch`.
runtime::Batch rowsOf(const runtime::Batch &batch, int64_t begin,
                      int64_t rows) {
  runtime::Batch part = batch;
  part.batchSize = rows;
  auto slice = [&](std::vector<int32_t> &ids, int64_t length) {
    ids.assign(ids.begin() + begin * length,
               ids.begin() + (begin + rows) * length);
  };
  slice(part.source, batch.sourceLength);
  slice(part.targetIn, batch.targetLength);
  slice(part.targetOut, batch.targetLength);
  return part;
}

// --update-freq: two batches of 4 accumulated into each update equal one
// batch of the same 8 sentences, through the training loop (weights by
// target tokens, phases) on the interpreter in double: 3 updates, every
// variable (Adam moments included) within 1e-7 relative (the batches'
// weights are floats: 6e-8 relative; measured worst 2e-8).
TEST(TrainingStep, AccumulatedBatchesEqualOneLargerBatch) {
  TestContext t;
  OwningOpRef<ModuleOp> smallModule, largeModule;
  auto small = tinyTrainer(t, smallModule, 4);
  auto large = tinyTrainer(t, largeModule, 8);
  ASSERT_TRUE(small && large) << ::testing::PrintToString(t.messages);
  runtime::BatchShape largeShape = large->batchShape();
  auto largeBatch = [&](uint32_t seed, uint64_t index) {
    return runtime::makeBatch(runtime::Task::Reverse, seed, index, largeShape);
  };
  runtime::TrainingLoop one{*large};
  one.batch = largeBatch;
  one.schedule = large->schedule();
  one.lastStep = 3;
  one.logEvery = 100;
  runtime::TrainingLoop two{*small};
  two.batch = [&](uint32_t seed, uint64_t index) {
    return rowsOf(largeBatch(seed, index / 2), 4 * (index % 2), 4);
  };
  two.schedule = small->schedule();
  two.lastStep = 3;
  two.logEvery = 100;
  two.updateFreq = 2;
  ASSERT_EQ(runtime::runTrainingLoop(one), 0);
  ASSERT_EQ(runtime::runTrainingLoop(two), 0);
  int compared = 0;
  largeModule->walk([&](tg::VariableOp variable) {
    const HostTensor &a = *large->interpreter().variable(variable.getSymName());
    const HostTensor &b = *small->interpreter().variable(variable.getSymName());
    ASSERT_EQ(a.numElements(), b.numElements());
    for (int64_t i = 0; i < a.numElements(); ++i)
      ASSERT_NEAR(b[i], a[i], 1e-7 * std::max(1.0, std::abs(a[i])))
          << "@" << variable.getSymName().str() << "[" << i << "]";
    ++compared;
  });
  EXPECT_EQ(compared, 183); // 61 parameters, 2 moments each
}

TEST(TrainingStep, TinyTransformerLearnsTheCopyTask) {
  // The tiny preset's shapes with a batch and learning rate that learn in a
  // few hundred steps; dropout off keeps the run short.
  TestContext t;
  models::TransformerConfig config = *models::transformerPreset("tiny");
  config.set_batch_size(16);
  config.set_lr_factor(0.5);
  config.set_dropout(0.0);
  config.set_attention_dropout(0.0);
  auto built = buildGraph(t.context, "loss", [&](tgc::Builder &b) {
    models::buildTransformer(b, config);
  });
  ASSERT_TRUE(succeeded(built)) << ::testing::PrintToString(t.messages);
  ASSERT_TRUE(runTrainingPipeline(**built, t));
  auto trainer = InterpreterTrainer::create(**built, Precision::F32, 1);
  ASSERT_TRUE(succeeded(trainer)) << ::testing::PrintToString(t.messages);

  // Instrumented (test/sanitizers.sh), the interpreter is about 8x slower:
  // the same ops on fewer steps, which must still lower the loss; the
  // first stage checks how far.
#ifdef TGC_SANITIZED_BUILD
  const int64_t steps = 60, window = 10;
  const double bound = 2.5;
#else
  const int64_t steps = 300, window = 20;
  const double bound = 1.2;
#endif
  double first = 0.0, last = 0.0;
  for (int64_t step = 1; step <= steps; ++step) {
    runtime::Batch batch = runtime::makeBatch(
        runtime::Task::Copy, 1, step - 1, (*trainer)->batchShape());
    auto result = (*trainer)->step(batch);
    ASSERT_TRUE(succeeded(result)) << ::testing::PrintToString(t.messages);
    if (step == 1)
      first = result->loss;
    if (step > steps - window)
      last += result->loss / window;
  }
  std::printf("copy task: loss %.3f at step 1, %.3f averaged over steps "
              "%lld-%lld (label-smoothing floor 0.565)\n",
              first, last, static_cast<long long>(steps - window + 1),
              static_cast<long long>(steps));
  // Uniform over 16 tokens is ~2.8; the smoothed targets' entropy is 0.565.
  EXPECT_GT(first, 2.5);
  EXPECT_LT(last, bound);
}

} // namespace
