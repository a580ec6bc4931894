//===- DecoderPassTest.cpp - incremental decoder vs @predict --------------===//
//
// tg-derive-decoder's @encode + @decode_step, run position by position, give
// the logits @predict gives for the whole prefix, on the tiny Transformer
// compiled as a binary is (the training pipeline with @predict), with
// random parameters and source and target lengths that differ. The
// reference interpreter runs both; its variables hold the caches between
// calls, as the generated code's cache buffer does.
//
//===----------------------------------------------------------------------===//
#include "test/unit/passes/CompiledTransformer.h"
#include "test/unit/passes/GradientCheck.h"

#include "models/Transformer.h"

#include <random>

using namespace mlir;
using namespace tgc;
using namespace tgc::test;

namespace {

constexpr int64_t kBatch = 3, kSource = 5, kTarget = 7;

OwningOpRef<ModuleOp> compiledTinyWithDecoder(TestContext &t) {
  models::TransformerConfig config = *models::transformerPreset("tiny");
  config.set_batch_size(kBatch);
  config.set_source_length(kSource);
  config.set_target_length(kTarget);
  return compiledTransformer(t, config, [](PassManager &pm) {
    TrainingPipelineOptions options;
    options.predict = true;
    buildTrainingPipeline(pm, options);
  });
}

/// Ids in [4, vocabulary); row r of the source has r trailing pads.
HostTensor randomIds(int64_t rows, int64_t length, int64_t vocabulary,
                     bool padded, std::mt19937 &rng) {
  std::uniform_int_distribution<int> id(4, static_cast<int>(vocabulary) - 1);
  HostTensor ids = HostTensor::i32({rows, length}, {});
  ids.data.resize(rows * length);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < length; ++i)
      ids[r * length + i] = padded && i >= length - r ? 0 : id(rng);
  return ids;
}

TEST(DecoderPass, StructureOfTheDerivedFunctions) {
  TestContext t;
  OwningOpRef<ModuleOp> module = compiledTinyWithDecoder(t);
  ASSERT_TRUE(module);
  auto encode = module->lookupSymbol<func::FuncOp>("encode");
  auto step = module->lookupSymbol<func::FuncOp>("decode_step");
  ASSERT_TRUE(encode && step);
  EXPECT_EQ(encode.getNumArguments(), 1u);
  EXPECT_EQ(encode.getNumResults(), 0u);
  // Two decoder layers: per layer a self-attention key and value cache,
  // cross-attention keys and values; one source padding mask.
  int caches = 0;
  for (auto variable : module->getOps<tg::VariableOp>())
    if (variable.getCache()) {
      ++caches;
      EXPECT_EQ(variable.getTensorType().getShape()[0], kBatch)
          << variable.getSymName().str();
    }
  EXPECT_EQ(caches, 9);
  int appends = 0, attentions = 0;
  step.walk([&](tg::StoreSliceOp) { ++appends; });
  step.walk([&](tg::AttentionOp attention) {
    ++attentions;
    EXPECT_EQ(llvm::cast<RankedTensorType>(attention.getQuery().getType())
                  .getShape()[2],
              1);
  });
  EXPECT_EQ(appends, 4);
  EXPECT_EQ(attentions, 4);
  // The encoder is not rerun per token: no source-length tensor other than
  // the cached ones (loaded) is computed by @decode_step.
  step.walk([&](Operation *op) {
    if (llvm::isa<tg::LoadOp>(op))
      return;
    for (Type type : op->getResultTypes()) {
      auto tensor = llvm::dyn_cast<RankedTensorType>(type);
      for (int64_t d = 1; tensor && d < tensor.getRank(); ++d)
        EXPECT_NE(tensor.getShape()[d], kSource)
            << op->getName().getStringRef().str() << " computes a tensor "
            << "with the source's length";
    }
  });
}

class DecoderMatchesPredict : public ::testing::TestWithParam<Precision> {};

