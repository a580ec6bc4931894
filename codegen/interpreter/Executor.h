//===- Executor.h - runs the ops of one function activation ----*- C++ -*-===//
//
// The interpreter's dispatch: each op runs through its
// tg::ReferenceOpInterface model (interpreter/ops/, one file per op family).
// A model reads its operands, calls the op's reference kernel
// (runtime/kernels/reference/Kernels.h) and binds the results; data the
// verifier cannot see (ids, targets, the Adam step) is checked there.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_INTERPRETER_EXECUTOR_H
#define TGC_CODEGEN_INTERPRETER_EXECUTOR_H

#include "codegen/interpreter/Interpreter.h"
#include "runtime/kernels/reference/HostTensor.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <vector>

namespace tgc::interp {

/// The element type tg uses for `type` (f32, i32 or bf16), if it is one of
/// those.
std::optional<ElementType> elementTypeOf(mlir::Type type);

/// Rounds every element of an f32 tensor to float (Precision::F32).
void roundToFloat(HostTensor &tensor);
/// Rounds every element to bf16 as tg.to_bf16 does.
void roundToBf16(HostTensor &tensor);

/// Holds the values of one function activation and executes its ops one by
/// one against the interpreter's variables.
class Executor {
public:
  Executor(llvm::StringMap<HostTensor> &variables,
           std::vector<double> &gradientAccumulator, Precision precision)
      : variables(variables), gradientAccumulator(gradientAccumulator),
        precision(precision) {}

  /// Executes `op`; on failure a diagnostic has been emitted at `op`.
  mlir::LogicalResult execute(mlir::Operation *op);

  // What the reference models use.
  /// Binds a block argument or op result, rounding it under Precision::F32.
  void bind(mlir::Value value, HostTensor tensor);
  const HostTensor &get(mlir::Value value) const {
    return values.find(value)->second;
  }
  HostTensor &variable(llvm::StringRef name) {
    return variables.find(name)->second;
  }
  Precision getPrecision() const { return precision; }
  /// The optimizer step's gradient accumulator (tg.multi_adam_update).
  std::vector<double> &accumulator() { return gradientAccumulator; }

  /// What func.return returned.
  std::vector<HostTensor> results;

private:
  llvm::StringMap<HostTensor> &variables;
  std::vector<double> &gradientAccumulator;
  Precision precision;
  llvm::DenseMap<mlir::Value, HostTensor> values;
};

} // namespace tgc::interp

#endif // TGC_CODEGEN_INTERPRETER_EXECUTOR_H
