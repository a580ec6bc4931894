//===- FuzzConfigFile.cpp - model configs (models/ConfigFile, Presets) ----===//
//
// Any bytes as the `--config` file of the Transformer's `tiny` preset: the
// text-format reader and validateTransformerConfig accept them or say why,
// and an accepted config builds a verified model.
//
//===----------------------------------------------------------------------===//
#include "frontend/ModelRegistry.h"
#include "models/Registration.h"
#include "test/fuzz/FuzzInput.h"
#include "test/fuzz/MlirFuzzing.h"

#include <cstdlib>

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  tgc::models::registerBuiltinModels();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const tgc::ModelDefinition *transformer = tgc::lookupModel("transformer");
  if (!transformer)
    std::abort();
  tgc::ModelOptions options{"tiny",
                            tgc::fuzz::asFile("config.pbtxt", data, size)};
  tgc::fuzz::FuzzContext fuzz;
  auto module = transformer->build(fuzz.context(), options);
  fuzz.expectErrorIf(mlir::failed(module));
  return 0;
}
