//===- OpCompletenessTest.cpp - every op has a home in every layer -------===//
//
// Each op of the tg dialect must have: a reference interpreter handler
// (codegen/interpreter/OpHandlers.cpp), a gradient rule or a stated reason
// why it has none (passes/GradientRules.cpp), and code from the C++/CUDA
// emitters (codegen/cpu/). An op added to ir/TgOps*.td without them fails
// here, naming the op and the missing piece (docs/adding-an-op.md).
//
//===----------------------------------------------------------------------===//
#include "test/unit/TestContext.h"

#include "codegen/cpu/EmitContext.h"
#include "codegen/interpreter/Executor.h"
#include "passes/GradientRules.h"

#include <gtest/gtest.h>

namespace tgc {
namespace {

/// The registered ops of the tg dialect.
std::vector<mlir::RegisteredOperationName> tgOps(mlir::MLIRContext &context) {
  std::vector<mlir::RegisteredOperationName> ops;
  for (mlir::RegisteredOperationName op : context.getRegisteredOperations())
    if (op.getDialectNamespace() == "tg")
      ops.push_back(op);
  return ops;
}

/// Ops the interpreter does not dispatch, and why.
bool interpretedElsewhere(llvm::StringRef name) {
  // Declarations the Interpreter reads when it is created; the terminator
  // its parent (tg.fused_elementwise) reads.
  return name == "tg.variable" || name == "tg.yield";
}

TEST(OpCompleteness, TheDialectHasOps) {
  test::TestContext t;
  // A broken registration would make every other check pass vacuously.
  EXPECT_GE(tgOps(t.context).size(), 40u);
}

TEST(OpCompleteness, EveryOpHasAReferenceKernel) {
  test::TestContext t;
  for (mlir::RegisteredOperationName op : tgOps(t.context)) {
    if (!interpretedElsewhere(op.getStringRef())) {
      EXPECT_TRUE(interp::opHandlers().contains(op.getTypeID()))
          << op.getStringRef().str()
          << " has no handler in codegen/interpreter/OpHandlers.cpp";
    }
  }
}

TEST(OpCompleteness, EveryOpHasAGradientRuleOrAReasonWhyNot) {
  test::TestContext t;
  for (mlir::RegisteredOperationName op : tgOps(t.context)) {
    bool rule = hasGradientRule(op.getTypeID());
    bool marked = nonDifferentiableReason(op.getTypeID()).has_value();
    EXPECT_TRUE(rule || marked)
        << op.getStringRef().str()
        << " has no gradient rule and is not marked non-differentiable "
           "in passes/GradientRules.cpp";
    EXPECT_FALSE(rule && marked)
        << op.getStringRef().str()
        << " has a gradient rule and is also marked non-differentiable";
  }
}

TEST(OpCompleteness, EveryOpHasCpuAndCudaEmission) {
  test::TestContext t;
  // One emitter writes both targets (codegen/cpu/EmitContext.h); the
  // kernels it calls are declared once for both (KernelDeclarations.inc).
  for (mlir::RegisteredOperationName op : tgOps(t.context))
    EXPECT_TRUE(cpp::emitsOp(op))
        << op.getStringRef().str() << " has no C++/CUDA emission in codegen/cpu/";
}

} // namespace
} // namespace tgc
