//===- OpCompletenessTest.cpp - every op has every concern it needs ------===//
//
// Each concern of a tg op is an interface that a library attaches as an
// external model, or a trait the op declares (ir/TgInterfaces.td,
// ir/TgBase.td); ir/OpConcerns.h says which op needs which. An op added to
// ir/TgOps*.td without one fails here, named with the concern and the
// folder its models live in (docs/adding-an-op.md).
//
//===----------------------------------------------------------------------===//
#include "test/unit/TestContext.h"

#include "ir/OpConcerns.h"

#include <gtest/gtest.h>

namespace tgc {
namespace {

std::vector<mlir::RegisteredOperationName> tgOps(mlir::MLIRContext &context) {
  std::vector<mlir::RegisteredOperationName> ops;
  for (mlir::RegisteredOperationName op : context.getRegisteredOperations())
    if (op.getDialectNamespace() == "tg")
      ops.push_back(op);
  return ops;
}

TEST(OpCompleteness, TheDialectHasOps) {
  test::TestContext t;
  // A broken registration would make every other check pass vacuously.
  EXPECT_GE(tgOps(t.context).size(), 40u);
}

TEST(OpCompleteness, EveryOpHasEveryConcernItNeeds) {
  test::TestContext t;
  for (const tg::MissingConcern &m : tg::missingOpConcerns(t.context))
    ADD_FAILURE() << m.op << " has no " << m.concern << " (see " << m.home
                  << ")";
}

TEST(OpCompleteness, TheConcernsAreAttached) {
  // The models come with the registry (tools/InitAll.h): spot-check one op
  // of each family per concern, so an extension that attaches nothing is
  // seen even if the rules above were loosened.
  test::TestContext t;
  auto has = [&](llvm::StringRef name, auto interface) {
    auto op = mlir::RegisteredOperationName::lookup(name, &t.context);
    return op && op->hasInterface<decltype(interface)>();
  };
  for (llvm::StringRef name : {"tg.add", "tg.matmul", "tg.layer_norm",
                               "tg.attention", "tg.cross_entropy",
                               "tg.variable", "tg.adam_update"})
    EXPECT_TRUE(has(name, tg::GradientOpInterface())) << name.str();
  for (llvm::StringRef name : {"tg.add", "tg.matmul", "tg.layer_norm",
                               "tg.attention", "tg.cross_entropy", "tg.load",
                               "tg.adam_update"})
    EXPECT_TRUE(has(name, tg::ReferenceOpInterface())) << name.str();
  for (llvm::StringRef name : {"tg.matmul", "tg.layer_norm", "tg.attention",
                               "tg.cross_entropy", "tg.store",
                               "tg.adam_update"})
    EXPECT_TRUE(has(name, tg::KernelCallOpInterface())) << name.str();
  for (llvm::StringRef name : {"tg.matmul", "tg.layer_norm", "tg.attention",
                               "tg.reshape", "tg.positional_encoding"})
    EXPECT_TRUE(has(name, tg::DecoderAxesOpInterface())) << name.str();
}

TEST(OpCompleteness, NonDifferentiableOpsSayWhy) {
  test::TestContext t;
  int reasons = 0;
  for (mlir::RegisteredOperationName op : tgOps(t.context)) {
    auto *gradient = op.getInterface<tg::GradientOpInterface>();
    if (!gradient)
      continue; // reported by EveryOpHasEveryConcernItNeeds
    if (std::optional<llvm::StringRef> reason =
            gradient->getNoGradientReason()) {
      EXPECT_FALSE(reason->empty()) << op.getStringRef().str();
      ++reasons;
    }
  }
  EXPECT_GT(reasons, 0);
}

} // namespace
} // namespace tgc
