//===- Passes.td - tgc's passes ---------------------------*- tablegen -*-===//
//
// Every pass of the training pipeline, one file per stage. Flags start with
// `tg-`; options are ODS Options, never global cl::opts.
// `tg-training-pipeline` and `tg-compile-pipeline` (Pipelines.cpp) chain them
// in the order docs/passes.md gives.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_PASSES_TD
#define TGC_PASSES_TD

include "passes/ForwardPasses.td"
include "passes/TrainingPasses.td"
include "passes/StepFusionPasses.td"
include "passes/ProgramPasses.td"

#endif // TGC_PASSES_TD
