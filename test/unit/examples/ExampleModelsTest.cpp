//===- ExampleModelsTest.cpp - the example model files' gradients --------===//
//
// The example models (models/examples/), linked in as a tgc_add_model
// driver links them, registered by name: tg-autodiff of each one's loss
// against central differences in f64 on the interpreter, for a sample of
// entries of every parameter tensor, with dropout on (a fixed key).
//
//===----------------------------------------------------------------------===//
#include "test/unit/passes/GradientCheck.h"

#include "frontend/ModelRegistry.h"
#include "ir/TgOps.h"

#include <cstdio>

using namespace mlir;
using namespace tgc;
using namespace tgc::test;

namespace {

class ExampleModelGradient : public ::testing::TestWithParam<const char *> {};

TEST_P(ExampleModelGradient, EveryParameterMatchesCentralDifferences) {
  const ModelDefinition *model = lookupModel(GetParam());
  ASSERT_NE(model, nullptr) << GetParam() << " is not registered";
  // The tiny preset, with the shape pinned here for the batch below.
  runtime::BatchShape shape{4, 8, 8, 16};
  ModelOptions options{"tiny", ""};
  options.batchSize = shape.batchSize;
  options.sourceLength = shape.sourceLength;
  options.targetLength = shape.targetLength;
  options.vocabulary = shape.vocabulary;
  TestContext t;
  auto built = model->build(t.context, options);
  ASSERT_TRUE(succeeded(built)) << ::testing::PrintToString(t.messages);
  ModuleOp module = **built;
  ASSERT_TRUE(differentiate(module, t));

  Interpreter interp(module, Precision::F64);
  initializePerturbed(interp, module);

  runtime::Batch batch = runtime::makeBatch(runtime::Task::Reverse, 9, 0, shape);
  GradientTestOptions check;
  check.samplesPerVariable = 3;
  check.tolerance = 1e-5;
  double worst = checkGradients(interp, module, lossArguments(batch, 11, 1), check);
  EXPECT_TRUE(t.messages.empty()) << ::testing::PrintToString(t.messages);
  RecordProperty("worst_error", std::to_string(worst));
  std::printf("%s: worst min(abs, rel) error %.3g\n", GetParam(), worst);
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleModelGradient,
                         ::testing::Values("pre_ln_transformer", "decoder_lm"));

} // namespace
