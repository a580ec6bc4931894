//===- FileEmitter.h - the writer of one generated program file -*- C++ -*-===//
//
// A compiled model's buckets and the FileEmitter that writes them as one C++
// (or CUDA C++) file. Internal to the emitter: CppEmitter.cpp drives it and
// writes one function per op; CppModelTable.cpp lays out the state and the
// caches and writes the file's preamble and the model's tables.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_CPU_FILEEMITTER_H
#define TGC_CODEGEN_CPU_FILEEMITTER_H

#include "codegen/StepSignature.h"
#include "codegen/cpu/CppEmitter.h"
#include "codegen/cpu/EmitContext.h"

#include "ir/TgOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

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
  /// The decoding caches, packed in StepFrame::cache.
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

class FileEmitter {
public:
  FileEmitter(std::vector<Bucket> buckets, const CompiledModelInfo &info,
              cpp::Target target, llvm::raw_ostream &os)
      : buckets(std::move(buckets)), info(info), target(target), os(os) {}

  mlir::LogicalResult emit();

private:
  bool isCuda() const { return target == cpp::Target::Cuda; }

  // CppModelTable.cpp: the state, the caches, the preamble and the tables.
  mlir::LogicalResult layOutVariables();
  /// Packs the bucket's decoding caches (each cache-line aligned).
  mlir::LogicalResult layOutCaches(Bucket &bucket);
  /// Every bucket declares the same variables (their shapes never depend
  /// on the batch), so they share one state buffer.
  mlir::LogicalResult checkSameVariables(mlir::ModuleOp other);
  void emitHeader(int64_t arena);
  void emitCaches(const Bucket &bucket);
  void emitDeviceHooks(int64_t arenaBytes);
  void emitModel(int64_t arenaBytes);

  // CppEmitter.cpp: the functions.
  /// The ops of `function` as functions named `<prefix><N>_<op>`, then
  /// `entry`, which calls them in order.
  mlir::LogicalResult emitFunction(const Bucket &bucket, FunctionKind kind);
  void emitConstant(tg::ConstantOp op, llvm::StringRef name,
                    const Bucket &bucket, cpp::EmitContext &context);
  mlir::LogicalResult emitReturn(mlir::func::ReturnOp ret, FunctionKind kind,
                                 cpp::EmitContext &context,
                                 llvm::SmallVector<std::string> &calls);

  /// A CPU step's op call, for the non-finite checks and --profile.
  struct FiniteCheck {
    std::string condition; ///< true when a f32 result is not finite
    std::string what;      ///< "\"tg.matmul at file:line:col\""
    std::string kind;      ///< "\"tg.matmul\""
    bool updatesState = false; ///< Adam: skipped after a non-finite loss
  };
  mlir::LogicalResult noteFiniteCheck(mlir::Operation &op,
                                      llvm::StringRef call,
                                      cpp::EmitContext &context,
                                      llvm::StringMap<FiniteCheck> &checks);
  /// A CPU step's trainStep (Adam guarded by a finite loss),
  /// checkTrainStep (the runtime's search for the first non-finite op) and
  /// profileTrainStep with its table of ops (--profile).
  mlir::LogicalResult
  emitCheckedStep(mlir::func::FuncOp function,
                  llvm::ArrayRef<std::string> calls,
                  const llvm::StringMap<FiniteCheck> &checks,
                  const llvm::StringMap<double> &pairs,
                  cpp::EmitContext &context);
  /// `calls` as statements, each prefixed by `guard(call)`: the first of a
  /// pair (`pairs`: its name -> its share of the pair's multiply-adds) and
  /// the next call in one kernels::sideBySide; with `lap`, a lap of
  /// profileTrainStep's clock into seconds[i] after each (shared by a pair).
  void emitCalls(llvm::ArrayRef<std::string> calls,
                 const llvm::StringMap<double> &pairs,
                 llvm::function_ref<std::string(const std::string &)> guard,
                 bool lap);

  std::vector<Bucket> buckets;
  const CompiledModelInfo &info;
  cpp::Target target;
  llvm::raw_ostream &os;
  llvm::StringMap<int64_t> variableOffsets;
  llvm::SmallVector<tg::VariableOp> variables;
  int64_t stateFloats = 0;
  /// The trainable variables' elements: the gradient accumulator's size.
  int64_t gradientFloats = 0;
  /// CUDA: the constants to copy to the device, "dConstantN = ...(kConstantN)".
  llvm::SmallVector<std::string> constantUploads;
};

} // namespace tgc::cpp

#endif // TGC_CODEGEN_CPU_FILEEMITTER_H
