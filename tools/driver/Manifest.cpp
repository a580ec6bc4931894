//===- Manifest.cpp - what made a generated program -----------------------===//
#include "tools/driver/Manifest.h"

#include "codegen/StepSignature.h"
#include "tools/driver/Version.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

namespace tgc {

namespace {

uint64_t fnv1a64(llvm::StringRef text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

} // namespace

std::string programManifest(const DriverOptions &options,
                            llvm::ArrayRef<mlir::ModuleOp> modules,
                            llvm::StringRef name, llvm::StringRef config,
                            llvm::StringRef code, llvm::StringRef compiler) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "tgc " << TGC_VERSION << " (MLIR " << TGC_MLIR_VERSION << "), source "
     << TGC_SOURCE_REVISION << "\n";
  os << "model " << name << ": ";
  if (options.fromModel()) {
    if (!options.modelFile.empty())
      os << "--model-file " << options.modelFile << " ";
    os << "--model " << options.modelName;
    if (!options.presetName.empty())
      os << " --preset " << options.presetName;
    if (!options.configFile.empty())
      os << " --config " << options.configFile;
  } else {
    os << options.inputFilename;
  }
  os << "\n";
  // Exactly what tgc ran: tgc-opt with it reproduces the planned module.
  os << "pipeline " << pipelineText(options.pipeline) << "\n";
  for (llvm::StringRef line : llvm::split(config.trim(), '\n'))
    if (!line.empty())
      os << "config " << line << "\n";
  os << "buckets";
  for (mlir::ModuleOp module : modules) {
    mlir::FailureOr<StepSignature> signature = readStepSignature(module);
    if (mlir::succeeded(signature))
      os << " " << signature->shape.batchSize << "x"
         << signature->shape.sourceLength << "x"
         << signature->shape.targetLength;
  }
  os << "\ncode fnv1a64 " << llvm::format_hex(fnv1a64(code), 18) << "\n";
  os << "compiler " << (compiler.empty() ? "none (tgc wrote the code only)"
                                         : compiler)
     << "\n";
  return text;
}

} // namespace tgc
