//===- Passes.h - tgc's passes and pipelines ---------------------*- C++ -*-===//
#ifndef TGC_PASSES_PASSES_H
#define TGC_PASSES_PASSES_H

#include "passes/PipelineOptions.h"
#include "passes/Precision.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <memory>

namespace tgc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// The result attribute naming the variable a gradient belongs to.
inline constexpr llvm::StringLiteral kGradientOfAttr = "tg.gradient_of";

/// Forward fusion: attention, residual + dropout + LayerNorm (`--emit=fused`).
void buildForwardFusionPipeline(mlir::OpPassManager &pm, bool report = false);

/// Training-step fusion, after autodiff and Adam: the output projection
/// with its loss in row chunks (unless lossChunkRows is 0), GEMM epilogues,
/// sums in GEMMs (unless matmulAdd is false) and in embedding gradients'
/// scatters (unless embeddingGradAdd is false), elementwise groups.
void buildStepFusionPipeline(mlir::OpPassManager &pm, bool report = false,
                             int64_t lossChunkRows = 1024,
                             bool matmulAdd = true,
                             bool embeddingGradAdd = true);

/// The precision passes after step fusion: tg-mixed-precision for bf16.
void buildPrecisionPipeline(mlir::OpPassManager &pm, GemmPrecision precision,
                            bool attention = true,
                            bool attentionProducts = true,
                            bool report = false);

/// Forward module (loss function) -> training step: forward fusion,
/// autodiff, Adam, cleanup, step fusion (`--emit=train`).
void buildTrainingPipeline(mlir::OpPassManager &pm,
                           const TrainingPipelineOptions &options = {});

/// Forward module -> the module the C++ and CUDA emitters consume: the
/// training pipeline with @predict (and, where it can be derived, the
/// incremental decoder), then memory planning of every function
/// (`tgc --emit=planned`, `tgc-opt --tg-compile-pipeline`).
void buildCompilePipeline(mlir::OpPassManager &pm,
                          const CompilePipelineOptions &options = {});

/// Registers every tgc pass and the named pipelines with the MLIR registry.
void registerPasses();

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace tgc

#endif // TGC_PASSES_PASSES_H
