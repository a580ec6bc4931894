//===- FrontendTest.cpp - the DSL: shape errors, names, the Transformer --===//
#include "test/unit/TestContext.h"

#include "frontend/Builder.h"
#include "frontend/Ops.h"
#include "models/Transformer.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlir;
using namespace tgc;

namespace {

/// Builds `body` and returns the diagnostics; the build must fail.
std::vector<std::string> buildErrors(test::TestContext &t,
                                     const std::function<void(tgc::Builder &)> &body) {
  t.messages.clear();
  EXPECT_TRUE(failed(buildGraph(t.context, "f", body)));
  return t.messages;
}

TEST(Frontend, ShapeErrorNamesCallerLineAndBothShapes) {
  test::TestContext t;
  int line = 0;
  std::string file;
  Location where = UnknownLoc::get(&t.context);
  t.context.getDiagEngine().registerHandler([&](Diagnostic &diag) {
    where = diag.getLocation();
    return failure(); // let the recording handler see it too
  });
  auto errors = buildErrors(t, [&](tgc::Builder &b) {
    Tensor x = b.input("x", {2, 7, 16}, DType::F32);
    Tensor w = b.param("w", {8, 64}, Init::xavierUniform());
    line = __LINE__ + 1;
    matmul(x, w);
  });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "matmul: contraction sizes differ: lhs [2, 7, 16], rhs [8, 64]");
  auto loc = llvm::dyn_cast<FileLineColLoc>(where);
  ASSERT_TRUE(loc);
  EXPECT_EQ(loc.getFilename().str(), __FILE__);
  EXPECT_EQ(static_cast<int>(loc.getLine()), line);
}

/// A model's helper that marks its call site (Builder::calledFrom).
Tensor projectTwice(tgc::Builder &b, Tensor x, Tensor w, int &failingLine,
                    std::source_location where = std::source_location::current()) {
  auto site = b.calledFrom(where);
  Tensor once = matmul(x, w);
  failingLine = __LINE__ + 1;
  return matmul(once, w);
}

TEST(Frontend, ErrorsInHelpersNameTheirCallSites) {
  test::TestContext t;
  std::vector<std::pair<int, std::string>> notes;
  int errorLine = 0;
  t.context.getDiagEngine().registerHandler([&](Diagnostic &diag) {
    if (auto loc = llvm::dyn_cast<FileLineColLoc>(diag.getLocation()))
      errorLine = static_cast<int>(loc.getLine());
    for (Diagnostic &note : diag.getNotes())
      if (auto loc = llvm::dyn_cast<FileLineColLoc>(note.getLocation()))
        notes.push_back({static_cast<int>(loc.getLine()), note.str()});
    return failure(); // the recording handler sees it too
  });
  int failingLine = 0, outerCall = 0, innerCall = 0;
  auto errors = buildErrors(t, [&](tgc::Builder &b) {
    Tensor x = b.input("x", {2, 8}, DType::F32);
    Tensor w = b.param("w", {8, 4}, Init::xavierUniform());
    auto outer = [&](Tensor v, std::source_location where =
                                   std::source_location::current()) {
      auto site = b.calledFrom(where);
      innerCall = __LINE__ + 1;
      return projectTwice(b, v, w, failingLine);
    };
    outerCall = __LINE__ + 1;
    outer(x);
  });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errorLine, failingLine);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0], std::make_pair(innerCall, std::string("called from here")));
  EXPECT_EQ(notes[1], std::make_pair(outerCall, std::string("called from here")));
}

TEST(Frontend, OperatorErrorsPointAtTheExpression) {
  test::TestContext t;
  auto errors = buildErrors(t, [&](tgc::Builder &b) {
    Tensor x = b.input("x", {2, 7, 16}, DType::F32);
    Tensor y = b.input("y", {2, 5, 16}, DType::F32);
    (void)(x + y);
  });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "shapes [2, 7, 16] + [2, 5, 16] do not broadcast");
}

