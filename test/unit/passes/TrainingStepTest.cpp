//===- TrainingStepTest.cpp - Adam in the graph, and learning ------------===//
//
// The training step tg-training-pipeline builds: one Adam step equals the
// hand-computed update (bias correction included, hyperparameters from the
// module's tg.optimizer), and the tiny Transformer learns the copy task on
// the interpreter.
//
//===----------------------------------------------------------------------===//
#include "test/unit/passes/GradientCheck.h"

#include "codegen/InterpreterTrainer.h"
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
  auto step1 = program.run("train_step",
                           {HostTensor::f32({2}, {0.5, -3.0}),
                            HostTensor::scalar(0.1),
                            HostTensor::scalar(1, ElementType::I32)});
  ASSERT_EQ(step1.size(), 1u);
  EXPECT_DOUBLE_EQ(step1[0][0], 1.0 * 0.5 + (-2.0) * (-3.0)); // loss at w0
  EXPECT_NEAR((*interp.variable("adam.m.w"))[0], 0.2 * 0.5, kTol);
  EXPECT_NEAR((*interp.variable("adam.v.w"))[1], 0.1 * 9.0, kTol);
  EXPECT_NEAR((*interp.variable("w"))[0], 1.0 - 0.1 * 0.5 / 0.501, kTol);
  EXPECT_NEAR((*interp.variable("w"))[1], -2.0 + 0.1 * 3.0 / 3.001, kTol);

  // Step 2, g = (1, 1), lr = 0.05:
  //   m = 0.8 m1 + 0.2 g, v = 0.9 v1 + 0.1 g^2,
  //   w -= 0.05 * (m / (1 - 0.8^2)) / (sqrt(v / (1 - 0.9^2)) + 1e-3).
  program.run("train_step", {HostTensor::f32({2}, {1.0, 1.0}),
                             HostTensor::scalar(0.05),
                             HostTensor::scalar(2, ElementType::I32)});
  double m0 = 0.8 * 0.1 + 0.2, v0 = 0.9 * 0.025 + 0.1;
  double m1 = 0.8 * -0.6 + 0.2, v1 = 0.9 * 0.9 + 0.1;
  double w0 = 1.0 - 0.1 * 0.5 / 0.501, w1 = -2.0 + 0.1 * 3.0 / 3.001;
  EXPECT_NEAR((*interp.variable("w"))[0],
              w0 - 0.05 * (m0 / 0.36) / (std::sqrt(v0 / 0.19) + 1e-3), kTol);
  EXPECT_NEAR((*interp.variable("w"))[1],
              w1 - 0.05 * (m1 / 0.36) / (std::sqrt(v1 / 0.19) + 1e-3), kTol);
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

  const int64_t steps = 300, window = 20;
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
  EXPECT_LT(last, 1.2);
}

} // namespace