TEST_P(DecoderMatchesPredict, LogitsOfEveryPosition) {
  TestContext t;
  OwningOpRef<ModuleOp> module = compiledTinyWithDecoder(t);
  ASSERT_TRUE(module);
  Interpreter interp(*module, GetParam());
  interp.initializeVariables(5);
  int64_t vocabulary = models::transformerPreset("tiny")->vocab_size();
  std::mt19937 rng(11);
  HostTensor source = randomIds(kBatch, kSource, vocabulary, true, rng);
  HostTensor target = randomIds(kBatch, kTarget, vocabulary, false, rng);
  for (int64_t r = 0; r < kBatch; ++r)
    target[r * kTarget] = 1; // BOS

  auto full = interp.run("predict", {source, target});
  ASSERT_TRUE(succeeded(full)) << ::testing::PrintToString(t.messages);
  const HostTensor &logits = full->front();
  ASSERT_TRUE(succeeded(interp.run("encode", {source})))
      << ::testing::PrintToString(t.messages);

  // f64: the same sums in another order. f32: every value rounds to float.
  double tolerance = GetParam() == Precision::F64 ? 1e-10 : 1e-4;
  for (int64_t position = 0; position < kTarget; ++position) {
    HostTensor ids = HostTensor::i32({kBatch, 1}, {});
    for (int64_t r = 0; r < kBatch; ++r)
      ids.data.push_back(target[r * kTarget + position]);
    auto one = interp.run("decode_step",
                          {ids, HostTensor::i32({}, {double(position)})});
    ASSERT_TRUE(succeeded(one)) << ::testing::PrintToString(t.messages);
    ASSERT_EQ(one->front().shape, (std::vector<int64_t>{kBatch, 1, vocabulary}));
    double worst = 0;
    for (int64_t r = 0; r < kBatch; ++r)
      for (int64_t v = 0; v < vocabulary; ++v)
        worst = std::max(worst,
                         std::abs(one->front()[r * vocabulary + v] -
                                  logits[(r * kTarget + position) * vocabulary + v]));
    EXPECT_LT(worst, tolerance) << "position " << position;
  }
}

TEST(DecoderPass, PositionOutsideTheCacheIsRefused) {
  TestContext t;
  OwningOpRef<ModuleOp> module = compiledTinyWithDecoder(t);
  ASSERT_TRUE(module);
  Interpreter interp(*module, Precision::F32);
  interp.initializeVariables(1);
  HostTensor ids = HostTensor::i32({kBatch, 1}, {1, 1, 1});
  auto result = interp.run("decode_step", {ids, HostTensor::i32({}, {double(kTarget)})});
  EXPECT_TRUE(failed(result));
  EXPECT_NE(::testing::PrintToString(t.messages).find("outside the 7 positions"),
            std::string::npos)
      << ::testing::PrintToString(t.messages);
}

/// Runs @decode_step of `module` (a [2, 4] target over a vocabulary of
/// 10) position by position: each step gives @predict's logits there.
void expectStepsMatchPredict(ModuleOp module, TestContext &t) {
  constexpr int64_t rows = 2, length = 4, vocabulary = 10;
  Interpreter interp(module, Precision::F64);
  interp.initializeVariables(7);
  std::mt19937 rng(3);
  HostTensor target = randomIds(rows, length, vocabulary, false, rng);
  auto full = interp.run("predict", {target});
  ASSERT_TRUE(succeeded(full)) << ::testing::PrintToString(t.messages);
  const HostTensor &logits = full->front();
  for (int64_t position = 0; position < length; ++position) {
    HostTensor ids = HostTensor::i32({rows, 1}, {});
    for (int64_t r = 0; r < rows; ++r)
      ids.data.push_back(target[r * length + position]);
    auto one = interp.run("decode_step",
                          {ids, HostTensor::i32({}, {double(position)})});
    ASSERT_TRUE(succeeded(one)) << ::testing::PrintToString(t.messages);
    ASSERT_EQ(one->front().shape, (std::vector<int64_t>{rows, 1, vocabulary}));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t v = 0; v < vocabulary; ++v)
        EXPECT_NEAR(one->front()[r * vocabulary + v],
                    logits[(r * length + position) * vocabulary + v], 1e-10)
            << "row " << r << ", position " << position;
  }
}

