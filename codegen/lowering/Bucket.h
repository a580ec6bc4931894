//===- Bucket.h - one compiled shape of a generated program -----*- C++ -*-===//
//
// A program holds one bucket per static shape, each a planned module with
// its functions; the lowering walks them, and the targets name a bucket's
// functions and tables by its scope. Kept apart from FileEmitter.h because
// ProgramTarget.h needs the bucket but not the writer.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_LOWERING_BUCKET_H
#define TGC_CODEGEN_LOWERING_BUCKET_H

#include "codegen/StepSignature.h"

#include "ir/TgOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace tgc::cpp {

/// The functions a bucket may have.
enum class FunctionKind { Step, Predict, Encode, DecodeStep };

/// One compiled shape: its module (planned @train_step, maybe @predict and
/// the incremental decoder @encode, @decode_step with its caches).
struct Bucket {
  mlir::ModuleOp module;
  StepSignature signature;
  mlir::func::FuncOp predict, encode, decodeStep;
  /// "bucket_32x16x16": the C++ namespace of its functions; empty when the
  /// model has a single shape.
  std::string scope;
  /// The decoding caches, packed in the frame's cache buffer.
  llvm::SmallVector<tg::VariableOp> caches;
  llvm::StringMap<int64_t> cacheOffsets;
  int64_t cacheFloats = 0;

  mlir::func::FuncOp function(FunctionKind kind) const {
    switch (kind) {
    case FunctionKind::Step:
      return signature.function;
    case FunctionKind::Predict:
      return predict;
    case FunctionKind::Encode:
      return encode;
    case FunctionKind::DecodeStep:
      return decodeStep;
    }
    return {};
  }
};

/// `scope::name`, or `name` at file level.
inline std::string qualified(const Bucket &bucket, llvm::StringRef name) {
  return bucket.scope.empty() ? name.str() : bucket.scope + "::" + name.str();
}

} // namespace tgc::cpp

#endif // TGC_CODEGEN_LOWERING_BUCKET_H
