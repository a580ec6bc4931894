//===- ModelRegistry.h - models that tgc can build by name -------*- C++ -*-===//
//
// `tgc --model NAME --preset P --config FILE` looks NAME up here. The built-in
// models register themselves through models/Registration.h; a user's own
// model file calls registerModel() before tgc's driver main (tools/driver).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_FRONTEND_MODELREGISTRY_H
#define TGC_FRONTEND_MODELREGISTRY_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LogicalResult.h"

#include <functional>
#include <string>
#include <vector>

namespace tgc {

struct ModelOptions {
  std::string preset;
  /// Protobuf text file whose fields override the preset's; may be empty.
  std::string configFile;
  /// Overrides of the batch shape and the vocabulary, applied last (0: the
  /// config's): one model is built per bucket of `tgc --buckets`, and
  /// `--corpus` sets the vocabulary from the data.
  int64_t batchSize = 0, sourceLength = 0, targetLength = 0, vocabulary = 0;
};

struct ModelDefinition {
  std::string name;
  std::string description;
  std::vector<std::string> presets;
  std::string defaultPreset;
  /// Builds the module, or emits a diagnostic (unknown preset, bad config,
  /// shape error) and fails.
  std::function<mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>(
      mlir::MLIRContext &, const ModelOptions &)>
      build;
  /// Optional: the resolved config `build` would use, as text with one
  /// field a line (a program's manifest records it); empty on failure.
  std::function<std::string(mlir::MLIRContext &, const ModelOptions &)>
      describeConfig;
};

/// Registers `model`; a second model with the same name replaces the first.
void registerModel(ModelDefinition model);
const ModelDefinition *lookupModel(llvm::StringRef name);
std::vector<const ModelDefinition *> registeredModels();

} // namespace tgc

#endif // TGC_FRONTEND_MODELREGISTRY_H
