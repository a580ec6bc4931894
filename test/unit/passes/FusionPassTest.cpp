//===- FusionPassTest.cpp - fused vs unfused training graphs -------------===//
//
// The tiny Transformer differentiated with and without the forward fusion
// passes, dropout on (same Philox keys): the loss and the gradient of every
// parameter agree within a tolerance per precision. And the whole training
// step, with every fusion (forward, GEMM epilogues, elementwise groups, the
// multi-tensor Adam) or none: three steps give the same losses, parameters
// and Adam moments. And the CUDA emitter's call of tg.output_loss's kernel.
//
//===----------------------------------------------------------------------===//
#include "test/unit/passes/CompiledTransformer.h"
#include "test/unit/passes/GradientCheck.h"

#include "codegen/cuda/CudaEmitter.h"
#include "codegen/interpreter/InterpreterTrainer.h"
#include "models/Transformer.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::test;

namespace {

/// The tiny model's forward module after the passes `addPasses` adds.
OwningOpRef<ModuleOp>
compiledTiny(TestContext &t, function_ref<void(PassManager &)> addPasses) {
  return compiledTransformer(t, *models::transformerPreset("tiny"), addPasses);
}

/// The tiny model's @loss after `fuse ? fusion + autodiff : autodiff`.
OwningOpRef<ModuleOp> differentiatedTiny(TestContext &t, bool fuse) {
  return compiledTiny(t, [&](PassManager &pm) {
    if (fuse)
      buildForwardFusionPipeline(pm);
    pm.addPass(createTgAutodiff());
  });
}

std::vector<HostTensor> tinyBatch() {
  models::TransformerConfig c = *models::transformerPreset("tiny");
  runtime::BatchShape shape{c.batch_size(), c.source_length(),
                            c.target_length(), static_cast<int32_t>(c.vocab_size())};
  return lossArguments(runtime::makeBatch(runtime::Task::Reverse, 4, 0, shape),
                       21, 5);
}

class FusedVsUnfused : public ::testing::TestWithParam<Precision> {};

TEST_P(FusedVsUnfused, LossAndEveryGradientAgree) {
  TestContext t;
  OwningOpRef<ModuleOp> unfused = differentiatedTiny(t, false);
  OwningOpRef<ModuleOp> fused = differentiatedTiny(t, true);
  ASSERT_TRUE(unfused && fused);
  int attentions = 0, norms = 0;
  fused->walk([&](tg::AttentionOp) { ++attentions; });
  fused->walk([&](tg::ResidualLayerNormOp) { ++norms; });
  EXPECT_EQ(attentions, 6);
  EXPECT_EQ(norms, 10);

  Interpreter a(*unfused, GetParam()), b(*fused, GetParam());
  a.initializeVariables(2);
  b.initializeVariables(2);
  std::vector<HostTensor> args = tinyBatch();
  auto ra = a.run("loss", args), rb = b.run("loss", args);
  ASSERT_TRUE(succeeded(ra) && succeeded(rb)) << ::testing::PrintToString(t.messages);
  ASSERT_EQ(ra->size(), rb->size());

  // f64: only the summation order differs. f32: every op rounds to float,
  // and the fused ops round fewer intermediates.
  double tolerance = GetParam() == Precision::F64 ? 1e-10 : 2e-4;
  auto function = unfused->lookupSymbol<func::FuncOp>("loss");
  for (size_t i = 0; i < ra->size(); ++i) {
    auto of = function.getResultAttrOfType<FlatSymbolRefAttr>(i, kGradientOfAttr);
    std::string what = of ? "gradient of @" + of.getValue().str() : "result " + std::to_string(i);
    expectClose((*rb)[i], (*ra)[i], tolerance, what);
  }
}

INSTANTIATE_TEST_SUITE_P(Precisions, FusedVsUnfused,
                         ::testing::Values(Precision::F64, Precision::F32),
                         [](const ::testing::TestParamInfo<Precision> &info) {
                           return info.param == Precision::F64 ? "f64" : "f32";
                         });

/// The tiny model's training step, with or without every fusion pass.
OwningOpRef<ModuleOp> trainingStepTiny(TestContext &t, bool fuse) {
  return compiledTiny(t, [&](PassManager &pm) {
    TrainingPipelineOptions options;
    options.fuse = fuse;
    buildTrainingPipeline(pm, options);
  });
}

class StepFusedVsUnfused : public ::testing::TestWithParam<Precision> {};

TEST_P(StepFusedVsUnfused, ThreeStepsAgree) {
  TestContext t;
  OwningOpRef<ModuleOp> unfused = trainingStepTiny(t, false);
  OwningOpRef<ModuleOp> fused = trainingStepTiny(t, true);
  ASSERT_TRUE(unfused && fused);
  int linears = 0, groups = 0, adams = 0, singleAdams = 0;
  fused->walk([&](tg::LinearOp) { ++linears; });
  fused->walk([&](tg::FusedElementwiseOp) { ++groups; });
  fused->walk([&](tg::MultiAdamUpdateOp) { ++adams; });
  fused->walk([&](tg::AdamUpdateOp) { ++singleAdams; });
  EXPECT_EQ(linears, 8);
  EXPECT_GT(groups, 0);
  EXPECT_EQ(adams, 1);
  EXPECT_EQ(singleAdams, 0);

  auto a = InterpreterTrainer::create(*unfused, GetParam(), 7);
  auto b = InterpreterTrainer::create(*fused, GetParam(), 7);
  ASSERT_TRUE(succeeded(a) && succeeded(b)) << ::testing::PrintToString(t.messages);
  // f64: summation order only (measured worst 2e-15). f32: the fused ops
  // round fewer intermediates (measured worst 6e-7 after three steps).
  double tolerance = GetParam() == Precision::F64 ? 1e-12 : 1e-5;
  runtime::BatchShape shape = (*a)->batchShape();
  for (int step = 0; step < 3; ++step) {
    runtime::Batch batch = runtime::makeBatch(runtime::Task::Reverse, 5, step, shape);
    auto ra = (*a)->step(batch), rb = (*b)->step(batch);
    ASSERT_TRUE(succeeded(ra) && succeeded(rb)) << ::testing::PrintToString(t.messages);
    EXPECT_NEAR(rb->loss, ra->loss, tolerance * std::abs(ra->loss)) << "step " << step + 1;
  }
  unfused->walk([&](tg::VariableOp variable) {
    std::string name = variable.getSymName().str();
    expectClose(*(*b)->interpreter().variable(name),
                *(*a)->interpreter().variable(name), tolerance,
                "@" + name + " after 3 steps");
  });
}

INSTANTIATE_TEST_SUITE_P(Precisions, StepFusedVsUnfused,
                         ::testing::Values(Precision::F64, Precision::F32),
                         [](const ::testing::TestParamInfo<Precision> &info) {
                           return info.param == Precision::F64 ? "f64" : "f32";
                         });

// tg-compile-pipeline fuses the output projection and the loss by default,
// and the CUDA emitter calls its kernel (runtime/kernels/cuda/Loss.cu) as
// the C++ one does.
TEST(OutputLossFusion, TheCudaEmitterCallsItsKernel) {
  TestContext t;
  OwningOpRef<ModuleOp> module =
      compiledTiny(t, [](PassManager &pm) { buildCompilePipeline(pm); });
  ASSERT_TRUE(module);
  int fused = 0;
  module->walk([&](tg::OutputLossOp) { ++fused; });
  EXPECT_EQ(fused, 1);
  std::string source;
  llvm::raw_string_ostream os(source);
  CompiledModelInfo info;
  info.name = "transformer-tiny";
  EXPECT_TRUE(succeeded(emitCuda({*module}, info, os)))
      << ::testing::PrintToString(t.messages);
  EXPECT_NE(os.str().find("kernels::outputLoss("), std::string::npos);
}

} // namespace
