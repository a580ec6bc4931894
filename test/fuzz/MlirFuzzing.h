//===- MlirFuzzing.h - what the .mlir, graph and config harnesses share -*- C++ -*-===//
//
// A fresh context per input (MLIR never frees uniqued types and attributes,
// so one long-lived context would grow without bound), a count of the error
// diagnostics (every refusal must say why), and the compile pipeline that
// `tgc -o` runs on a module that loaded.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TEST_FUZZ_MLIRFUZZING_H
#define TGC_TEST_FUZZ_MLIRFUZZING_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include <memory>

namespace tgc::fuzz {

/// A context with the tg and func dialects, single-threaded, whose
/// diagnostics are counted instead of printed.
class FuzzContext {
public:
  FuzzContext();
  ~FuzzContext();
  mlir::MLIRContext &context() { return *context_; }
  /// Error diagnostics emitted since the context was made.
  int errors() const { return errors_; }
  /// Aborts (a finding) when `failed` but no error was emitted: every
  /// refusal names what is wrong.
  void expectErrorIf(bool failed) const;
  /// Runs tgc's compile pipeline (training step, @predict, memory plans) on
  /// `module`; a failure must come with an error diagnostic.
  void compile(mlir::ModuleOp module);

private:
  std::unique_ptr<mlir::MLIRContext> context_;
  int errors_ = 0;
};

} // namespace tgc::fuzz

#endif // TGC_TEST_FUZZ_MLIRFUZZING_H
