//===- VerifierTest.cpp - verifier messages on ops built in C++ ----------===//
#include "test/unit/TestContext.h"

#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace tgc;

namespace {

/// Builds `build`'s ops inside a function, verifies, returns the messages.
template <typename BuildFn>
std::vector<std::string> verifyBuilt(test::TestContext &t,
                                     llvm::ArrayRef<Type> argTypes,
                                     BuildFn build) {
  OpBuilder b(&t.context);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto func = b.create<func::FuncOp>(loc, "f", b.getFunctionType(argTypes, {}));
  Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  build(b, loc, body->getArguments());
  b.create<func::ReturnOp>(loc);
  t.messages.clear();
  EXPECT_TRUE(failed(verify(*module)));
  return t.messages;
}

TEST(Verifier, MatmulNamesBothShapesOnContractionMismatch) {
  test::TestContext t;
  auto messages = verifyBuilt(
      t, {t.f32({2, 7, 16}), t.f32({8, 64})},
      [&](OpBuilder &b, Location loc, ValueRange args) {
        b.create<tg::MatmulOp>(loc, t.f32({2, 7, 64}), args[0], args[1],
                               false, false);
      });
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0], "'tg.matmul' op contraction sizes differ: lhs "
                         "[2, 7, 16] contracts 16, rhs [8, 64] contracts 8");
}

TEST(Verifier, DynamicShapesAreRejectedByTheSharedRule) {
  test::TestContext t;
  auto dynamic = t.f32({ShapedType::kDynamic, 4});
  auto messages = verifyBuilt(t, {dynamic},
                              [&](OpBuilder &b, Location loc, ValueRange args) {
                                b.create<tg::ExpOp>(loc, args[0]);
                              });
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0], "'tg.exp' op operand #0 has type 'tensor<?x4xf32>': "
                         "tg tensors must have a static shape");
}

TEST(Verifier, DropoutRateOutsideUnitIntervalIsRejected) {
  test::TestContext t;
  auto messages = verifyBuilt(
      t, {t.f32({3}), t.i32({2})},
      [&](OpBuilder &b, Location loc, ValueRange args) {
        b.create<tg::DropoutOp>(loc, args[0], args[1], Value(),
                                b.getF32FloatAttr(1.0f),
                                b.getI64IntegerAttr(0));
      });
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0], "'tg.dropout' op rate must be in [0, 1) but is 1");
}

TEST(Verifier, AttentionChecksKeyAgainstQuery) {
  test::TestContext t;
  auto messages = verifyBuilt(
      t, {t.f32({2, 4, 7, 8}), t.f32({2, 4, 9, 6}), t.f32({2, 4, 9, 8})},
      [&](OpBuilder &b, Location loc, ValueRange args) {
        b.create<tg::AttentionOp>(loc, args[0], args[1], args[2],
                                  /*mask=*/Value(), /*rngKey=*/Value(),
                                  /*causal=*/false, 0.35f, 0.0f, 0);
      });
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0], "'tg.attention' op key must be [B, H, Sk, Dk] with B, "
                         "H, Dk of query [2, 4, 7, 8] but is [2, 4, 9, 6]");
}

} // namespace