TEST(Frontend, BroadcastingAddsBiasAlongTrailingDimensions) {
  test::TestContext t;
  auto module = buildGraph(t.context, "f", [&](tgc::Builder &b) {
    Tensor x = b.input("x", {2, 7, 16}, DType::F32);
    Tensor bias = b.param("bias", {16}, Init::zeros());
    Tensor ids = b.input("ids", {2, 7}, DType::I32);
    Tensor logits = x + bias;
    EXPECT_EQ(logits.shape(), llvm::ArrayRef<int64_t>({2, 7, 16}));
    LossAndTokens loss = crossEntropy(logits, ids, 0.1, 0);
    b.setLoss(loss.loss, loss.tokens);
    b.setSchedule({16, 100, 1.0});
  });
  ASSERT_TRUE(succeeded(module)) << ::testing::PrintToString(t.messages);
  int broadcasts = 0;
  (*module)->walk([&](tg::BroadcastOp op) {
    ++broadcasts;
    EXPECT_EQ(op.getDims(), llvm::ArrayRef<int64_t>({2}));
  });
  EXPECT_EQ(broadcasts, 1);
}

TEST(Frontend, NumbersAreOperandsOnEitherSide) {
  test::TestContext t;
  auto module = buildGraph(t.context, "f", [&](tgc::Builder &b) {
    Tensor x = b.input("x", {2, 3}, DType::F32);
    Tensor ids = b.input("ids", {2}, DType::I32);
    Tensor y = (x + 1.0) * 2.0 + 1 / (3.0 - x) - x / 4.0;
    Tensor z = maximum(y, 0.0) + minimum(0.5, y) + pow(y, 2.0) +
               where(less(y, 0.0), y, 0.0) + constant(0.25, {3}) +
               iota({2, 3}, 1) + reduceMin(y, {1}, true);
    LossAndTokens loss = crossEntropy(z, ids, 0.1, 0);
    b.setLoss(loss.loss, loss.tokens);
    b.setSchedule({3, 100, 1.0});
  });
  ASSERT_TRUE(succeeded(module)) << ::testing::PrintToString(t.messages);
  int splats = 0, scales = 0;
  std::vector<float> iotaValues;
  (*module)->walk([&](tg::ConstantOp op) {
    auto dense = llvm::cast<DenseElementsAttr>(op.getValue());
    if (dense.isSplat())
      ++splats;
    else
      for (const APFloat &v : dense.getValues<APFloat>())
        iotaValues.push_back(v.convertToFloat());
  });
  (*module)->walk([&](tg::ScaleOp) { ++scales; });
  // 1.0, 1, 3.0, 4.0, 0.0 (maximum), 0.5, 0.0 (less), 0.0 (where), 0.25
  EXPECT_EQ(splats, 9);
  EXPECT_EQ(scales, 1); // * 2.0: a finite factor is tg.scale
  EXPECT_EQ(iotaValues, std::vector<float>({0, 1, 2, 0, 1, 2}));
  int maxima = 0;
  (*module)->walk([&](tg::ReduceMaxOp) { ++maxima; });
  EXPECT_EQ(maxima, 1); // reduceMin is -reduceMax(-x)
}

TEST(Frontend, MadeTensorsCheckTheirShapes) {
  test::TestContext t;
  auto errors = buildErrors(t, [&](tgc::Builder &) { constant(1.0, {2, 0}); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "constant: shape [2, 0] needs positive dimensions");
  errors = buildErrors(t, [&](tgc::Builder &) { iota({4, 5}, 2); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "iota: dim 2 is out of range for shape [4, 5]");
  errors = buildErrors(t, [&](tgc::Builder &) { iota({1 << 13, 1 << 12}, 0); });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "iota: [8192, 4096] has more than 16777216 elements; "
                       "make a smaller one and broadcast it");
  errors = buildErrors(t, [&](tgc::Builder &b) {
    Tensor x = b.input("x", {2, 3}, DType::F32);
    where(x, x, b.input("y", {2, 4}, DType::F32));
  });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "where: shapes [2, 3], [2, 3] and [2, 4] do not broadcast");
  errors = buildErrors(t, [&](tgc::Builder &b) {
    Tensor x = b.input("x", {2, 3}, DType::F32);
    pow(x, INFINITY);
  });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "pow: the exponent must be finite");
}

