//===- ModelRegistry.cpp - models that tgc can build by name -------------===//
#include "frontend/ModelRegistry.h"

#include <algorithm>
#include <map>

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

void registerModel(ModelDefinition model) {
  std::string name = model.name;
  registry()[name] = std::move(model);
  registrations().push_back(name);
}

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
