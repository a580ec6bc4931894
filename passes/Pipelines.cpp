//===- Pipelines.cpp - tg-training-pipeline ------------------------------===//
#include "passes/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace tgc {

void buildTrainingPipeline(mlir::OpPassManager &pm) {
  // The loss's gradients w.r.t. every trainable variable, as extra results.
  pm.addPass(createTgAutodiff());
  // Adam in the graph: the function becomes @train_step(batch..., lr, step).
  pm.addPass(createTgAdam());
  // The rules emit locally; dead forward values (a layer norm's unused
  // statistics, a transposed copy needed twice) are cleaned up here.
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
}

void registerPasses() {
  registerTGPasses();
  mlir::PassPipelineRegistration<>(
      "tg-training-pipeline",
      "forward tg module -> training step (autodiff, Adam, cleanup)",
      buildTrainingPipeline);
}

} // namespace tgc