TEST(Frontend, SlicesConcatSplitAndGatherShapes) {
  test::TestContext t;
  auto module = buildGraph(t.context, "f", [&](tgc::Builder &b) {
    Tensor x = b.input("x", {2, 6, 4}, DType::F32);
    Tensor ids = b.input("ids", {5}, DType::I32);
    Tensor targets = b.input("targets", {2, 4}, DType::I32);
    std::vector<Tensor> parts = split(x, -2, 3);
    ASSERT_EQ(parts.size(), 3u);
    EXPECT_EQ(parts[1].shape(), llvm::ArrayRef<int64_t>({2, 2, 4}));
    Tensor joined = concat({parts[2], parts[0]}, 1);
    EXPECT_EQ(joined.shape(), llvm::ArrayRef<int64_t>({2, 4, 4}));
    EXPECT_EQ(gather(x, ids, 1).shape(), llvm::ArrayRef<int64_t>({2, 5, 4}));
    EXPECT_EQ(slice(x, -1, 1, 2).shape(), llvm::ArrayRef<int64_t>({2, 6, 2}));
    // All of a dimension, and one tensor joined, are the input itself.
    EXPECT_EQ(slice(x, 0, 0, 2).value(), x.value());
    EXPECT_EQ(concat({x}, 1).value(), x.value());
    LossAndTokens loss = crossEntropy(joined, targets, 0.0, 0);
    b.setLoss(loss.loss, loss.tokens);
    b.setSchedule({4, 100, 1.0});
  });
  ASSERT_TRUE(succeeded(module)) << ::testing::PrintToString(t.messages);
  int slices = 0, concats = 0, gathers = 0;
  (*module)->walk([&](Operation *op) {
    slices += isa<tg::SliceOp>(op);
    concats += isa<tg::ConcatOp>(op);
    gathers += isa<tg::GatherOp>(op);
  });
  EXPECT_EQ(slices, 4);
  EXPECT_EQ(concats, 1);
  EXPECT_EQ(gathers, 1);
}

TEST(Frontend, SplitThatDoesNotDivideFailsAtTheCallersLine) {
  test::TestContext t;
  Location where = UnknownLoc::get(&t.context);
  t.context.getDiagEngine().registerHandler([&](Diagnostic &diag) {
    where = diag.getLocation();
    return failure(); // let the recording handler see it too
  });
  int line = 0;
  auto errors = buildErrors(t, [&](tgc::Builder &b) {
    Tensor x = b.input("x", {2, 6, 4}, DType::F32);
    line = __LINE__ + 1;
    split(x, 1, 4);
  });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0],
            "split: dim 1 of [2, 6, 4] (size 6) does not split into 4 equal parts");
  auto loc = llvm::dyn_cast<FileLineColLoc>(where);
  ASSERT_TRUE(loc);
  EXPECT_EQ(loc.getFilename().str(), __FILE__);
  EXPECT_EQ(static_cast<int>(loc.getLine()), line);
}

TEST(Frontend, StructuralOpsCheckShapes) {
  test::TestContext t;
  auto error = [&](const std::function<void(Tensor, Tensor)> &use) {
    auto errors = buildErrors(t, [&](tgc::Builder &b) {
      use(b.input("x", {2, 6, 4}, DType::F32), b.input("ids", {3}, DType::I32));
    });
    return errors.size() == 1 ? errors[0] : ::testing::PrintToString(errors);
  };
  EXPECT_EQ(error([](Tensor x, Tensor) { slice(x, 1, 4, 3); }),
            "slice: elements [4, 7) along dim 1 are not a non-empty part of "
            "[0, 6) (input [2, 6, 4])");
  EXPECT_EQ(error([](Tensor x, Tensor) { slice(x, 3, 0, 1); }),
            "slice: dim 3 is out of range for shape [2, 6, 4]");
  EXPECT_EQ(error([](Tensor x, Tensor) {
              concat({x, slice(x, 2, 0, 2)}, 1);
            }),
            "concat: input #1 [2, 6, 2] does not match input #0 [2, 6, 4] "
            "outside dim 1");
  EXPECT_EQ(error([](Tensor x, Tensor) { gather(x, x, 0); }),
            "gather: indices must be i32 but are f32 [2, 6, 4]");
  EXPECT_EQ(error([](Tensor, Tensor ids) { gather(ids, ids, 0); }),
            "gather: input must be f32 but is i32 [3]");
}

