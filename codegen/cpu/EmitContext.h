//===- EmitContext.h - what the C++ emitter's parts share -------*- C++ -*-===//
//
// Where each value of the step lives, as a C++ expression, and small
// formatting helpers (defined in EmitContext.cpp). CppEmitter.cpp and
// CppModelTable.cpp write the file (FileEmitter.h); CppElementwise.cpp the
// loops; CppKernelCalls.cpp the calls into runtime/kernels/cpu/Kernels.h.
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

/// `text` as a C++ string literal, quotes and backslashes escaped; with
/// `newlines`, '\n' is kept as an escape (else, as other control
/// characters, a space).
std::string stringLiteral(llvm::StringRef text, bool newlines = false);

/// Static shape of a ranked tensor value.
llvm::ArrayRef<int64_t> shapeOf(mlir::Value value);
int64_t numElements(mlir::Value value);

/// What the generated program runs on. The op-level emitters write the same
/// calls (`kernels::` is runtime/kernels/cpu's or runtime/kernels/cuda's namespace) and ask
/// the context where the differences are.
enum class Target { Cpu, Cuda };

class EmitContext {
public:
  /// `arguments[i]` is the expression of the function's argument #i;
  /// `cacheOffsets` places the bucket's decoding caches (tg.variable cache)
  /// in the frame's cache buffer.
  EmitContext(Target target, std::vector<std::string> arguments,
              const llvm::StringMap<int64_t> &variableOffsets,
              const llvm::StringMap<int64_t> &cacheOffsets)
      : target(target), arguments(std::move(arguments)),
        offsets(variableOffsets), cacheOffsets(cacheOffsets) {}

  Target getTarget() const { return target; }
  bool isCuda() const { return target == Target::Cuda; }

  /// A pointer expression to `value`'s first element (float* or int32_t*),
  /// with a comment naming variables. Fails at the op that defines a value
  /// the plan did not place.
  mlir::FailureOr<std::string> pointer(mlir::Value value);

  /// Where the host reads `value`: the same as pointer() on the CPU; on
  /// CUDA only constants and the dropout key have a host copy.
  mlir::FailureOr<std::string> hostPointer(mlir::Value value);

  /// Registers a constant emitted as static array `name` (on CUDA also
  /// copied to the device, `deviceName`).
  void setConstant(mlir::Value value, std::string name,
                   std::string deviceName = {}) {
    constants[value] = {std::move(name), std::move(deviceName)};
  }

  /// The state buffer's base pointer expression.
  std::string stateBase() const { return isCuda() ? "g.state" : "f.state"; }
  /// The decoding caches' base pointer expression (on CUDA in device
  /// memory, next to the state).
  std::string cacheBase() const { return isCuda() ? "g.cache" : "f.cache"; }

  /// Where variable `name` starts: in the state buffer, or for a decoding
  /// cache in the cache buffer; with a comment naming it.
  std::string variableAddress(llvm::StringRef name) const;

  /// The host expression of a decoding function's `position` argument
  /// (an int32_t); fails for any other value.
  mlir::FailureOr<std::string> position(mlir::Value value);

  /// A kernel argument taking scalar input `pointer` (lr, step): its value
  /// on the CPU, the device pointer itself on CUDA.
  std::string scalarArgument(const std::string &pointer) const {
    return isCuda() ? pointer : "*" + pointer;
  }

  /// A statement copying `bytes` from `source` to `target` (same memory).
  std::string copy(const std::string &target, const std::string &source,
                   int64_t bytes) const;

  /// Offset, in floats, of variable `name` in the state buffer.
  int64_t variableOffset(llvm::StringRef name) const {
    return offsets.lookup(name);
  }
  const llvm::StringMap<int64_t> &variableOffsets() const { return offsets; }

private:
  struct Constant {
    std::string host, device;
  };
  Target target;
  std::vector<std::string> arguments;
  const llvm::StringMap<int64_t> &offsets;
  const llvm::StringMap<int64_t> &cacheOffsets;
  llvm::DenseMap<mlir::Value, Constant> constants;
};

/// Writes the body of the function `name` for elementwise op or group `op`:
/// on the CPU one OpenMP loop; on CUDA a launch of a kernel `<name>_kernel`
/// whose definition goes to `kernels` (file scope, before the function).
mlir::LogicalResult emitElementwise(mlir::Operation *op, llvm::StringRef name,
                                    EmitContext &context, llvm::raw_ostream &os,
                                    llvm::raw_ostream &kernels);

/// Whether emitKernelCall writes a call for ops of this type.
bool hasKernelCall(mlir::TypeID op);

/// Whether the emitters (C++ and CUDA alike) write ops named `name`: a kernel
/// call, an elementwise loop, or what the function writer does itself
/// (aliases, constants, returns; variables at module level).
bool emitsOp(mlir::OperationName name);

/// Writes the body of the function for an op that calls a kernel. Returns
/// failure with a diagnostic for an op it does not know.
mlir::LogicalResult emitKernelCall(mlir::Operation *op, EmitContext &context,
                                   llvm::raw_ostream &os);

} // namespace tgc::cpp

#endif // TGC_CODEGEN_CPU_EMITCONTEXT_H
