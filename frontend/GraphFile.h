//===- GraphFile.h - tg modules to and from graph files ----------*- C++ -*-===//
//
// A graph file (frontend/Graph.proto) holds what the DSL built: variables,
// one function of tg ops, and the optimizer/schedule declarations. Binary
// files use the `.tgpb` extension, text format `.pbtxt`. Reading a file back
// gives the same IR, locations included.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_FRONTEND_GRAPHFILE_H
#define TGC_FRONTEND_GRAPHFILE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/ADT/StringRef.h"

namespace tgc {

/// The version this tgc writes and the only one it reads.
constexpr unsigned kGraphFormatVersion = 1;

/// True for paths that name a graph file (.tgpb or .pbtxt).
bool isGraphFile(llvm::StringRef path);

/// `module` as the bytes of a graph file at `path` (text format for .pbtxt
/// and stdout, "-"), which the caller writes (tgc's checked writer). Emits a
/// diagnostic and fails on a module that is not a DSL graph.
mlir::LogicalResult graphFileBytes(mlir::ModuleOp module, llvm::StringRef path,
                                   std::string &bytes);

/// Reads `path` into a verified module; emits a diagnostic naming the file
/// (and the op, for malformed contents) and returns null on any error.
mlir::OwningOpRef<mlir::ModuleOp> readGraphFile(mlir::MLIRContext &context,
                                                llvm::StringRef path);

} // namespace tgc

#endif // TGC_FRONTEND_GRAPHFILE_H
