//===- Pipelines.cpp - tg-training-pipeline, tg-compile-pipeline ---------===//
#include "passes/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace tgc {

void buildForwardFusionPipeline(mlir::OpPassManager &pm, bool report) {
  // Before autodiff, so each fused op gets its fused backward: attention's
  // recomputes the probabilities instead of saving S x S per head.
  pm.addPass(createTgFuseAttention({report}));
  // The post-LN wrapper of every sublayer; saves mean/rstd per row only.
  pm.addPass(createTgFuseResidualLayerNorm({report}));
}

void buildStepFusionPipeline(mlir::OpPassManager &pm, bool report,
                             int64_t lossChunkRows, bool matmulAdd,
                             bool embeddingGradAdd) {
  // The [rows, V] logits and their gradient, the largest tensors of the
  // step, never held whole; before the epilogues take the GEMMs it matches.
  pm.addPass(createTgFuseOutputLoss({lossChunkRows, report}));
  // So a bias add and its activation go into their GEMM rather than a group.
  pm.addPass(createTgFuseMatmulEpilogue({report}));
  // The gradient sums (and pre-LN residual adds) into one summand's GEMM,
  // before the elementwise groups would take the adds.
  if (matmulAdd)
    pm.addPass(createTgFuseMatmulAdd({report}));
  // A shared table's gradient: the embeddings' rows into the output
  // projection's gradient, not into a zeroed table an add reads back.
  if (embeddingGradAdd)
    pm.addPass(createTgFuseEmbeddingGradAdd({report}));
  // What is left of the elementwise work runs as one loop per chain.
  pm.addPass(createTgFuseElementwise({report}));
  // tg-adam already makes one optimizer step over every parameter;
  // tg-fuse-adam is for modules written with separate tg.adam_updates.
}

void buildPrecisionPipeline(mlir::OpPassManager &pm, GemmPrecision precision,
                            bool attention, bool attentionProducts,
                            bool report) {
  // Last of the transformations, on the fused GEMMs (tg.linear,
  // tg.output_loss) of every function, so that no fusion pattern has to
  // look through a tg.to_bf16 and each value is rounded once.
  if (precision == GemmPrecision::bf16)
    pm.addPass(createTgMixedPrecision({report, attention, attentionProducts}));
}

CompilePipelineOptions CompilePipelineOptions::resolved() const {
  CompilePipelineOptions options = *this;
  bool cuda = target == CompileTarget::cuda;
  // On a GPU the loss's chunks are larger (its GEMMs need more rows to fill
  // the device: a base batch's 25k target rows in 7 chunks, a 600 MB
  // workspace at 37k classes).
  if (options.lossChunkRows == kTargetDefault)
    options.lossChunkRows = cuda ? 4096 : 1024;
  // A GPU runs one kernel after another on its stream either way.
  if (cuda)
    options.pairGemms = false;
  return options;
}

std::string pipelineText(const CompilePipelineOptions &options) {
  PipelineOptionsParser<CompilePipelineOptions> parser(options.resolved());
  std::string text = "tg-compile-pipeline";
  llvm::raw_string_ostream os(text);
  parser.print(os);
  return text;
}

void buildTrainingPipeline(mlir::OpPassManager &pm,
                           const TrainingPipelineOptions &given) {
  TrainingPipelineOptions options = given;
  // Alone, the training pipeline is the CPU target's.
  if (options.lossChunkRows == StepOptions::kTargetDefault)
    options.lossChunkRows = 1024;
  // A loss with extra terms also returns its cross-entropy, which autodiff
  // and Adam keep: the log tells the parts apart.
  pm.addPass(createTgSplitLoss());
  // From the unfused loss function, so @predict is fused like the step.
  if (options.predict)
    pm.addPass(createTgDerivePredict());
  if (options.fuse)
    buildForwardFusionPipeline(pm, options.report);
  // From the fused @predict (it needs tg.attention), before step fusion so
  // the decoder's functions are fused too.
  if (options.predict && options.fuse)
    pm.addPass(createTgDeriveDecoder({"predict", "encode", "decode_step",
                                      /*required=*/false}));
  // After the decoder (whose caches are head-major) is derived, before
  // autodiff, so that the gradients need no transposes either.
  if (options.fuse && options.foldHeadTransposes)
    pm.addPass(createTgFoldHeadTransposes({options.report}));
  // The loss's gradients w.r.t. every trainable variable, as extra results.
  pm.addPass(createTgAutodiff());
  // Adam in the graph: the function becomes @train_step(batch..., lr, step,
  // the optimizer's controls) -> (loss, tokens[, cross_entropy], gradient
  // norm).
  pm.addPass(createTgAdam());
  // The kernels normalize the last axis: a softmax (and its gradient) over
  // another is written as one over the last, between transposes; after
  // tg-adam, which tells attention's dropout (of a softmax) from the others.
  pm.addPass(createTgSoftmaxLastAxis());
  // The rules emit locally; dead forward values (a layer norm's unused
  // statistics, a transposed copy needed twice) are cleaned up here.
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  if (options.fuse)
    buildStepFusionPipeline(pm, options.report, options.lossChunkRows,
                            options.fuseMatmulAdd,
                            options.fuseEmbeddingGradAdd);
  buildPrecisionPipeline(pm, options.precision, options.bf16Attention,
                         options.bf16AttentionProducts, options.report);
  // Data parallelism: the update reads the gradients summed over the
  // processes (a no-op call in one process), reduced in place in the
  // arena's gradient region.
  pm.addPass(createTgAllReduceGradients());
}

