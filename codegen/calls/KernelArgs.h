//===- KernelArgs.h - what the kernel-call writers share -------*- C++ -*-===//
//
// Each family file (codegen/calls/<Family>.cpp) writes the calls of its ops
// into runtime/kernels/{cpu,cuda}/Kernels.h: it resolves operand and result
// pointers through KernelArgs, passes the static shapes and attributes as
// literals with the helpers below, and attaches its writers to the ops as
// tg::KernelCallOpInterface models (KernelCallModel). The helpers live here
// because several families use them.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_CALLS_KERNELARGS_H
#define TGC_CODEGEN_CALLS_KERNELARGS_H

#include "codegen/lowering/EmitContext.h"

#include "ir/TgOps.h"

#include "llvm/ADT/APFloat.h"

#include <string>

namespace tgc::cpp {

/// Collects pointer expressions; the first failure sticks.
class KernelArgs {
public:
  explicit KernelArgs(EmitContext &context) : context(context) {}

  /// Where `value` is for the kernels (device memory on CUDA).
  std::string operator()(mlir::Value value) {
    return value ? take(context.pointer(value)) : "nullptr";
  }
  /// Where the host reads `value` (a dropout key, a constant).
  std::string host(mlir::Value value) {
    return take(context.hostPointer(value));
  }
  /// The decoding position (a host int).
  std::string position(mlir::Value value) {
    return take(context.position(value));
  }
  /// The target the call is written for.
  const ProgramTarget &target() const { return context.target(); }

  bool ok = true;

private:
  std::string take(mlir::FailureOr<std::string> ptr) {
    ok = ok && mlir::succeeded(ptr);
    return mlir::succeeded(ptr) ? *ptr : "";
  }

  EmitContext &context;
};

/// The product of `dims` (1 for none).
int64_t product(llvm::ArrayRef<int64_t> dims);

/// "true" or "false".
std::string b(bool value);

/// The target's kernels::Dropout of the site (ProgramTarget::dropoutSite), or a disabled
/// one without a key or at rate 0 (inference). With `runTime` (the step's
/// dropout rate input) the rate is that host scalar, read when the step
/// runs. `elements` is the size of the tensor the site applies to (its
/// index offset in a data-parallel run, codegen/lowering/DataParallel.h).
std::string dropout(KernelArgs &p, mlir::Value key, llvm::APFloat rate,
                    mlir::Value runTime, uint64_t opId, mlir::Operation *op,
                    int64_t elements);

/// rows x width of a tensor normalized over its last dimension.
std::string rowsWidth(mlir::Value value);

/// A writer of ops of class OpT as the op's tg::KernelCallOpInterface: one
/// op's call, as C++ text; failure with a diagnostic at the op.
template <typename OpT, mlir::FailureOr<std::string> (*Write)(
                            KernelArgs &, EmitContext &, OpT)>
struct KernelCallModel
    : tg::KernelCallOpInterface::ExternalModel<KernelCallModel<OpT, Write>,
                                               OpT> {
  mlir::FailureOr<std::string> writeKernelCall(mlir::Operation *op,
                                               KernelArgs &args,
                                               EmitContext &context) const {
    return Write(args, context, llvm::cast<OpT>(op));
  }
};

} // namespace tgc::cpp

#endif // TGC_CODEGEN_CALLS_KERNELARGS_H
