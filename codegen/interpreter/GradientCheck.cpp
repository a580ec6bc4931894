//===- GradientCheck.cpp - gradients against central differences ---------===//
#include "codegen/interpreter/GradientCheck.h"

#include "ir/TgOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <algorithm>
#include <cmath>
#include <random>

using namespace mlir;

namespace tgc {

namespace {
/// The result attribute tg-autodiff puts on each gradient it returns
/// (passes/Passes.h's kGradientOfAttr; the interpreter does not link the
/// passes).
constexpr llvm::StringLiteral kGradientOf = "tg.gradient_of";
} // namespace

double VariableGradientCheck::worstError() const {
  double worst = 0.0;
  for (const GradientEntry &entry : entries)
    worst = std::max(worst, std::isnan(entry.error) ? INFINITY : entry.error);
  return worst;
}

double mixedError(double actual, double expected) {
  double abs = std::fabs(actual - expected);
  return std::min(abs, abs / std::max(std::fabs(expected), 1e-300));
}

FailureOr<std::vector<VariableGradientCheck>>
checkGradients(Interpreter &interpreter, ModuleOp module,
               llvm::StringRef function, llvm::ArrayRef<HostTensor> args,
               const GradientCheckOptions &options) {
  auto func = module.lookupSymbol<func::FuncOp>(function);
  if (!func)
    return module.emitError() << "no function @" << function
                              << " to check the gradients of";
  // The analytic pass must leave the state the probes read as it was: a
  // loss that stores (a running statistic) would otherwise be probed with
  // the stored values, and a right gradient reported wrong.
  std::vector<std::pair<std::string, HostTensor>> state;
  for (auto variable : module.getOps<tg::VariableOp>())
    if (HostTensor *value = interpreter.variable(variable.getSymName()))
      state.emplace_back(variable.getSymName().str(), *value);
  FailureOr<std::vector<HostTensor>> analytic =
      interpreter.run(function, args);
  for (auto &[name, value] : state)
    *interpreter.variable(name) = std::move(value);
  if (failed(analytic))
    return failure();
  bool runFailed = false;
  // The probes compute the loss alone: the backward ops are skipped.
  auto loss = [&]() -> double {
    FailureOr<HostTensor> result = interpreter.evaluate(function, args, 0);
    if (failed(result)) {
      runFailed = true;
      return NAN;
    }
    return (*result)[0];
  };

  std::mt19937_64 rng(options.seed);
  std::vector<VariableGradientCheck> checks;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    auto of = func.getResultAttrOfType<FlatSymbolRefAttr>(i, kGradientOf);
    if (!of)
      continue;
    if (!interpreter.variable(of.getValue()))
      return func.emitError() << "result " << i << " is the gradient of @"
                              << of.getValue() << ", which is not a variable";
    const HostTensor &grad = (*analytic)[i];
    VariableGradientCheck check;
    check.variable = of.getValue().str();
    check.allZero = std::all_of(grad.data.begin(), grad.data.end(),
                                [](double g) { return g == 0.0; });
    int64_t n = interpreter.variable(of.getValue())->numElements();
    int64_t samples = std::min(n, options.samplesPerVariable);
    std::uniform_int_distribution<int64_t> anyIndex(0, std::max<int64_t>(n - 1, 0));
    for (int64_t s = 0; s < samples; ++s) {
      int64_t index = samples == n ? s : anyIndex(rng);
      // A run may replace the variables' storage: look the entry up anew.
      auto entry = [&]() -> double & {
        return (*interpreter.variable(of.getValue()))[index];
      };
      double saved = entry();
      entry() = saved + options.step;
      double up = loss();
      entry() = saved - options.step;
      double down = loss();
      entry() = saved;
      if (runFailed)
        return failure();
      double numeric = (up - down) / (2 * options.step);
      check.entries.push_back(
          {index, grad[index], numeric, mixedError(grad[index], numeric)});
    }
    checks.push_back(std::move(check));
  }
  return checks;
}

} // namespace tgc
