//===- ModelRegistry.cpp - models that tgc can build by name -------------===//
#include "frontend/ModelRegistry.h"

#include <map>

namespace tgc {

static std::map<std::string, ModelDefinition> &registry() {
  static std::map<std::string, ModelDefinition> models;
  return models;
}

void registerModel(ModelDefinition model) {
  std::string name = model.name;
  registry()[name] = std::move(model);
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
