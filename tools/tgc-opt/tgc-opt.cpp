//===- tgc-opt.cpp - runs tg passes on .mlir files (lit tests use it) ----===//
//
// mlir-opt's driver, with tgc's input checks first: a directory, a device
// or a FIFO (/dev/zero would be read forever), a file over the size limit and
// text nested deeper than the recursive parser's stack allows are refused,
// and so is a --pass-pipeline nested deeper (MLIR's pipeline parser
// recurses once per level too).
//
//===----------------------------------------------------------------------===//
#include "common/FileSizeLimit.h"
#include "frontend/InputFile.h"
#include "tools/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  // After InitLLVM, whose crash handlers would take SIGXFSZ.
  tgc::reportFileSizeLimitAsAnError();
  mlir::DialectRegistry registry;
  tgc::registerAllDialects(registry);
  tgc::registerAllPasses();
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "tgc-opt: runs tg dialect passes on .mlir files\n",
      registry);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  // It prints the dialects and reads no input.
  if (config.shouldShowDialects())
    return mlir::asMainReturnCode(mlir::MlirOptMain(
        argc, argv, inputFilename, outputFilename, registry));

  auto fail = [](const std::string &message) {
    llvm::errs() << message << "\n";
    return EXIT_FAILURE;
  };
  // The option PassPipelineCLParser registers, parsed only inside
  // MlirOptMain.
  if (auto *pipeline = static_cast<llvm::cl::opt<std::string> *>(
          llvm::cl::getRegisteredOptions().lookup("pass-pipeline")))
    if (std::optional<size_t> deep = tgc::findDeepNesting(*pipeline))
      return fail("tgc-opt: error: --pass-pipeline nests deeper than " +
                  std::to_string(tgc::kMaxNestingDepth) +
                  " levels of brackets ([ { ( <) at character " +
                  std::to_string(*deep + 1));
  if (std::string why = tgc::checkInputPath(inputFilename); !why.empty())
    return fail("tgc-opt: error: " + why);
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file =
      tgc::readInputFile(inputFilename, error);
  if (!file)
    return fail("tgc-opt: " + error);
  if (std::string deep = tgc::checkNesting(*file); !deep.empty())
    return fail(deep);

  auto output = mlir::openOutputFile(outputFilename, &error);
  if (!output)
    return fail("tgc-opt: " + error);
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(file), registry, config)))
    return EXIT_FAILURE;
  output->keep();
  return EXIT_SUCCESS;
}
