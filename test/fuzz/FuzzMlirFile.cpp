//===- FuzzMlirFile.cpp - .mlir input (tgc, tgc-opt) ----------------------===//
//
// Any bytes as the .mlir file `tgc` reads: the nesting check, MLIR's parser
// and the tg verifiers accept them or say why; what they accept goes
// through the compile pipeline of `tgc -o`, which compiles it or says why.
//
//===----------------------------------------------------------------------===//
#include "frontend/InputFile.h"
#include "test/fuzz/MlirFuzzing.h"

#include "mlir/Parser/Parser.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.mlir");
  if (!tgc::checkNesting(*buffer).empty())
    return 0; // refused with its line and column before parsing
  tgc::fuzz::FuzzContext fuzz;
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sources, &fuzz.context());
  fuzz.expectErrorIf(!module);
  if (module)
    fuzz.compile(*module);
  return 0;
}
