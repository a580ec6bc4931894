//===- EmitContext.h - what the C++ emitter's parts share -------*- C++ -*-===//
//
// Where each value of the step lives, as a C++ expression, and small
// formatting helpers. CppEmitter.cpp writes the file; CppElementwise.cpp the
// loops; CppKernelCalls.cpp the calls into runtime/cpu/Kernels.h.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_CPU_EMITCONTEXT_H
#define TGC_CODEGEN_CPU_EMITCONTEXT_H

#include "codegen/StepSignature.h"

#include <vector>

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace tgc::cpp {

/// A float as a C++ literal that reads back exactly ("0.353553385f").
std::string floatLiteral(double value);

/// "{2, 7, 16}".
std::string arrayLiteral(llvm::ArrayRef<int64_t> values);

/// Static shape of a ranked tensor value.
llvm::ArrayRef<int64_t> shapeOf(mlir::Value value);
int64_t numElements(mlir::Value value);

class EmitContext {
public:
  /// `arguments[i]` is the expression of the function's argument #i.
  EmitContext(std::vector<std::string> arguments,
              const llvm::StringMap<int64_t> &variableOffsets)
      : arguments(std::move(arguments)), offsets(variableOffsets) {}

  /// A pointer expression to `value`'s first element (float* or int32_t*),
  /// with a comment naming variables. Fails at the op that defines a value
  /// the plan did not place.
  mlir::FailureOr<std::string> pointer(mlir::Value value);

  /// Registers a constant emitted as static array `name`.
  void setConstant(mlir::Value value, std::string name) {
    constants[value] = std::move(name);
  }

  /// Offset, in floats, of variable `name` in the state buffer.
  int64_t variableOffset(llvm::StringRef name) const {
    return offsets.lookup(name);
  }
  const llvm::StringMap<int64_t> &variableOffsets() const { return offsets; }

private:
  std::vector<std::string> arguments;
  const llvm::StringMap<int64_t> &offsets;
  llvm::DenseMap<mlir::Value, std::string> constants;
};

/// Writes the body of the function for elementwise op or group `op`.
mlir::LogicalResult emitElementwise(mlir::Operation *op, EmitContext &context,
                                    llvm::raw_ostream &os);

/// Writes the body of the function for an op that calls a kernel. Returns
/// failure with a diagnostic for an op it does not know.
mlir::LogicalResult emitKernelCall(mlir::Operation *op, EmitContext &context,
                                   llvm::raw_ostream &os);

} // namespace tgc::cpp

#endif // TGC_CODEGEN_CPU_EMITCONTEXT_H
