//===- FileEmitter.h - the writer of one generated program file -*- C++ -*-===//
//
// The FileEmitter writes a compiled model's buckets as one C++ (or CUDA
// C++) file for a ProgramTarget. Internal to the lowering: FileEmitter.cpp
// drives it and writes one function per op; ModelTable.cpp lays out the
// state and the caches and writes the file's preamble and the model's
// tables; ElementwiseExpressions.cpp writes the elementwise ops.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_LOWERING_FILEEMITTER_H
#define TGC_CODEGEN_LOWERING_FILEEMITTER_H

#include "codegen/StepSignature.h"
#include "codegen/lowering/Bucket.h"
#include "codegen/lowering/EmitContext.h"
#include "codegen/lowering/ProgramLowering.h"
#include "codegen/lowering/ProgramTarget.h"

#include "ir/TgOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace tgc::cpp {

class FileEmitter {
public:
  FileEmitter(std::vector<Bucket> buckets, const CompiledModelInfo &info,
              ProgramTarget &target, llvm::raw_ostream &os)
      : buckets(std::move(buckets)), info(info), target(target), os(os) {}

  mlir::LogicalResult emit();

private:
  // ModelTable.cpp: the state, the caches, the preamble and the tables.
  mlir::LogicalResult layOutVariables();
  /// Packs the bucket's decoding caches (each cache-line aligned).
  mlir::LogicalResult layOutCaches(Bucket &bucket);
  /// Every bucket declares the same variables (their shapes never depend
  /// on the batch), so they share one state buffer.
  mlir::LogicalResult checkSameVariables(mlir::ModuleOp other);
  /// Every variable a function of `kind` names has a place: in the state,
  /// or for the incremental decoder's functions in the bucket's caches.
  mlir::LogicalResult checkVariablePlaces(const Bucket &bucket,
                                          FunctionKind kind);
  void emitHeader(int64_t arena);
  void emitCaches(const Bucket &bucket);
  void emitModel(int64_t arenaBytes);

  // FileEmitter.cpp: the functions.
  /// The ops of `function` as functions named `<prefix><N>_<op>`, then
  /// `entry`, which calls them in order.
  mlir::LogicalResult emitFunction(const Bucket &bucket, FunctionKind kind);
  void emitConstant(tg::ConstantOp op, llvm::StringRef name,
                    const Bucket &bucket, cpp::EmitContext &context);
  mlir::LogicalResult emitReturn(mlir::func::ReturnOp ret, FunctionKind kind,
                                 cpp::EmitContext &context,
                                 llvm::SmallVector<OpCall> &calls);

  std::vector<Bucket> buckets;
  const CompiledModelInfo &info;
  ProgramTarget &target;
  llvm::raw_ostream &os;
  llvm::StringMap<int64_t> variableOffsets;
  llvm::SmallVector<tg::VariableOp> variables;
  int64_t stateFloats = 0;
  /// The trainable variables' elements: the gradient accumulator's size.
  int64_t gradientFloats = 0;
};

/// Writes the body of the function `name` for elementwise op or group `op`
/// (ElementwiseExpressions.cpp): one pass over the elements, which the
/// target writes as a loop or a kernel (`kernels`: file scope, before the
/// function) and its launch.
mlir::LogicalResult emitElementwise(mlir::Operation *op, llvm::StringRef name,
                                    EmitContext &context, llvm::raw_ostream &os,
                                    llvm::raw_ostream &kernels);

} // namespace tgc::cpp

#endif // TGC_CODEGEN_LOWERING_FILEEMITTER_H
