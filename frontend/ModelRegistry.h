//===- ModelRegistry.h - models that tgc can build by name -------*- C++ -*-===//
//
// `tgc --model NAME --preset P --config FILE` looks NAME up here. The built-in
// models register themselves through models/Registration.h; a user's model
// file registers its model with TGC_REGISTER_MODEL, when the driver that
// tgc_add_model builds starts or when `tgc --model-file` loads the file
// (docs/writing-models.md).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_FRONTEND_MODELREGISTRY_H
#define TGC_FRONTEND_MODELREGISTRY_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LogicalResult.h"

#include <functional>
#include <source_location>
#include <string>
#include <vector>

namespace tgc {

/// `--config`'s file name as a build function sees it. It remembers whether
/// the model looked at it (empty(), str() or the conversion), so that tgc
/// can refuse a --config that a model file ignores: built without it, the
/// model was not the one asked for.
class ConfigFileName {
public:
  ConfigFileName() = default;
  ConfigFileName(std::string name) : name(std::move(name)) {}
  ConfigFileName(const char *name) : name(name) {}
  bool empty() const {
    looked = true;
    return name.empty();
  }
  const std::string &str() const {
    looked = true;
    return name;
  }
  operator const std::string &() const { return str(); }
  const char *c_str() const { return str().c_str(); }
  /// For tgc: whether one was given, and whether the model looked at it.
  bool given() const { return !name.empty(); }
  bool lookedAt() const { return looked; }

private:
  std::string name;
  mutable bool looked = false;
};

struct ModelOptions {
  std::string preset;
  /// Protobuf text file whose fields override the preset's; may be empty.
  ConfigFileName configFile;
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
  /// Where registerModel was called ("file:line"): errors about the model
  /// as a whole (no loss, no schedule) point there. Set by registerModel.
  std::string registeredAt = {};
};

/// Registers `model`. A second model of the same name is a conflict: the
/// first stays, and registrationConflicts() names both places.
void registerModel(ModelDefinition model,
                   std::source_location where = std::source_location::current());
/// "model 'x' is registered twice: a.cpp:10 and b.cpp:20", one per
/// conflicting registration; tgc refuses to run while there is one.
std::vector<std::string> registrationConflicts();
/// Runs model.build with the model's registration as the place of errors
/// about the model as a whole.
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
buildRegisteredModel(const ModelDefinition &model, mlir::MLIRContext &context,
                     const ModelOptions &options);
/// The registration of the model being built on this thread (by
/// buildRegisteredModel), or null.
const ModelDefinition *modelBeingBuilt();
const ModelDefinition *lookupModel(llvm::StringRef name);
std::vector<const ModelDefinition *> registeredModels();

/// How many registerModel calls there have been, and the names the calls
/// after the first `count` registered, in order: what a loaded model file
/// registered.
size_t registrationCount();
std::vector<std::string> registeredSince(size_t count);

} // namespace tgc

/// Registers a model when the program starts (or when tgc --model-file
/// loads the file), at namespace scope:
///   TGC_REGISTER_MODEL({"my_model", "what it is", {"tiny"}, "tiny", build});
/// The argument is a tgc::ModelDefinition.
#define TGC_REGISTER_MODEL(...) TGC_REGISTER_MODEL_LINE(__LINE__, __VA_ARGS__)
#define TGC_REGISTER_MODEL_LINE(line, ...)                                     \
  TGC_REGISTER_MODEL_NAMED(line, __VA_ARGS__)
#define TGC_REGISTER_MODEL_NAMED(line, ...)                                    \
  [[maybe_unused]] static const bool tgcModelRegistered##line =                \
      (::tgc::registerModel(__VA_ARGS__), true)

#endif // TGC_FRONTEND_MODELREGISTRY_H
