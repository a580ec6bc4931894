//===- EmitContext.h - what the lowering's parts share ----------*- C++ -*-===//
//
// Where each value of the step lives, as a C++ expression, and small
// formatting helpers (defined in EmitContext.cpp). FileEmitter.cpp and
// ModelTable.cpp write the file (FileEmitter.h); ElementwiseExpressions.cpp
// the elementwise loops; codegen/calls/ the calls into
// runtime/kernels/{cpu,cuda}/Kernels.h (KernelCallModels.h). What differs
// between the targets the context asks of its ProgramTarget.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_LOWERING_EMITCONTEXT_H
#define TGC_CODEGEN_LOWERING_EMITCONTEXT_H

#include "codegen/StepSignature.h"
#include "codegen/lowering/ProgramTarget.h"

#include <vector>

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace tgc::cpp {

/// A float as a C++ literal that reads back exactly ("0.353553385f").
std::string floatLiteral(double value);
/// `value` as a C++ double literal that reads back exactly.
std::string doubleLiteral(double value);

/// "{2, 7, 16}".
std::string arrayLiteral(llvm::ArrayRef<int64_t> values);

/// `text` as a C++ string literal of the same bytes in ASCII: quotes and
/// backslashes escaped, control characters and bytes above 0x7e as octal
/// escapes; with `newlines`, '\n' also ends a source line.
std::string stringLiteral(llvm::StringRef text, bool newlines = false);

/// `op`'s row of a step's table of ops (runtime::StepOp, for --profile):
/// "{\"tg.matmul\", \"tg.matmul at file:line:col\", BYTES, FLOPS}", two
/// string literals and StepOpCost.h's two figures.
std::string stepOpRow(mlir::Operation *op);
/// The row of a step's call that is no op: its results' finish.
inline constexpr const char *kStepResultsRow =
    "{\"func.return\", \"the step's results\"}";

/// `text` (a name or location that comes from an input) made safe inside a
/// generated comment, `//` or `/* */`: control characters, backslashes (a
/// line continuation) and, in text that is not UTF-8, bytes above 0x7f
/// become '?', and "*/" cannot close the comment.
/// With stringLiteral, the only ways input text reaches generated source.
std::string commentText(llvm::StringRef text);

/// Static shape of a ranked tensor value.
llvm::ArrayRef<int64_t> shapeOf(mlir::Value value);
int64_t numElements(mlir::Value value);

/// The value of an f32 splat tg.constant read by elementwise loops, which
/// write it as a literal (no array, no load); nothing for other values.
std::optional<float> splatLiteral(mlir::Value value);
/// Whether every reader of `constant` writes it as a literal, so that no
/// array need be emitted for it.
bool onlyReadAsLiteral(mlir::Value constant);

class EmitContext {
public:
  /// `arguments[i]` is the expression of the function's argument #i;
  /// `cacheOffsets` places the bucket's decoding caches (tg.variable cache)
  /// in the frame's cache buffer.
  EmitContext(const ProgramTarget &target, std::vector<std::string> arguments,
              const llvm::StringMap<int64_t> &variableOffsets,
              const llvm::StringMap<int64_t> &cacheOffsets)
      : programTarget(target), arguments(std::move(arguments)),
        offsets(variableOffsets), cacheOffsets(cacheOffsets) {}

  /// What the program's target writes differently (the kernel calls ask
  /// it for scalar arguments, copies and the optimizer step).
  const ProgramTarget &target() const { return programTarget; }

  /// A pointer expression to `value`'s first element (float* or int32_t*),
  /// with a comment naming variables. Fails at the op that defines a value
  /// the plan did not place.
  mlir::FailureOr<std::string> pointer(mlir::Value value);

  /// Where tg-plan-memory placed an op's result: its byte offset in the
  /// arena. Fails at the op when the plan did not place it.
  static mlir::FailureOr<int64_t> arenaOffset(mlir::OpResult result);

  /// Where the host reads `value`: a constant's static array, the dropout
  /// key, or what the target says (the pointer itself where the kernels
  /// read host memory).
  mlir::FailureOr<std::string> hostPointer(mlir::Value value);

  /// Registers a constant emitted as static array `name`, which the
  /// kernels read as `kernelName` (ProgramTarget::placeConstant).
  void setConstant(mlir::Value value, std::string name,
                   std::string kernelName) {
    constants[value] = {std::move(name), std::move(kernelName)};
  }

  /// Where variable `name` starts: in the state buffer, or for a decoding
  /// cache in the cache buffer; with a comment naming it.
  std::string variableAddress(llvm::StringRef name) const;

  /// The host expression of a decoding function's `position` argument
  /// (an int32_t); fails for any other value.
  mlir::FailureOr<std::string> position(mlir::Value value);

  /// Offset, in floats, of variable `name` in the state buffer.
  int64_t variableOffset(llvm::StringRef name) const {
    return offsets.lookup(name);
  }
  const llvm::StringMap<int64_t> &variableOffsets() const { return offsets; }

private:
  struct Constant {
    std::string host, kernel;
  };
  const ProgramTarget &programTarget;
  std::vector<std::string> arguments;
  const llvm::StringMap<int64_t> &offsets;
  const llvm::StringMap<int64_t> &cacheOffsets;
  llvm::DenseMap<mlir::Value, Constant> constants;
};

} // namespace tgc::cpp

#endif // TGC_CODEGEN_LOWERING_EMITCONTEXT_H