TEST(Frontend, RotaryKeepsTheShapeAndRecordsItsBase) {
  test::TestContext t;
  auto module = buildGraph(t.context, "f", [&](tgc::Builder &b) {
    Tensor q = b.input("q", {2, 3, 4}, DType::F32);
    Tensor targets = b.input("targets", {2, 3}, DType::I32);
    Tensor turned = rotary(q, 500000.0);
    EXPECT_EQ(turned.shape(), q.shape());
    LossAndTokens loss = crossEntropy(turned, targets, 0.0, 0);
    b.setLoss(loss.loss, loss.tokens);
    b.setSchedule({4, 100, 1.0});
  });
  ASSERT_TRUE(succeeded(module)) << ::testing::PrintToString(t.messages);
  int rotaries = 0;
  (*module)->walk([&](tg::RotaryOp op) {
    ++rotaries;
    EXPECT_EQ(op.getBase().convertToDouble(), 500000.0);
    EXPECT_FALSE(op.getInverse());
    EXPECT_FALSE(op.getOffset());
  });
  EXPECT_EQ(rotaries, 1);
}

TEST(Frontend, RotaryErrorsAtTheCallersLine) {
  test::TestContext t;
  Location where = UnknownLoc::get(&t.context);
  t.context.getDiagEngine().registerHandler([&](Diagnostic &diag) {
    where = diag.getLocation();
    return failure(); // let the recording handler see it too
  });
  int line = 0;
  auto errors = buildErrors(t, [&](tgc::Builder &b) {
    Tensor x = b.input("x", {2, 6, 5}, DType::F32);
    line = __LINE__ + 1;
    rotary(x);
  });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0],
            "rotary: the input must be [..., S, D] with D even, got [2, 6, 5]");
  auto loc = llvm::dyn_cast<FileLineColLoc>(where);
  ASSERT_TRUE(loc);
  EXPECT_EQ(loc.getFilename().str(), __FILE__);
  EXPECT_EQ(static_cast<int>(loc.getLine()), line);

  errors = buildErrors(t, [&](tgc::Builder &b) {
    rotary(b.input("x", {2, 6, 4}, DType::F32), 1.0);
  });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "rotary: the base must be finite and > 1, got 1.000000");
}

TEST(Frontend, RmsNormBuildsTheOpAndChecksItsShapesAtTheCallersLine) {
  test::TestContext t;
  auto module = buildGraph(t.context, "f", [&](tgc::Builder &b) {
    Tensor x = b.input("x", {2, 6, 4}, DType::F32);
    Tensor targets = b.input("targets", {2, 6}, DType::I32);
    Tensor gamma = b.param("gamma", {4}, Init::ones());
    Tensor y = rmsNorm(x, gamma, 1e-5);
    EXPECT_EQ(y.shape(), llvm::ArrayRef<int64_t>({2, 6, 4}));
    LossAndTokens loss = crossEntropy(y, targets, 0.0, 0);
    b.setLoss(loss.loss, loss.tokens);
    b.setSchedule({4, 100, 1.0});
  });
  ASSERT_TRUE(succeeded(module)) << ::testing::PrintToString(t.messages);
  int norms = 0;
  (*module)->walk([&](tg::RmsNormOp op) {
    ++norms;
    EXPECT_EQ(op.getEpsilon().convertToFloat(), 1e-5f);
  });
  EXPECT_EQ(norms, 1);

  Location where = UnknownLoc::get(&t.context);
  t.context.getDiagEngine().registerHandler([&](Diagnostic &diag) {
    where = diag.getLocation();
    return failure(); // let the recording handler see it too
  });
  int line = 0;
  auto errors = buildErrors(t, [&](tgc::Builder &b) {
    Tensor x = b.input("x", {2, 6, 4}, DType::F32);
    Tensor gamma = b.param("gamma", {6}, Init::ones());
    line = __LINE__ + 1;
    rmsNorm(x, gamma);
  });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0],
            "rmsNorm: gamma must have shape [4] for input [2, 6, 4], got [6]");
  auto loc = llvm::dyn_cast<FileLineColLoc>(where);
  ASSERT_TRUE(loc);
  EXPECT_EQ(loc.getFilename().str(), __FILE__);
  EXPECT_EQ(static_cast<int>(loc.getLine()), line);

  errors = buildErrors(t, [&](tgc::Builder &b) {
    rmsNorm(b.input("x", {2, 4}, DType::F32),
            b.param("gamma", {4}, Init::ones()), 0.0);
  });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "rmsNorm: epsilon must be positive");
}


