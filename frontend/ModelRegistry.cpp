//===- ModelRegistry.cpp - models that tgc can build by name -------------===//
#include "frontend/ModelRegistry.h"

#include <algorithm>
#include <map>
#include <utility>

namespace tgc {

static std::map<std::string, ModelDefinition> &registry() {
  static std::map<std::string, ModelDefinition> models;
  return models;
}

/// Every registerModel call's name, in order.
static std::vector<std::string> &registrations() {
  static std::vector<std::string> names;
  return names;
}

static std::vector<std::string> &conflicts() {
  static std::vector<std::string> messages;
  return messages;
}

namespace {
thread_local const ModelDefinition *beingBuilt = nullptr;
} // namespace

void registerModel(ModelDefinition model, std::source_location where) {
  std::string name = model.name;
  model.registeredAt =
      std::string(where.file_name()) + ":" + std::to_string(where.line());
  registrations().push_back(name);
  if (name.empty()) {
    conflicts().push_back("a model registered at " + model.registeredAt +
                          " has no name (--model NAME picks it)");
    return;
  }
  // Said at the registration, not later as a crash while building or as a
  // preset the command line never named.
  if (!model.build) {
    conflicts().push_back("model '" + name + "' registered at " +
                          model.registeredAt + " has no build function");
    return;
  }
  if (!model.presets.empty() &&
      std::find(model.presets.begin(), model.presets.end(),
                model.defaultPreset) == model.presets.end()) {
    conflicts().push_back("model '" + name + "' registered at " +
                          model.registeredAt + " has default preset '" +
                          model.defaultPreset + "', which is not one of its presets");
    return;
  }
  auto [it, inserted] = registry().try_emplace(name, std::move(model));
  if (!inserted)
    conflicts().push_back("model '" + name + "' is registered twice: " +
                          it->second.registeredAt + " and " +
                          std::string(where.file_name()) + ":" +
                          std::to_string(where.line()));
}

std::vector<std::string> registrationConflicts() { return conflicts(); }

mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
buildRegisteredModel(const ModelDefinition &model, mlir::MLIRContext &context,
                     const ModelOptions &options) {
  const ModelDefinition *outer = std::exchange(beingBuilt, &model);
  auto result = model.build(context, options);
  beingBuilt = outer;
  return result;
}

const ModelDefinition *modelBeingBuilt() { return beingBuilt; }

size_t registrationCount() { return registrations().size(); }

std::vector<std::string> registeredSince(size_t count) {
  const std::vector<std::string> &names = registrations();
  return {names.begin() + std::min(count, names.size()), names.end()};
}

const ModelDefinition *lookupModel(llvm::StringRef name) {
  auto it = registry().find(name.str());
  return it == registry().end() ? nullptr : &it->second;
}

std::vector<const ModelDefinition *> registeredModels() {
  std::vector<const ModelDefinition *> models;
  for (auto &entry : registry())
    models.push_back(&entry.second);
  return models;
}

} // namespace tgc
