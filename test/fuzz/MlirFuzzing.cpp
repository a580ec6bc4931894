//===- MlirFuzzing.cpp - what the .mlir, graph and config harnesses share -===//
#include "test/fuzz/MlirFuzzing.h"

#include "passes/Passes.h"
#include "tools/InitAll.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

// MLIR's and Protobuf's registries live as long as the process and are
// reported as leaks at exit (test/sanitizers.sh turns leak checks off too).
extern "C" const char *__asan_default_options() { return "detect_leaks=0"; }

namespace tgc::fuzz {

FuzzContext::FuzzContext() {
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  context_ = std::make_unique<mlir::MLIRContext>(
      registry, mlir::MLIRContext::Threading::DISABLED);
  context_->loadAllAvailableDialects();
  // TGC_FUZZ_VERBOSE=1 prints the diagnostics (to see what an input does).
  static const bool verbose = std::getenv("TGC_FUZZ_VERBOSE") != nullptr;
  context_->getDiagEngine().registerHandler([this](mlir::Diagnostic &diag) {
    if (diag.getSeverity() == mlir::DiagnosticSeverity::Error)
      ++errors_;
    if (verbose)
      llvm::errs() << diag.getLocation() << ": " << diag << "\n";
    return mlir::success(); // handled: nothing else prints it
  });
}

FuzzContext::~FuzzContext() = default;

void FuzzContext::expectErrorIf(bool failed) const {
  if (failed && errors_ == 0)
    std::abort();
}

void FuzzContext::compile(mlir::ModuleOp module) {
  mlir::PassManager pm(&context());
  buildCompilePipeline(pm);
  int before = errors_;
  bool failed = mlir::failed(pm.run(module));
  if (std::getenv("TGC_FUZZ_VERBOSE"))
    llvm::errs() << (failed ? "the compile pipeline refused it\n"
                            : "compiled\n");
  if (failed && errors_ == before)
    std::abort(); // a pass failed without saying why
}

} // namespace tgc::fuzz
