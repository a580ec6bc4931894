//===- CommandLine.cpp - tgc's flags into DriverOptions -------------------===//
//
// The only file that sees tgc's llvm::cl options: they are parsed once and
// copied into a DriverOptions, with the defaults that depend on other flags
// resolved.
//
//===----------------------------------------------------------------------===//
#include "tools/driver/CommandLine.h"

#include "common/CommandLineErrors.h"

#include "tools/RepeatedFlags.h"
#include "tools/driver/Version.h"

#include "passes/PipelineOptions.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <memory>
#include <vector>

namespace cl = llvm::cl;

namespace tgc {
namespace {

// --help prints the categories sorted by name: the numbers put tgc's own
// groups first, in the order a user reaches for them, MLIR's last.
cl::OptionCategory inputCategory("1. Input: the model and what it reads");
cl::OptionCategory shapeCategory("2. Shapes: the batches it is compiled for");
cl::OptionCategory compileCategory("3. Compile: precision, target, toolchain");
cl::OptionCategory outputCategory("4. Output");
cl::OptionCategory diagnosticsCategory("5. Diagnostics");
cl::OptionCategory interpreterCategory(
    "6. Interpreter runs (--target=interp): training with tgc itself");
cl::OptionCategory mlirCategory(
    "8. MLIR options (IR printing, pass statistics, timing, diagnostics)");

cl::opt<std::string> inputFilename(cl::Positional,
                                   cl::desc("[<input .mlir | .tgpb | .pbtxt>]"),
                                   cl::init(""), cl::cat(inputCategory));

cl::opt<std::string> modelName(
    "model", cl::desc("Build a registered model instead of reading a file"),
    cl::value_desc("name"), cl::cat(inputCategory));

cl::opt<std::string> modelFile(
    "model-file",
    cl::desc("Compile a model file (C++ DSL, one file) with the host compiler "
             "and build the model it registers with TGC_REGISTER_MODEL "
             "(--model picks one when it registers several)"),
    cl::value_desc("file.cpp"), cl::cat(inputCategory));

cl::opt<std::string> presetName("preset",
                                cl::desc("The model's preset (default: the "
                                         "model's own, e.g. base)"),
                                cl::value_desc("name"), cl::cat(inputCategory));

cl::opt<std::string> configFile(
    "config",
    cl::desc("Protobuf text file overriding the preset's fields"),
    cl::value_desc("file.pbtxt"), cl::cat(inputCategory));

cl::opt<std::string> bucketList(
    "buckets",
    cl::desc("Compile the model for several static shapes sharing its state "
             "and arena: comma-separated BATCHxSOURCExTARGET, or "
             "SOURCExTARGET with the batch from --max-tokens (default: the "
             "config's one shape, or buckets fitted to --corpus)"),
    cl::value_desc("list"), cl::cat(shapeCategory));

cl::opt<int64_t> maxTokens(
    "max-tokens",
    cl::desc("Token budget of one batch: a bucket's batch is this divided "
             "by its longer length"),
    cl::init(0), cl::cat(shapeCategory));

cl::opt<std::string> corpusFile(
    "corpus",
    cl::desc("A training corpus written by tgc-data encode: the vocabulary "
             "(size and hash) comes from it and, without --buckets, "
             "--bucket-count buckets fitted to its lengths (a corpus of "
             "documents leaves a language model its batch and context)"),
    cl::value_desc("file.tok"), cl::cat(shapeCategory));

cl::opt<int> bucketCount("bucket-count",
                         cl::desc("Buckets to fit to --corpus (1 to 64, default 6)"),
                         cl::init(6), cl::cat(shapeCategory));

cl::opt<bool> listModels("list-models",
                         cl::desc("List the registered models and presets"),
                         cl::cat(inputCategory));

cl::opt<std::string> outputFilename("o", cl::desc("Output file (default: stdout)"),
                                    cl::value_desc("file"), cl::init("-"),
                                    cl::cat(outputCategory));

cl::opt<EmitStage> emitStage(
    "emit", cl::desc("Stage to write"), cl::init(EmitStage::Binary),
    cl::values(clEnumValN(EmitStage::Graph, "graph",
                          "a graph file (binary; text for .pbtxt or stdout)"),
               clEnumValN(EmitStage::Tg, "tg",
                          "the verified tg module (forward + loss)"),
               clEnumValN(EmitStage::Fused, "fused",
                          "the forward after fusion (attention, residual + "
                          "dropout + LayerNorm)"),
               clEnumValN(EmitStage::Train, "train",
                          "the training step: tg-training-pipeline's output "
                          "(forward, gradients, Adam)"),
               clEnumValN(EmitStage::Planned, "planned",
                          "what the emitters consume: tg-compile-pipeline's "
                          "output (the step, @predict, the incremental "
                          "decoder, arena offsets)"),
               clEnumValN(EmitStage::Cpp, "cpp",
                          "the training step as C++ (after tg-plan-memory)"),
               clEnumValN(EmitStage::Cuda, "cuda",
                          "the training step as CUDA C++ (--target=cuda)"),
               clEnumValN(EmitStage::Binary, "binary",
                          "a standalone training program (the default "
                          "with -o; without -o tgc prints --emit=tg)")),
    cl::cat(outputCategory));

cl::opt<Target> target(
    "target",
    cl::desc("What runs the module (default: a CPU program, or tgc itself "
             "printing a stage)"),
    cl::init(Target::None),
    cl::values(clEnumValN(Target::Interp, "interp",
                          "the reference interpreter: --emit=tg runs the "
                          "function once on a synthetic batch, --emit=train "
                          "trains for --steps on --task"),
               clEnumValN(Target::Cuda, "cuda",
                          "an NVIDIA GPU: --emit=cuda writes the .cu, -o "
                          "builds the GPU training program with nvcc")),
    cl::cat(compileCategory));

cl::opt<std::string> nvcc(
    "nvcc", cl::desc("CUDA compiler for --target=cuda (default: $TGC_NVCC, "
                     "else the nvcc tgc was built with, or nvcc on PATH)"),
    cl::value_desc("path"), cl::cat(compileCategory));

cl::opt<std::string> cudaArchitectures(
    "cuda-arch",
    cl::desc("GPU architectures of --target=cuda programs, comma-separated "
             "(default 80,90: sm_80 and sm_90)"),
    cl::init("80,90"), cl::value_desc("list"), cl::cat(compileCategory));

/// The compile pipeline's options a user sets as flags, bound from their one
/// declaration (passes/PipelineOptions.h) and stored here while parsing.
cl::OptionCategory pipelineCategory(
    "7. Compile pipeline options (tg-compile-pipeline's, as flags)");
CompilePipelineOptions pipelineFlags;

/// The binder of tgc's command line: one flag per option a user may set.
class CommandLineBinder {
public:
  template <typename T, typename... Mods>
  void option(llvm::StringRef name, T &field, OptionUse use,
              llvm::StringRef help, Mods &&...modifiers) {
    if (use != OptionUse::Everywhere)
      return; // set from a flag of the driver's, or only in pipeline text
    flags.push_back(std::make_unique<cl::opt<T, /*ExternalStorage=*/true>>(
        name, cl::desc(help), cl::location(field), cl::cat(pipelineCategory),
        std::forward<Mods>(modifiers)...));
  }

private:
  std::vector<std::unique_ptr<cl::Option>> flags;
};

/// --precision's values: the two precisions, or the choice by the machine.
enum class PrecisionFlag { fp32, bf16, automatic };

cl::opt<PrecisionFlag> precision(
    "precision",
    cl::desc("What the GEMMs and attention multiply (parameters, Adam, "
             "LayerNorm, softmax and the loss are f32 either way)"),
    cl::init(PrecisionFlag::automatic),
    cl::values(clEnumValN(PrecisionFlag::fp32, "fp32", "f32 operands"),
               clEnumValN(PrecisionFlag::bf16, "bf16",
                          "bf16 operands, f32 accumulation: mixed precision "
                          "(tg-mixed-precision; oneDNN on CPUs, twice the "
                          "GEMM rate where the CPU has AVX512-BF16 or AMX)"),
               clEnumValN(PrecisionFlag::automatic, "auto",
                          "bf16 for GPUs and for CPUs with AVX512-BF16 or "
                          "AMX, fp32 (with a note) for other CPUs "
                          "(default)")),
    cl::cat(compileCategory));

// The training programs' default too, so that the interpreter and a
// program trained with the same flags see the same data.
cl::opt<std::string> taskName("task",
                              cl::desc("Built-in task to train on (--emit=train "
                                       "--target=interp): copy, reverse "
                                       "(default), digits"),
                              cl::init("reverse"), cl::cat(interpreterCategory));

cl::opt<int64_t> steps("steps", cl::desc("Training steps (--target=interp)"),
                       cl::init(100), cl::cat(interpreterCategory));

cl::opt<int64_t> logEvery("log-every",
                          cl::desc("Log a line every N steps (and the last)"),
                          cl::init(10), cl::cat(interpreterCategory));

cl::opt<int64_t> updateFreq(
    "update-freq",
    cl::desc("Batches whose gradients make one update (--target=interp; the "
             "training binaries take it too)"),
    cl::init(1), cl::cat(interpreterCategory));

cl::opt<double> clipNorm(
    "clip-norm",
    cl::desc("Scale the gradient to this global norm when above it "
             "(--target=interp; the training binaries take it too); 0: off"),
    cl::init(0.0), cl::cat(interpreterCategory));

cl::opt<double> weightDecay(
    "weight-decay",
    cl::desc("AdamW's decoupled weight decay, 0 to 1 (--target=interp; the "
             "training binaries take it too); default: the model's"),
    cl::init(0.0), cl::cat(interpreterCategory));

// The step's run-time hyperparameters (--target=interp); unset: the model's.
cl::opt<double> dropoutRate(
    "dropout",
    cl::desc("Rate of every dropout but attention's, 0 <= P < 1 "
             "(--target=interp; the training binaries take it too); default: "
             "the model's"),
    cl::init(0.0), cl::cat(interpreterCategory));

cl::opt<double> attentionDropoutRate(
    "attention-dropout",
    cl::desc("Rate of dropout on attention's probabilities, 0 <= P < 1 "
             "(--target=interp; the training binaries take it too); default: "
             "the model's"),
    cl::init(0.0), cl::cat(interpreterCategory));

cl::opt<double> labelSmoothing(
    "label-smoothing",
    cl::desc("The loss's label smoothing, 0 <= E < 1 (--target=interp; the "
             "training binaries take it too); default: the model's"),
    cl::init(0.0), cl::cat(interpreterCategory));

cl::opt<std::string> adamBetas(
    "adam-betas",
    cl::desc("Adam's betas B1,B2, each 0 <= b < 1 (--target=interp; the "
             "training binaries take it too); default: the model's"),
    cl::init(""), cl::cat(interpreterCategory));

cl::opt<double> adamEps(
    "adam-eps",
    cl::desc("Adam's epsilon, 0 < E < 1 (--target=interp; the training "
             "binaries take it too); default: the model's"),
    cl::init(0.0), cl::cat(interpreterCategory));

cl::opt<uint32_t> seed("seed",
                       cl::desc("Seed of parameters, inputs and dropout "
                                "(--target=interp, --check-gradients)"),
                       cl::init(1), cl::cat(interpreterCategory));

cl::opt<bool> checkGradientsFlag(
    "check-gradients",
    cl::desc("Compare every parameter's gradient of the model's loss with "
             "central differences on the f64 interpreter (a synthetic batch, "
             "dropout off); prints the worst error per parameter and exits "
             "non-zero above 1e-5. Make the batch small with --buckets"),
    cl::cat(diagnosticsCategory));

cl::opt<bool> memoryReport(
    "memory-report",
    cl::desc("Print the planned memory of the training step (weights, "
             "optimizer state, gradients, saved activations, scratch, peak); "
             "with -o, then write the program as usual"),
    cl::cat(diagnosticsCategory));

cl::opt<std::string> compiler(
    "cxx", cl::desc("C++ compiler for --emit=binary and --model-file "
                    "(default: $TGC_CXX, else the compiler tgc was built "
                    "with)"),
    cl::value_desc("path"), cl::cat(compileCategory));

cl::opt<bool> keepSource("keep-cpp",
                         cl::desc("--emit=binary: keep the generated C++ as "
                                  "<output>.cpp"),
                         cl::cat(outputCategory));

cl::opt<std::string> buildCache(
    "build-cache",
    cl::desc("Keep each program and model file tgc compiles in this "
             "directory's tgc-build-cache/ (the only files it removes) and "
             "reuse it when the same source, compiler, flags and libraries "
             "come again (default: $TGC_BUILD_CACHE; empty: no cache)"),
    cl::value_desc("dir"), cl::cat(compileCategory));

cl::opt<bool> verbose("v",
                      cl::desc("Print the host compiler's command and what "
                               "the build cache did"),
                      cl::cat(diagnosticsCategory));

cl::opt<std::string> dumpParams(
    "dump-params",
    cl::desc("--target=interp --emit=train: write every variable after "
             "training (raw f32, declaration order)"),
    cl::value_desc("file"), cl::cat(interpreterCategory));

cl::opt<std::string> lossLog(
    "loss-log",
    cl::desc("--target=interp --emit=train: write 'step loss tokens' per "
             "step (the whole loss, any extra terms included)"),
    cl::value_desc("file"), cl::cat(interpreterCategory));

cl::opt<bool> printLocations(
    "locations",
    cl::desc("Print MLIR locations (on by default for --model and "
             "--model-file: they point at the model's source lines)"),
    cl::cat(outputCategory));

/// libLLVM registers hundreds of backend flags; --help shows only tgc's own
/// and the MLIR ones (--mlir-print-ir-after-all, --mlir-timing, ...).
void hideUnrelatedOptions() {
  for (auto &entry : cl::getRegisteredOptions())
    if (entry.getKey().starts_with("mlir-"))
      entry.getValue()->addCategory(mlirCategory);
  cl::HideUnrelatedOptions({&inputCategory, &shapeCategory, &compileCategory,
                            &outputCategory, &diagnosticsCategory,
                            &interpreterCategory, &pipelineCategory,
                            &mlirCategory});
}

/// Debian's LLVM compiles pass statistics out; with --mlir-pass-statistics
/// the fusion passes also report their counts as remarks.
bool passStatisticsRequested() {
  auto &options = cl::getRegisteredOptions();
  auto it = options.find("mlir-pass-statistics");
  return it != options.end() && it->second->getNumOccurrences() > 0;
}

/// The first interpreter-run flag given ("--steps"), or empty. Named one
/// by one (the options of interpreterCategory): walking every registered
/// option reaches libLLVM's, built without the RTTI UBSan's vptr check
/// needs.
std::string givenInterpreterFlag() {
  // --seed last: it is named only when it was given alone (it is the one
  // flag that a function's run and --check-gradients also take).
  const cl::Option *flags[] = {&taskName,     &steps,          &logEvery,
                               &updateFreq,   &clipNorm,       &weightDecay,
                               &dropoutRate,  &attentionDropoutRate,
                               &labelSmoothing, &adamBetas,    &adamEps,
                               &dumpParams,   &lossLog,        &seed};
  for (const cl::Option *flag : flags)
    if (flag->getNumOccurrences() > 0)
      return "--" + flag->ArgStr.str();
  return {};
}

void printVersion(llvm::raw_ostream &os) {
  os << "tgc " << TGC_VERSION << " (MLIR " << TGC_MLIR_VERSION << ")\n";
}

} // namespace

DriverOptions parseCommandLine(int argc, char **argv) {
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  // Once: a second binding would register every flag again.
  static CommandLineBinder binder = [] {
    CommandLineBinder flags;
    pipelineFlags.bind(flags);
    return flags;
  }();
  (void)binder;
  hideUnrelatedOptions();
  cl::SetVersionPrinter(printVersion);
  if (!parseCommandLine(
          argc, argv,
          "tgc: ahead-of-time compiler for the Transformer's training step\n",
          "tgc: ", "tgc --help"))
    std::exit(1);
  if (std::string flag = repeatedFlag(argc, argv); !flag.empty()) {
    llvm::errs() << "tgc: error: " << flag
                 << " is given more than once: give it once (the last one "
                    "would replace the others without a word)\n";
    std::exit(1);
  }

  DriverOptions options;
  options.inputFilename = inputFilename;
  options.modelName = modelName;
  options.presetName = presetName;
  options.configFile = configFile;
  options.modelFile = modelFile;
  options.listModels = listModels;
  options.bucketList = bucketList;
  options.maxTokens = maxTokens;
  options.maxTokensGiven = maxTokens.getNumOccurrences() > 0;
  options.corpusFile = corpusFile;
  options.bucketCount = bucketCount;
  options.bucketCountGiven = bucketCount.getNumOccurrences() > 0;
  options.outputFilename = outputFilename;
  options.target = target;
  // A program cannot go to stdout: without --emit and -o (or with
  // --target=interp), tgc prints the verified module instead.
  options.emitStage = emitStage;
  if (!emitStage.getNumOccurrences() &&
      (outputFilename == "-" || target == Target::Interp))
    options.emitStage = EmitStage::Tg;
  options.pipeline = pipelineFlags;
  options.pipeline.target =
      target == Target::Cuda ? CompileTarget::cuda : CompileTarget::cpu;
  options.pipeline.precision = precision == PrecisionFlag::bf16
                                   ? GemmPrecision::bf16
                                   : GemmPrecision::fp32;
  options.precisionByMachine = precision == PrecisionFlag::automatic;
  options.memoryReport = memoryReport;
  options.checkGradients = checkGradientsFlag;
  options.printLocations = printLocations.getNumOccurrences()
                               ? printLocations.getValue()
                               : options.fromModel();
  options.passStatistics = passStatisticsRequested();
  options.compiler = compiler;
  options.nvcc = nvcc;
  options.cudaArchitectures = cudaArchitectures;
  options.cudaBuildFlagGiven =
      nvcc.getNumOccurrences() > 0 || cudaArchitectures.getNumOccurrences() > 0;
  options.keepSource = keepSource;
  options.verbose = verbose;
  if (buildCache.getNumOccurrences())
    options.buildCache = buildCache;
  else if (const char *env = std::getenv("TGC_BUILD_CACHE"))
    options.buildCache = env;
  options.taskName = taskName;
  options.steps = steps;
  options.logEvery = logEvery;
  options.updateFreq = updateFreq;
  options.clipNorm = clipNorm;
  if (weightDecay.getNumOccurrences())
    options.weightDecay = weightDecay;
  if (dropoutRate.getNumOccurrences())
    options.dropout = dropoutRate;
  if (attentionDropoutRate.getNumOccurrences())
    options.attentionDropout = attentionDropoutRate;
  if (labelSmoothing.getNumOccurrences())
    options.labelSmoothing = labelSmoothing;
  if (adamBetas.getNumOccurrences())
    options.adamBetas = adamBetas;
  if (adamEps.getNumOccurrences())
    options.adamEps = adamEps;
  options.seed = seed;
  options.dumpParams = dumpParams;
  options.lossLog = lossLog;
  options.interpreterFlag = givenInterpreterFlag();
  return options;
}

} // namespace tgc
