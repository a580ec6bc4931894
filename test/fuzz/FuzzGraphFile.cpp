//===- FuzzGraphFile.cpp - graph files (frontend/GraphFile) ---------------===//
//
// The input's first byte picks the format (even: binary .tgpb, odd: text
// .pbtxt), the rest is the file: readGraphFile loads a verified module or
// says why (checksum, truncation, unknown op or attribute, bad MLIR text);
// what it loads goes through the compile pipeline of `tgc -o`.
//
//===----------------------------------------------------------------------===//
#include "frontend/GraphFile.h"
#include "test/fuzz/FuzzInput.h"
#include "test/fuzz/MlirFuzzing.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  std::string path = tgc::fuzz::asFile(
      data[0] % 2 ? "graph.pbtxt" : "graph.tgpb", data + 1, size - 1);
  tgc::fuzz::FuzzContext fuzz;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      tgc::readGraphFile(fuzz.context(), path);
  fuzz.expectErrorIf(!module);
  if (module)
    fuzz.compile(*module);
  return 0;
}