void buildCompilePipeline(mlir::OpPassManager &pm,
                          const CompilePipelineOptions &given) {
  CompilePipelineOptions options = given.resolved();
  // The program translates held-out sentences with @predict (or its
  // incremental decoder).
  TrainingPipelineOptions training = options.training();
  buildTrainingPipeline(pm, training);
  // The kernels' choice of where a rounding happens, so after everything
  // the interpreter also runs (tgc --emit=train shows the copies).
  if (training.precision == GemmPrecision::bf16 && options.bf16FoldRoundings)
    pm.addPass(createTgFoldBf16Roundings({options.report}));
  // After the last pass that could merge the copies again (CSE runs in the
  // training pipeline).
  if (training.precision == GemmPrecision::bf16 &&
      options.recomputeWeightCopies)
    pm.addPass(createTgRecomputeWeightCopies());
  // After every transformation, so that nothing moves a pair apart; before
  // planning, which gives each pair one instant.
  if (options.pairGemms) {
    TgPairGemmsOptions pairing;
    pairing.minMacs = options.pairGemmsMinMacs;
    pm.addPass(createTgPairGemms(pairing));
  }
  // Last: the arena offsets of every function, which the emitters read.
  pm.addPass(createTgPlanMemory({/*function=*/"", /*report=*/false}));
}

namespace {

/// Registers a pipeline of module passes: on another anchor
/// (`--pass-pipeline='func.func(tg-training-pipeline)'`) adding them would be
/// LLVM's fatal error, so the pipeline text is refused with a message.
template <typename Options>
void registerModulePipeline(llvm::StringRef name, llvm::StringRef description,
                            void (*build)(mlir::OpPassManager &,
                                          const Options &)) {
  using Parser = PipelineOptionsParser<Options>;
  std::string pipeline = name.str();
  mlir::registerPassPipeline(
      name, description,
      [pipeline, build](mlir::OpPassManager &pm, llvm::StringRef text,
                        llvm::function_ref<mlir::LogicalResult(
                            const llvm::Twine &)>
                            errorHandler) -> mlir::LogicalResult {
        llvm::StringRef anchor = pm.getOpAnchorName();
        if (anchor != mlir::ModuleOp::getOperationName())
          return errorHandler(pipeline + " runs on builtin.module, not on '" +
                              anchor + "'");
        Parser options;
        std::string errors;
        llvm::raw_string_ostream os(errors);
        if (mlir::failed(options.parseFromString(text, os)))
          return errorHandler(pipeline + ": " + errors);
        build(pm, options.get());
        return mlir::success();
      },
      [](llvm::function_ref<void(const mlir::detail::PassOptions &)> print) {
        print(Parser());
      });
}

} // namespace

void registerPasses() {
  registerTGPasses();
  registerModulePipeline<TrainingPipelineOptions>(
      "tg-training-pipeline",
      "forward tg module -> training step (fusion, autodiff, Adam, cleanup, "
      "step fusion)",
      buildTrainingPipeline);
  registerModulePipeline<CompilePipelineOptions>(
      "tg-compile-pipeline",
      "forward tg module -> what the emitters consume (training pipeline "
      "with @predict and the incremental decoder, memory planning of every "
      "function)",
      buildCompilePipeline);
}

} // namespace tgc
