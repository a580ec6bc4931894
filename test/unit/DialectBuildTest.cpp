//===- DialectBuildTest.cpp - building tg modules through the C++ API ----===//
#include "test/unit/TestContext.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace tgc;

namespace {

/// A one-layer toy step built op by op: embedding, positions, a projection,
/// softmax, LayerNorm, loss and one Adam update.
OwningOpRef<ModuleOp> buildToyStep(test::TestContext &t) {
  OpBuilder b(&t.context);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());

  auto table = t.f32({10, 4});
  b.create<tg::VariableOp>(loc, "embedding", table, tg::InitKind::normal, 0.5,
                           /*trainable=*/true);
  b.create<tg::VariableOp>(loc, "adam.m.embedding", table, tg::InitKind::zeros,
                           std::nullopt, /*trainable=*/false);
  b.create<tg::VariableOp>(loc, "adam.v.embedding", table, tg::InitKind::zeros,
                           std::nullopt, /*trainable=*/false);
  auto gamma = t.f32({4});
  b.create<tg::VariableOp>(loc, "ln.gamma", gamma, tg::InitKind::ones,
                           std::nullopt, /*trainable=*/true);
  b.create<tg::VariableOp>(loc, "ln.beta", gamma, tg::InitKind::zeros,
                           std::nullopt, /*trainable=*/true);

  auto ids = t.i32({2, 3});
  auto key = t.i32({2});
  auto funcType = b.getFunctionType({ids, key, t.f32({}), t.i32({})},
                                    {t.f32({}), t.i32({})});
  auto func = b.create<func::FuncOp>(loc, "step", funcType);
  Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  Value tokens = body->getArgument(0), rngKey = body->getArgument(1);
  Value lr = body->getArgument(2), step = body->getArgument(3);

  Value emb = b.create<tg::LoadOp>(loc, table, "embedding");
  Value x = b.create<tg::EmbeddingOp>(loc, t.f32({2, 3, 4}), emb, tokens);
  x = b.create<tg::ScaleOp>(loc, x, b.getF32FloatAttr(2.0f));
  Value pe = b.create<tg::PositionalEncodingOp>(loc, t.f32({3, 4}));
  Value pe3 = b.create<tg::BroadcastOp>(loc, t.f32({2, 3, 4}), pe,
                                        b.getDenseI64ArrayAttr({1, 2}));
  x = b.create<tg::AddOp>(loc, x, pe3);
  x = b.create<tg::DropoutOp>(loc, x, rngKey, Value(), b.getF32FloatAttr(0.1f),
                              b.getI64IntegerAttr(0));
  Value g = b.create<tg::LoadOp>(loc, gamma, "ln.gamma");
  Value beta = b.create<tg::LoadOp>(loc, gamma, "ln.beta");
  x = b.create<tg::LayerNormOp>(loc, x, g, beta, 1e-6f);
  Value logits = b.create<tg::MatmulOp>(loc, t.f32({2, 3, 10}), x, emb,
                                        /*transpose_lhs=*/false,
                                        /*transpose_rhs=*/true);
  auto loss = b.create<tg::CrossEntropyOp>(
      loc, t.f32({}), t.i32({}), logits, tokens, Value(), b.getF32FloatAttr(0.1f),
      b.getI32IntegerAttr(0));
  Value one = b.create<tg::ConstantOp>(loc, DenseElementsAttr::get(t.f32({}), 1.0f));
  Value dlogits = b.create<tg::CrossEntropyGradOp>(
      loc, logits.getType(), one, logits, tokens, Value(), b.getF32FloatAttr(0.1f),
      b.getI32IntegerAttr(0));
  Value dx = b.create<tg::MatmulOp>(loc, t.f32({2, 3, 4}), dlogits, emb,
                                    false, false);
  Value dtable = b.create<tg::EmbeddingGradOp>(loc, table, dx, tokens);
  b.create<tg::AdamUpdateOp>(loc, "embedding", "adam.m.embedding",
                             "adam.v.embedding", dtable, lr, step, 0.9f, 0.98f,
                             1e-9f);
  b.create<func::ReturnOp>(loc, ValueRange{loss.getLoss(), loss.getTokens()});
  return module;
}

std::string print(Operation *op, bool generic = false) {
  std::string text;
  llvm::raw_string_ostream os(text);
  OpPrintingFlags flags;
  if (generic)
    flags.printGenericOpForm();
  op->print(os, flags);
  return text;
}

TEST(DialectBuild, ToyStepVerifies) {
  test::TestContext t;
  auto module = buildToyStep(t);
  EXPECT_TRUE(succeeded(verify(*module))) << ::testing::PrintToString(t.messages);
  EXPECT_TRUE(t.messages.empty());
}

TEST(DialectBuild, PrintParseRoundTripIsStable) {
  test::TestContext t;
  auto module = buildToyStep(t);
  for (bool generic : {false, true}) {
    std::string first = print(*module, generic);
    auto reparsed = parseSourceString<ModuleOp>(first, &t.context);
    ASSERT_TRUE(reparsed) << first;
    EXPECT_EQ(print(*reparsed, generic), first);
  }
}

TEST(DialectBuild, ConstantFoldsAndCseKeepsLoadsAroundStores) {
  test::TestContext t;
  const char *source = R"mlir(
    tg.variable @w init(ones) : tensor<2xf32>
    func.func @f(%v: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
      %a = tg.load @w : tensor<2xf32>
      %b = tg.load @w : tensor<2xf32>
      tg.store %v, @w : tensor<2xf32>
      %c = tg.load @w : tensor<2xf32>
      %s = tg.add %a, %b : tensor<2xf32>
      return %s, %b, %c : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
    }
  )mlir";
  auto module = parseSourceString<ModuleOp>(source, &t.context);
  ASSERT_TRUE(module);
  PassManager pm(&t.context);
  pm.addPass(createCSEPass());
  ASSERT_TRUE(succeeded(pm.run(*module)));
  int loads = 0;
  module->walk([&](tg::LoadOp) { ++loads; });
  // The two loads before the store merge; the one after it must not.
  EXPECT_EQ(loads, 2);
}

} // namespace