/// Reductions that keep the positions: over the features of the target
/// (reduce_mean), over its batch (reduce_max: the time axis moves from 1 to
/// 0) and over the features of a positional encoding @decode_step
/// recomputes for its position (reduce_sum). Each step gives @predict's
/// logits at its position.
TEST(DecoderPass, ReductionsKeepingThePositions) {
  TestContext t;
  const char *source = R"mlir(
    tg.variable @table trainable init(normal, 0.5) : tensor<10x8xf32>
    func.func @predict(%tin: tensor<2x4xi32> {tg.name = "target_in_ids"}) -> tensor<2x4x10xf32> {
      %e = tg.load @table : tensor<10x8xf32>
      %x = tg.embedding %e[%tin] : tensor<10x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
      %m = tg.reduce_mean %x dims [2] keep_dims : tensor<2x4x8xf32> -> tensor<2x4x1xf32>
      %mb = tg.broadcast %m dims [0, 1, 2] : tensor<2x4x1xf32> -> tensor<2x4x8xf32>
      %c = tg.sub %x, %mb : tensor<2x4x8xf32>
      %top = tg.reduce_max %x dims [0] : tensor<2x4x8xf32> -> tensor<4x8xf32>
      %tb = tg.broadcast %top dims [1, 2] : tensor<4x8xf32> -> tensor<2x4x8xf32>
      %pe = tg.positional_encoding : tensor<4x8xf32>
      %ps = tg.reduce_sum %pe dims [1] : tensor<4x8xf32> -> tensor<4xf32>
      %pb = tg.broadcast %ps dims [1] : tensor<4xf32> -> tensor<2x4x8xf32>
      %y = tg.add %c, %tb : tensor<2x4x8xf32>
      %z = tg.add %y, %pb : tensor<2x4x8xf32>
      %l = tg.matmul %z, %e transpose_rhs : tensor<2x4x8xf32>, tensor<10x8xf32> -> tensor<2x4x10xf32>
      return %l : tensor<2x4x10xf32>
    }
  )mlir";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &t.context);
  ASSERT_TRUE(module) << ::testing::PrintToString(t.messages);
  PassManager pm(&t.context);
  pm.addPass(createTgDeriveDecoder());
  ASSERT_TRUE(succeeded(pm.run(*module))) << ::testing::PrintToString(t.messages);
  auto step = module->lookupSymbol<func::FuncOp>("decode_step");
  ASSERT_TRUE(step);
  int reductions = 0;
  step.walk([&](Operation *op) {
    if (llvm::isa<tg::ReduceSumOp, tg::ReduceMeanOp, tg::ReduceMaxOp>(op))
      ++reductions;
  });
  EXPECT_EQ(reductions, 3);

  expectStepsMatchPredict(*module, t);
}

/// Learned positions cut to the bucket's length (a slice of the table along
/// the positions, from row 0 or a later one): @decode_step gathers the
/// table's row at its position.
TEST(DecoderPass, LearnedPositionsSlicedToTheLength) {
  TestContext t;
  const char *source = R"mlir(
    tg.variable @table trainable init(normal, 0.5) : tensor<10x8xf32>
    tg.variable @positions trainable init(normal, 0.5) : tensor<6x8xf32>
    func.func @predict(%tin: tensor<2x4xi32> {tg.name = "target_in_ids"}) -> tensor<2x4x10xf32> {
      %e = tg.load @table : tensor<10x8xf32>
      %p = tg.load @positions : tensor<6x8xf32>
      %x = tg.embedding %e[%tin] : tensor<10x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
      %first = tg.slice %p dim 0 start 0 : tensor<6x8xf32> -> tensor<4x8xf32>
      %later = tg.slice %p dim 0 start 2 : tensor<6x8xf32> -> tensor<4x8xf32>
      %both = tg.mul %first, %later : tensor<4x8xf32>
      %pb = tg.broadcast %both dims [1, 2] : tensor<4x8xf32> -> tensor<2x4x8xf32>
      %z = tg.add %x, %pb : tensor<2x4x8xf32>
      %l = tg.matmul %z, %e transpose_rhs : tensor<2x4x8xf32>, tensor<10x8xf32> -> tensor<2x4x10xf32>
      return %l : tensor<2x4x10xf32>
    }
  )mlir";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &t.context);
  ASSERT_TRUE(module) << ::testing::PrintToString(t.messages);
  PassManager pm(&t.context);
  pm.addPass(createTgDeriveDecoder());
  ASSERT_TRUE(succeeded(pm.run(*module))) << ::testing::PrintToString(t.messages);
  auto step = module->lookupSymbol<func::FuncOp>("decode_step");
  ASSERT_TRUE(step);
  int gathers = 0;
  step.walk([&](tg::GatherOp) { ++gathers; });
  EXPECT_EQ(gathers, 2);
  expectStepsMatchPredict(*module, t);
}

