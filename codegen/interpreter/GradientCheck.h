//===- GradientCheck.h - gradients against central differences --*- C++ -*-===//
//
// The oracle of tg-autodiff, for the compiler's tests and for users
// (`tgc --check-gradients`): given a module whose function tg-autodiff has
// differentiated (its results marked tg.gradient_of return the gradients),
// compares each returned gradient with (L(w + h) - L(w - h)) / 2h, the
// function re-run on the interpreter, for a sample of entries of every
// variable. Run it in Precision::F64: in f32 the difference is noise.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_INTERPRETER_GRADIENTCHECK_H
#define TGC_CODEGEN_INTERPRETER_GRADIENTCHECK_H

#include "codegen/interpreter/Interpreter.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tgc {

struct GradientCheckOptions {
  double step = 1e-6;
  /// Entries compared per variable (all of a smaller one).
  int64_t samplesPerVariable = 8;
  uint64_t seed = 1;
};

/// One compared entry of a variable's gradient.
struct GradientEntry {
  int64_t index;
  double analytic, numeric;
  /// min(absolute, relative) difference: relative where the gradient is
  /// large, absolute where it is near zero.
  double error;
};

struct VariableGradientCheck {
  std::string variable;
  std::vector<GradientEntry> entries;
  /// Whether the whole gradient (not only the sample) is zero: the loss
  /// does not depend on the variable, or something blocks its gradient.
  bool allZero = false;
  double worstError() const;
};

/// min(|a - b|, |a - b| / |b|).
double mixedError(double actual, double expected);

/// Compares every gradient that `function` of `module` returns with central
/// differences of its first result (the loss) run on `interpreter` with
/// `args`; the variables are left as they were. Fails after a diagnostic
/// if a run fails.
mlir::FailureOr<std::vector<VariableGradientCheck>>
checkGradients(Interpreter &interpreter, mlir::ModuleOp module,
               llvm::StringRef function, llvm::ArrayRef<HostTensor> args,
               const GradientCheckOptions &options = {});

} // namespace tgc

#endif // TGC_CODEGEN_INTERPRETER_GRADIENTCHECK_H
