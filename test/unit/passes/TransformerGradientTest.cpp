//===- TransformerGradientTest.cpp - autodiff of the whole tiny model ----===//
//
// tg-autodiff on the tiny Transformer's loss, checked against central
// differences in f64 for a sample of entries of every parameter tensor, with
// dropout on (a fixed key makes the masks part of the function).
//
//===----------------------------------------------------------------------===//
#include "test/unit/passes/GradientCheck.h"

#include "models/Transformer.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::test;

namespace {

TEST(TransformerGradient, EveryParameterMatchesCentralDifferences) {
  TestContext t;
  models::TransformerConfig config = *models::transformerPreset("tiny");
  auto built = buildGraph(t.context, "loss", [&](tgc::Builder &b) {
    models::buildTransformer(b, config);
  });
  ASSERT_TRUE(succeeded(built)) << ::testing::PrintToString(t.messages);
  ModuleOp module = **built;
  ASSERT_TRUE(differentiate(module, t));

  Interpreter interp(module, Precision::F64);
  initializePerturbed(interp, module);

  runtime::BatchShape shape{config.batch_size(), config.source_length(),
                            config.target_length(),
                            static_cast<int32_t>(config.vocab_size())};
  runtime::Batch batch = runtime::makeBatch(runtime::Task::Reverse, 9, 0, shape);
  std::vector<HostTensor> args = lossArguments(batch, 11, 1);

  GradientTestOptions options;
  options.samplesPerVariable = 3;
  options.tolerance = 1e-5;
  double worst = checkGradients(interp, module, args, options);
  EXPECT_TRUE(t.messages.empty()) << ::testing::PrintToString(t.messages);
  RecordProperty("worst_error", std::to_string(worst));
  std::printf("worst min(abs, rel) error over %zu parameter tensors: %.3g\n",
              static_cast<size_t>(std::distance(
                  module.getOps<tg::VariableOp>().begin(),
                  module.getOps<tg::VariableOp>().end())),
              worst);
}

} // namespace
