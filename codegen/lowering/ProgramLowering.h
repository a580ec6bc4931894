//===- ProgramLowering.h - a planned model as one program file -*- C++ -*-===//
//
// The lowering shared by the C++ program (codegen/cpp/CppEmitter.h) and the
// CUDA program (codegen/cuda/CudaEmitter.h): each bucket's planned
// functions become one function per op and an entry that calls them in
// order, and the file defines tgc::runtime::kCompiledModel
// (runtime/program/CompiledStep.h), which the runtime's main drives. What
// the targets write differently is their ProgramTarget.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_LOWERING_PROGRAMLOWERING_H
#define TGC_CODEGEN_LOWERING_PROGRAMLOWERING_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace tgc {

/// What the generated file records about the model besides its modules.
struct CompiledModelInfo {
  std::string name; ///< "transformer-tiny"
  /// FNV-1a of the vocabulary the model was compiled for (tgc --corpus); 0
  /// when none, and then the binary accepts any data of its vocabulary size.
  uint64_t vocabularyHash = 0;
  /// What made the program (tools/driver/Manifest.h): its --version and
  /// what its checkpoints record. Lines separated by '\n'.
  std::string manifest;
  /// Where tgc's tools are (tools/driver/Toolchain.h): the program runs the
  /// tgc-data there for SentencePiece, unless $TGC_DATA names another.
  std::string toolsDirectory;
};

namespace cpp {

class ProgramTarget;

/// Writes each bucket's functions to `os` for `target`: one planned module
/// per static shape (batch, source length, target length), sharing the
/// variables, the state and one arena. Fails with a diagnostic at the
/// offending op (an op the lowering does not know, a missing plan, buckets
/// whose variables differ).
mlir::LogicalResult emitProgram(llvm::ArrayRef<mlir::ModuleOp> buckets,
                                const CompiledModelInfo &info,
                                ProgramTarget &target, llvm::raw_ostream &os);

} // namespace cpp
} // namespace tgc

#endif // TGC_CODEGEN_LOWERING_PROGRAMLOWERING_H
