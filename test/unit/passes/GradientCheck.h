//===- GradientCheck.h - central differences against tg-autodiff -*- C++ -*-===//
//
// The oracle of the autodiff tests: run tg-autodiff on a module, then compare
// each gradient it returns with (L(w + h) - L(w - h)) / 2h on the f64
// interpreter, for a sample of entries of every trainable variable.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TEST_UNIT_PASSES_GRADIENTCHECK_H
#define TGC_TEST_UNIT_PASSES_GRADIENTCHECK_H

#include "test/unit/interpreter/InterpreterTestUtil.h"

#include "codegen/interpreter/GradientCheck.h"
#include "passes/Passes.h"
#include "runtime/data/Tasks.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace tgc::test {

/// Runs tg-autodiff on @loss; false (with a test failure) if it fails.
inline bool differentiate(mlir::ModuleOp module, TestContext &t) {
  mlir::PassManager pm(module.getContext());
  pm.addPass(createTgAutodiff());
  if (mlir::failed(pm.run(module))) {
    ADD_FAILURE() << "tg-autodiff failed:\n"
                  << ::testing::PrintToString(t.messages);
    return false;
  }
  return true;
}

/// The Transformer @loss's arguments for `batch`: the three id tensors and
/// the dropout key (seed, step).
inline std::vector<HostTensor> lossArguments(const runtime::Batch &batch,
                                             int32_t seed, int32_t step) {
  auto ids = [](const std::vector<int32_t> &v, int64_t rows, int64_t cols) {
    return HostTensor::i32({rows, cols}, std::vector<double>(v.begin(), v.end()));
  };
  return {ids(batch.source, batch.batchSize, batch.sourceLength),
          ids(batch.targetIn, batch.batchSize, batch.targetLength),
          ids(batch.targetOut, batch.batchSize, batch.targetLength),
          HostTensor::i32({2}, {double(seed), double(step)})};
}

/// Interpreter variables initialized as the program would, then every one
/// but the embedding moved by up to 0.1: biases and LayerNorm's beta start
/// at zero and gamma at one, and random values make every parameter's
/// gradient generic.
inline void initializePerturbed(Interpreter &interp, mlir::ModuleOp module) {
  interp.initializeVariables(3);
  Random random(5);
  for (auto variable : module.getOps<tg::VariableOp>())
    if (variable.getSymName() != "embedding")
      for (double &x : interp.variable(variable.getSymName())->data)
        x += random.uniform(-0.1, 0.1);
}

struct GradientTestOptions {
  double step = 1e-6;
  double tolerance = 1e-6;
  /// Entries checked per variable (all when the variable is smaller).
  int64_t samplesPerVariable = 8;
  uint64_t seed = 1;
};

/// Compares every gradient result of the differentiated @loss with central
/// differences (codegen/interpreter/GradientCheck.h), a test failure per
/// entry above the tolerance and per all-zero gradient. Returns the worst
/// min(abs, rel) error seen.
inline double checkGradients(Interpreter &interp, mlir::ModuleOp module,
                             llvm::ArrayRef<HostTensor> args,
                             const GradientTestOptions &options = {}) {
  auto checks = tgc::checkGradients(
      interp, module, "loss", args,
      {options.step, options.samplesPerVariable, options.seed});
  if (mlir::failed(checks)) {
    ADD_FAILURE() << "the interpreter failed";
    return INFINITY;
  }
  double worst = 0.0;
  for (const VariableGradientCheck &check : *checks) {
    EXPECT_FALSE(check.allZero)
        << "gradient of @" << check.variable << " is all zeros";
    for (const GradientEntry &entry : check.entries)
      EXPECT_LE(entry.error, options.tolerance)
          << "d loss / d @" << check.variable << "[" << entry.index
          << "]: autodiff " << entry.analytic << ", central difference "
          << entry.numeric;
    worst = std::max(worst, check.worstError());
  }
  return worst;
}

} // namespace tgc::test

#endif // TGC_TEST_UNIT_PASSES_GRADIENTCHECK_H
