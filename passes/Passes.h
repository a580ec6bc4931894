//===- Passes.h - tgc's passes and pipelines ---------------------*- C++ -*-===//
#ifndef TGC_PASSES_PASSES_H
#define TGC_PASSES_PASSES_H

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

/// The options of the training step that both pipelines take (the compile
/// pipeline hands them on to the training pipeline it starts with).
template <typename Derived>
struct StepPipelineOptions : public mlir::PassPipelineOptions<Derived> {
  template <typename T> using Option = mlir::detail::PassOptions::Option<T>;

  Option<bool> fuse{*this, "fuse",
                    llvm::cl::desc("Run the fusion passes (forward and "
                                   "training-step)"),
                    llvm::cl::init(true)};
  Option<bool> report{*this, "report",
                      llvm::cl::desc("The fusion passes report what they "
                                     "fused as remarks"),
                      llvm::cl::init(false)};
  Option<int64_t> lossChunkRows{
      *this, "loss-chunk-rows",
      llvm::cl::desc("tg-fuse-output-loss's rows per chunk of the output "
                     "projection and loss; 0 keeps the logits whole"),
      llvm::cl::init(1024)};
  Option<GemmPrecision> precision{
      *this, "precision",
      llvm::cl::desc("GEMM operand precision: fp32, or bf16 (tg-mixed-"
                     "precision: bf16 operands, f32 accumulation, f32 "
                     "everything else)"),
      llvm::cl::init(GemmPrecision::fp32),
      llvm::cl::values(clEnumValN(GemmPrecision::fp32, "fp32", "f32 everywhere"),
                       clEnumValN(GemmPrecision::bf16, "bf16",
                                  "bf16 GEMM operands (mixed precision)"))};
  Option<bool> bf16Attention{
      *this, "bf16-attention",
      llvm::cl::desc("With precision=bf16, attention reads bf16 queries, "
                     "keys and values too"),
      llvm::cl::init(true)};
  Option<bool> bf16AttentionProducts{
      *this, "bf16-attention-products",
      llvm::cl::desc("With bf16-attention, attention's value products and "
                     "its gradient's products are bf16 ones too "
                     "(bf16_products)"),
      llvm::cl::init(true)};
  Option<bool> foldHeadTransposes{
      *this, "fold-head-transposes",
      llvm::cl::desc("tg-fold-head-transposes: attention reads and writes "
                     "the projections' [B, S, H, D] layout, with no head "
                     "transposes"),
      llvm::cl::init(true)};

  /// Sets `other`'s shared options to these ones' values.
  template <typename Other>
  void copyStepOptionsTo(StepPipelineOptions<Other> &other) const {
    other.fuse = fuse.getValue();
    other.report = report.getValue();
    other.lossChunkRows = lossChunkRows.getValue();
    other.precision = precision.getValue();
    other.bf16Attention = bf16Attention.getValue();
    other.bf16AttentionProducts = bf16AttentionProducts.getValue();
    other.foldHeadTransposes = foldHeadTransposes.getValue();
  }
};

/// tg-training-pipeline: forward module -> training step.
struct TrainingPipelineOptions
    : public StepPipelineOptions<TrainingPipelineOptions> {
  Option<bool> predict{*this, "predict",
                       llvm::cl::desc("Also derive @predict, the inference "
                                      "logits a translator needs, and (with "
                                      "fuse) its incremental decoder "
                                      "@encode and @decode_step"),
                       llvm::cl::init(false)};
};

/// tg-compile-pipeline: what tgc runs before its emitters.
struct CompilePipelineOptions
    : public StepPipelineOptions<CompilePipelineOptions> {
  Option<bool> bf16FoldRoundings{
      *this, "bf16-fold-roundings",
      llvm::cl::desc("With precision=bf16, tg-fold-bf16-roundings: GEMMs, "
                     "attention ops, transposes, elementwise loops and "
                     "residual LayerNorms write the bf16 copies of their "
                     "results"),
      llvm::cl::init(true)};
  Option<bool> pairGemms{
      *this, "pair-gemms",
      llvm::cl::desc("tg-pair-gemms before memory planning: pairs of small "
                     "independent f32 GEMMs run at once (the CPU target)"),
      llvm::cl::init(true)};
  Option<int64_t> pairGemmsMinMacs{
      *this, "pair-gemms-min-macs",
      llvm::cl::desc("tg-pair-gemms's min-macs"),
      llvm::cl::init(int64_t{1} << 20)};
};

/// Forward fusion: attention, residual + dropout + LayerNorm (`--emit=fused`).
void buildForwardFusionPipeline(mlir::OpPassManager &pm, bool report = false);

/// Training-step fusion, after autodiff and Adam: the output projection
/// with its loss in row chunks (unless lossChunkRows is 0), GEMM epilogues,
/// elementwise groups.
void buildStepFusionPipeline(mlir::OpPassManager &pm, bool report = false,
                             int64_t lossChunkRows = 1024);

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
