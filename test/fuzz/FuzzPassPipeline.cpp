//===- FuzzPassPipeline.cpp - tgc-opt's --pass-pipeline text ---------------===//
//
// Any bytes as `tgc-opt --pass-pipeline`, with tgc's passes registered: text
// nested deeper than common/Nesting.h allows is refused before MLIR's
// recursive parser sees it (as tgc-opt does); the rest parses or is refused
// with a message.
//
//===----------------------------------------------------------------------===//
#include "common/Nesting.h"
#include "tools/InitAll.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  tgc::registerAllPasses();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  if (tgc::findDeepNesting(text))
    return 0; // refused as tgc-opt refuses it
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (mlir::failed(mlir::parsePassPipeline(text, os)) && errors.empty())
    std::abort(); // refused without saying why
  return 0;
}
