//===- tgc.cpp - the tgc compiler driver ---------------------------------===//
//
// Reads a tg module (.mlir), verifies it and writes the requested stage.
// Diagnostics name file:line:col; any failure exits non-zero.
//
//===----------------------------------------------------------------------===//
#include "tools/InitAll.h"
#include "tools/tgc/Version.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

namespace {

cl::OptionCategory tgcCategory("tgc options");
cl::OptionCategory mlirCategory(
    "MLIR options (IR printing, pass statistics, timing, diagnostics)");

cl::opt<std::string> inputFilename(cl::Positional,
                                   cl::desc("<input .mlir file>"),
                                   cl::init("-"), cl::cat(tgcCategory));

cl::opt<std::string> outputFilename("o", cl::desc("Output file (default: stdout)"),
                                    cl::value_desc("file"), cl::init("-"),
                                    cl::cat(tgcCategory));

enum class EmitStage { Tg };

cl::opt<EmitStage> emitStage(
    "emit", cl::desc("Stage to write"), cl::init(EmitStage::Tg),
    cl::values(clEnumValN(EmitStage::Tg, "tg", "the verified tg module")),
    cl::cat(tgcCategory));

/// libLLVM registers hundreds of backend flags; --help shows only tgc's own
/// and the MLIR ones (--mlir-print-ir-after-all, --mlir-timing, ...).
void hideUnrelatedOptions() {
  for (auto &entry : cl::getRegisteredOptions())
    if (entry.getKey().starts_with("mlir-"))
      entry.getValue()->addCategory(mlirCategory);
  cl::HideUnrelatedOptions({&tgcCategory, &mlirCategory});
}

void printVersion(llvm::raw_ostream &os) {
  os << "tgc " << TGC_VERSION << " (MLIR " << TGC_MLIR_VERSION << ")\n";
}

/// Parses and verifies the input; diagnostics go to stderr with file:line:col.
mlir::OwningOpRef<mlir::ModuleOp> loadModule(mlir::MLIRContext &context,
                                             llvm::SourceMgr &sourceMgr) {
  std::string error;
  auto file = mlir::openInputFile(inputFilename, &error);
  if (!file) {
    llvm::errs() << "tgc: " << error << "\n";
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  return mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  hideUnrelatedOptions();
  cl::SetVersionPrinter(printVersion);
  cl::ParseCommandLineOptions(
      argc, argv,
      "tgc: ahead-of-time compiler for the Transformer's training step\n");

  mlir::DialectRegistry registry;
  tgc::registerAllDialects(registry);
  mlir::MLIRContext context(registry);

  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  mlir::OwningOpRef<mlir::ModuleOp> module = loadModule(context, sourceMgr);
  if (!module)
    return 1;

  std::string error;
  auto output = mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << "tgc: " << error << "\n";
    return 1;
  }
  switch (emitStage) {
  case EmitStage::Tg:
    module->print(output->os());
    output->os() << "\n";
    break;
  }
  output->keep();
  return 0;
}
