//===- Passes.h - tgc's passes and pipelines ---------------------*- C++ -*-===//
#ifndef TGC_PASSES_PASSES_H
#define TGC_PASSES_PASSES_H

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <memory>

namespace tgc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// The result attribute naming the variable a gradient belongs to.
inline constexpr llvm::StringLiteral kGradientOfAttr = "tg.gradient_of";

/// Forward module (loss function) -> training step: autodiff, Adam, cleanup.
void buildTrainingPipeline(mlir::OpPassManager &pm);

/// Registers every tgc pass and the named pipelines with the MLIR registry.
void registerPasses();

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace tgc

#endif // TGC_PASSES_PASSES_H
