//===- DriverOptions.h - what one tgc invocation asks for -------*- C++ -*-===//
//
// tgc's flags as plain values: CommandLine.cpp fills them from argv (and
// resolves the defaults that depend on other flags); the driver and its
// helpers read only this struct, so a custom driver or a test can run tgc
// without a command line.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TOOLS_DRIVER_DRIVEROPTIONS_H
#define TGC_TOOLS_DRIVER_DRIVEROPTIONS_H

#include "passes/PipelineOptions.h"

#include <cstdint>
#include <optional>
#include <string>

namespace tgc {

enum class EmitStage { Graph, Tg, Fused, Train, Planned, Cpp, Cuda, Binary };

/// What runs the module: a generated CPU program (None), tgc itself on the
/// reference interpreter, or a generated GPU program.
enum class Target { None, Interp, Cuda };

struct DriverOptions {
  // What to compile: a file (.mlir, .tgpb, .pbtxt) or a registered model,
  // perhaps one that a model file (ModelFile.h) registers.
  std::string inputFilename;
  std::string modelName, presetName, configFile;
  std::string modelFile;
  bool listModels = false;

  // Shapes: buckets, the token budget, a corpus to fit buckets to.
  std::string bucketList;
  int64_t maxTokens = 0;
  bool maxTokensGiven = false; ///< --max-tokens on the command line
  std::string corpusFile;
  int bucketCount = 6;
  bool bucketCountGiven = false; ///< --bucket-count on the command line
  /// The first flag of an interpreter run given ("--steps"), or empty.
  std::string interpreterFlag;

  // What to write, where, for which target.
  std::string outputFilename = "-";
  EmitStage emitStage = EmitStage::Binary; ///< the resolved stage
  Target target = Target::None;
  /// tg-compile-pipeline's options (the training pipeline's are a part of
  /// them): the flags bound from their declaration, the target and the
  /// precision. --emit=fused/train run the same ones.
  CompilePipelineOptions pipeline;
  /// --precision=auto: runDriver sets `pipeline.precision` from the target
  /// and CPU.
  bool precisionByMachine = false;
  bool memoryReport = false;
  bool checkGradients = false; ///< --check-gradients: no program, a verdict
  bool printLocations = false; ///< the resolved choice (on for --model)
  bool passStatistics = false; ///< --mlir-pass-statistics was given

  // Building the program.
  std::string compiler, nvcc, cudaArchitectures = "80,90";
  /// --nvcc or --cuda-arch on the command line (they build GPU programs only)
  bool cudaBuildFlagGiven = false;
  bool keepSource = false, verbose = false;
  /// The installed tree programs and model files compile against
  /// (Toolchain.h); empty: the one tgc runs from, or its build tree.
  std::string toolchainPrefix;
  /// Where compiled programs and model files are kept and reused
  /// (BuildCache.h): --build-cache, else $TGC_BUILD_CACHE; empty: nowhere.
  std::string buildCache;

  // --target=interp.
  std::string taskName = "copy";
  int64_t steps = 100, logEvery = 10;
  int64_t updateFreq = 1; ///< batches per update
  double clipNorm = 0;    ///< global gradient-norm clipping; 0: off
  std::optional<double> weightDecay; ///< AdamW's; unset: the model's
  /// The step's run-time hyperparameters; unset: the model's. adamBetas is
  /// the flag's text ("0.9,0.98").
  std::optional<double> dropout, attentionDropout, labelSmoothing, adamEps;
  std::optional<std::string> adamBetas;
  uint32_t seed = 1;
  std::string dumpParams, lossLog;

  bool fromModel() const { return !modelName.empty() || !modelFile.empty(); }
};

} // namespace tgc

#endif // TGC_TOOLS_DRIVER_DRIVEROPTIONS_H