/// A table of positions built from constants (iota along the time axis,
/// scaled): @decode_step builds the table and gathers its row at the step's
/// position; a splat beside it is rebuilt with one position.
TEST(DecoderPass, ConstantPositionTables) {
  TestContext t;
  const char *source = R"mlir(
    tg.variable @table trainable init(normal, 0.5) : tensor<10x8xf32>
    func.func @predict(%tin: tensor<2x4xi32> {tg.name = "target_in_ids"}) -> tensor<2x4x10xf32> {
      %e = tg.load @table : tensor<10x8xf32>
      %x = tg.embedding %e[%tin] : tensor<10x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
      %i = tg.constant dense<[[0.0], [0.25], [0.5], [0.75]]> : tensor<4x1xf32>
      %one = tg.constant dense<1.0> : tensor<4x1xf32>
      %p = tg.add %i, %one : tensor<4x1xf32>
      %pb = tg.broadcast %p dims [1, 2] : tensor<4x1xf32> -> tensor<2x4x8xf32>
      %z = tg.mul %x, %pb : tensor<2x4x8xf32>
      %l = tg.matmul %z, %e transpose_rhs : tensor<2x4x8xf32>, tensor<10x8xf32> -> tensor<2x4x10xf32>
      return %l : tensor<2x4x10xf32>
    }
  )mlir";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &t.context);
  ASSERT_TRUE(module) << ::testing::PrintToString(t.messages);
  PassManager pm(&t.context);
  pm.addPass(createTgDeriveDecoder());
  ASSERT_TRUE(succeeded(pm.run(*module))) << ::testing::PrintToString(t.messages);
  auto step = module->lookupSymbol<func::FuncOp>("decode_step");
  ASSERT_TRUE(step) << ::testing::PrintToString(t.messages);
  int gathers = 0;
  step.walk([&](tg::GatherOp) { ++gathers; });
  EXPECT_EQ(gathers, 1);
  expectStepsMatchPredict(*module, t);
}

/// Rotary embeddings: of the target's embeddings as [B, 1, S, D] (a target
/// op: its clone turns by the step's position) and of learned positions
/// cut to the length (recomputed: the table's row turned by the position).
TEST(DecoderPass, RotaryAtTheStepsPosition) {
  TestContext t;
  const char *source = R"mlir(
    tg.variable @table trainable init(normal, 0.5) : tensor<10x8xf32>
    tg.variable @positions trainable init(normal, 0.5) : tensor<6x8xf32>
    func.func @predict(%tin: tensor<2x4xi32> {tg.name = "target_in_ids"}) -> tensor<2x4x10xf32> {
      %e = tg.load @table : tensor<10x8xf32>
      %x = tg.embedding %e[%tin] : tensor<10x8xf32>, tensor<2x4xi32> -> tensor<2x4x8xf32>
      %h = tg.reshape %x : tensor<2x4x8xf32> -> tensor<2x1x4x8xf32>
      %r = tg.rotary %h base 3.000000e+00 : tensor<2x1x4x8xf32>
      %y = tg.reshape %r : tensor<2x1x4x8xf32> -> tensor<2x4x8xf32>
      %p = tg.load @positions : tensor<6x8xf32>
      %first = tg.slice %p dim 0 start 0 : tensor<6x8xf32> -> tensor<4x8xf32>
      %turned = tg.rotary %first base 3.000000e+00 inverse : tensor<4x8xf32>
      %pb = tg.broadcast %turned dims [1, 2] : tensor<4x8xf32> -> tensor<2x4x8xf32>
      %z = tg.add %y, %pb : tensor<2x4x8xf32>
      %l = tg.matmul %z, %e transpose_rhs : tensor<2x4x8xf32>, tensor<10x8xf32> -> tensor<2x4x10xf32>
      return %l : tensor<2x4x10xf32>
    }
  )mlir";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &t.context);
  ASSERT_TRUE(module) << ::testing::PrintToString(t.messages);
  PassManager pm(&t.context);
  pm.addPass(createTgDeriveDecoder());
  ASSERT_TRUE(succeeded(pm.run(*module))) << ::testing::PrintToString(t.messages);
  auto step = module->lookupSymbol<func::FuncOp>("decode_step");
  ASSERT_TRUE(step);
  int atPosition = 0;
  step.walk([&](tg::RotaryOp rotary) {
    if (rotary.getOffset() == step.getArgument(1))
      ++atPosition;
  });
  EXPECT_EQ(atPosition, 2);
  expectStepsMatchPredict(*module, t);
}

INSTANTIATE_TEST_SUITE_P(Precisions, DecoderMatchesPredict,
                         ::testing::Values(Precision::F64, Precision::F32),
                         [](const auto &info) {
                           return info.param == Precision::F64 ? "F64" : "F32";
                         });

} // namespace
