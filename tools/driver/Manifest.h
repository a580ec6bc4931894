//===- Manifest.h - what made a generated program ---------------*- C++ -*-===//
//
// One fact a line, each line starting with what it is about, so that two
// manifests compare line by line (runtime/program/checkpoint/ManifestCheck.h):
//
//   tgc 0.1.0 (MLIR 19.1.7), source 2078df3-dirty
//   model transformer-tiny: --model transformer --preset tiny --config c.pbtxt
//   config preset tiny
//   config d_model: 32                  (the resolved config, one field a line)
//   buckets 32x16x16
//   code fnv1a64 0x...                  (the generated C++ without the manifest)
//   compiler /usr/bin/c++ -std=c++20 -O3 ...
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TOOLS_DRIVER_MANIFEST_H
#define TGC_TOOLS_DRIVER_MANIFEST_H

#include "tools/driver/DriverOptions.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace tgc {

/// The manifest of the program compiled from `modules` (one per bucket) of
/// a model whose resolved config is `config` (one field a line; empty for a
/// file or a model that cannot say), whose generated code is `code`,
/// compiled with `compiler` (empty when tgc only writes the code).
std::string programManifest(const DriverOptions &options,
                            llvm::ArrayRef<mlir::ModuleOp> modules,
                            llvm::StringRef name, llvm::StringRef config,
                            llvm::StringRef code, llvm::StringRef compiler);

} // namespace tgc

#endif // TGC_TOOLS_DRIVER_MANIFEST_H