TEST(Frontend, ParameterNamesAreHierarchicalAndUnique) {
  test::TestContext t;
  auto errors = buildErrors(t, [&](tgc::Builder &b) {
    auto encoder = b.scope("encoder");
    auto layer = b.scope("layer0");
    Tensor w = b.param("w_q", {4, 4}, Init::xavierUniform());
    EXPECT_TRUE(w);
    b.param("w_q", {4, 4}, Init::xavierUniform());
  });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "parameter 'encoder.layer0.w_q' is declared twice");
}

TEST(Frontend, InputsKeepTheirNamesInAScope) {
  // A program fills its inputs by name: "lm.target_in_ids" would be none of
  // them. So the same name twice is an error under the bare name.
  test::TestContext t;
  auto errors = buildErrors(t, [&](tgc::Builder &b) {
    auto lm = b.scope("lm");
    EXPECT_TRUE(b.input("target_in_ids", {2, 3}, DType::I32));
    b.input("target_in_ids", {2, 3}, DType::I32);
  });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "input 'target_in_ids' is declared twice");
}

TEST(Frontend, AModelWithoutLossIsAnError) {
  test::TestContext t;
  auto errors = buildErrors(t, [&](tgc::Builder &b) {
    b.input("x", {2}, DType::F32);
  });
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "model 'f' declares no loss (call Builder::setLoss)");
}

/// Sum of the element counts of the module's trainable variables.
int64_t trainableParameters(ModuleOp module) {
  int64_t total = 0;
  module.walk([&](tg::VariableOp variable) {
    if (variable.getTrainable())
      total += variable.getTensorType().getNumElements();
  });
  return total;
}

TEST(Transformer, BaseHasThePapersParameterCount) {
  test::TestContext t;
  auto config = models::transformerPreset("base");
  ASSERT_TRUE(config);
  auto module = buildGraph(t.context, "loss", [&](tgc::Builder &b) {
    models::buildTransformer(b, *config);
  });
  ASSERT_TRUE(succeeded(module)) << ::testing::PrintToString(t.messages);
  // Vocabulary 37000 (the paper's shared BPE), d=512, d_ff=2048, N=6:
  // 37000*512 + 6*(4*512^2 + 2*512*2048 + 2048 + 512 + 2*1024)
  //           + 6*(8*512^2 + 2*512*2048 + 2048 + 512 + 3*1024) = 63,045,632.
  EXPECT_EQ(trainableParameters(**module), 63045632);
  EXPECT_EQ(models::transformerParameterCount(*config), 63045632);
  // The paper reports ~65M for base (Table 3).
  EXPECT_NEAR(63045632.0 / 65e6, 1.0, 0.05);
}

TEST(Transformer, EveryPresetBuildsAndVerifies) {
  for (const std::string &preset : models::transformerPresets()) {
    test::TestContext t;
    auto config = models::transformerPreset(preset);
    ASSERT_TRUE(config) << preset;
    EXPECT_FALSE(models::validateTransformerConfig(*config)) << preset;
    auto module = buildGraph(t.context, "loss", [&](tgc::Builder &b) {
      models::buildTransformer(b, *config);
    });
    ASSERT_TRUE(succeeded(module)) << preset;
    EXPECT_EQ(trainableParameters(**module),
              models::transformerParameterCount(*config))
        << preset;
  }
}

TEST(Transformer, ConfigRulesNameTheField) {
  auto config = models::transformerPreset("tiny");
  config->set_num_heads(5);
  EXPECT_EQ(models::validateTransformerConfig(*config).value_or(""),
            "d_model (32) must be divisible by num_heads (5)");
  config = models::transformerPreset("tiny");
  config->set_dropout(1.0);
  EXPECT_EQ(models::validateTransformerConfig(*config).value_or(""),
            "dropout must be in [0, 1) but is 1");
  // Below 1 as a double, 1 as the f32 the step holds.
  config->set_dropout(0.99999999);
  EXPECT_EQ(models::validateTransformerConfig(*config).value_or(""),
            "dropout must be in [0, 1) but is 0.99999999 (1 as a 32-bit "
            "float, which the step uses)");
  // Ids 0-2 are padding, BOS and EOS: a vocabulary of 3 holds no token.
  config = models::transformerPreset("tiny");
  config->set_vocab_size(3);
  EXPECT_EQ(models::validateTransformerConfig(*config).value_or(""),
            "vocab_size must be at least 4 (ids 0-2 are padding, BOS and "
            "EOS, and one token) but is 3");
  config->set_vocab_size(4);
  EXPECT_FALSE(models::validateTransformerConfig(*config));
}

} // namespace
