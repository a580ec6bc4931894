//===- Driver.cpp - what one tgc invocation does --------------------------===//
//
// Input is either a built-in or user-registered model (--model, --preset,
// --config), perhaps from a model file (--model-file, ModelFile.h), or a
// .mlir file. Diagnostics name file:line:col (the DSL source line for
// models); any failure returns non-zero to the tool, which exits.
//
//===----------------------------------------------------------------------===//
#include "tools/driver/Driver.h"

#include "ir/TgVerify.h"

#include "common/FileSizeLimit.h"

#include "codegen/StepSignature.h"
#include "codegen/cpp/CppEmitter.h"
#include "codegen/cuda/CudaEmitter.h"
#include "frontend/GraphFile.h"
#include "frontend/InputFile.h"
#include "frontend/ModelRegistry.h"
#include "ir/TgOps.h"
#include "models/Transformer.h"
#include "passes/MemoryPlan.h"
#include "passes/Passes.h"
#include "runtime/data/AtomicFile.h"
#include "runtime/data/FileChecks.h"
#include "runtime/data/Tasks.h"
#include "runtime/data/TokenCorpus.h"
#include "tools/InitAll.h"
#include "tools/driver/BinaryBuilder.h"
#include "tools/driver/Buckets.h"
#include "tools/driver/CommandLine.h"
#include "tools/driver/InterpreterRuns.h"
#include "tools/driver/Manifest.h"
#include "tools/driver/ModelFile.h"
#include "tools/driver/RunFileChecks.h"
#include "tools/driver/Toolchain.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

namespace tgc {
namespace {

void printModels(llvm::raw_ostream &os) {
  for (const ModelDefinition *model : registeredModels())
    os << model->name << ": " << model->description
       << "\n  presets: " << llvm::join(model->presets, ", ")
       << " (default " << model->defaultPreset << ")\n";
}

/// What --corpus says about the model: its vocabulary and its buckets.
struct CorpusFacts {
  int64_t vocabulary = 0;
  uint64_t vocabularyHash = 0;
  /// Language-model text: windows of the model's own context, no lengths.
  bool documents = false;
  std::vector<BucketShape> buckets;
};

bool readCorpusFacts(const DriverOptions &options, CorpusFacts &facts) {
  std::string error;
  std::optional<runtime::TokenCorpus> corpus =
      runtime::TokenCorpus::open(options.corpusFile, error);
  if (!corpus) {
    llvm::errs() << "tgc: error: " << error << "\n";
    return false;
  }
  facts.vocabulary = corpus->vocabularySize();
  facts.vocabularyHash = corpus->vocabularyHash();
  if (!options.bucketList.empty())
    return true;
  // Every window of language-model text is the model's context long:
  // there is nothing to fit, the model keeps its own batch and context.
  facts.documents = corpus->kind() == runtime::CorpusKind::Documents;
  if (facts.documents) {
    if (options.maxTokens > 0) {
      llvm::errs() << "tgc: error: " << options.corpusFile
                   << " is a corpus of documents (language-model text), cut "
                      "into windows of the model's context: --max-tokens sizes "
                      "the batch of --buckets CONTEXTxCONTEXT\n";
      return false;
    }
    return true;
  }
  if (options.maxTokens <= 0) {
    llvm::errs() << "tgc: error: --corpus fits buckets to the data: give "
                    "--max-tokens (or --buckets)\n";
    return false;
  }
  if (options.bucketCount < 1 || options.bucketCount > kMaxBuckets) {
    llvm::errs() << "tgc: error: --bucket-count " << options.bucketCount
                 << ": give 1 to " << kMaxBuckets << " buckets to fit to "
                 << options.corpusFile << "\n";
    return false;
  }
  std::vector<PairLength> lengths;
  for (size_t i = 0; i < corpus->size(); ++i)
    lengths.push_back({static_cast<int64_t>(corpus->source(i).size()) + 1,
                       static_cast<int64_t>(corpus->target(i).size()) + 1});
  facts.buckets = bucketsForCorpus(lengths, options.bucketCount, options.maxTokens);
  if (facts.buckets.empty()) {
    llvm::errs() << "tgc: error: " << options.corpusFile << " has no sentence pairs\n";
    return false;
  }
  if (std::string why = budgetBatchError(facts.buckets, options.maxTokens,
                                         models::kMaxBatchSize);
      !why.empty()) {
    llvm::errs() << "tgc: error: " << why << " (buckets fitted to "
                 << options.corpusFile << ")\n";
    return false;
  }
  for (const BucketShape &bucket : facts.buckets)
    if (int64_t longer = std::max(bucket.sourceLength, bucket.targetLength);
        options.maxTokens < longer) {
      llvm::errs() << "tgc: error: --max-tokens " << options.maxTokens
                   << " is smaller than the longer length " << longer
                   << " of bucket " << bucket.text() << " (fitted to "
                   << options.corpusFile
                   << "): not one sentence pair fits the budget\n";
      return false;
    }
  return true;
}

mlir::OwningOpRef<mlir::ModuleOp>
buildModel(const DriverOptions &driver, mlir::MLIRContext &context,
           const BucketShape *bucket, int64_t vocabulary) {
  const ModelDefinition *model = lookupModel(driver.modelName);
  if (!model) {
    std::vector<std::string> names;
    for (const ModelDefinition *known : registeredModels())
      names.push_back(known->name);
    llvm::errs() << "tgc: error: unknown model '" << driver.modelName
                 << "' (known: " << llvm::join(names, ", ") << ")\n";
    return nullptr;
  }
  ModelOptions options{driver.presetName.empty() ? model->defaultPreset : driver.presetName,
                       driver.configFile};
  // A model file's build function may not look at the preset: one it does
  // not list was built as something else without a word.
  if (!model->presets.empty() &&
      !llvm::is_contained(model->presets, options.preset)) {
    llvm::errs() << "tgc: error: model '" << model->name << "' has no preset '"
                 << options.preset << "' (presets: "
                 << llvm::join(model->presets, ", ") << ")\n";
    return nullptr;
  }
  options.vocabulary = vocabulary;
  if (bucket) {
    options.batchSize = bucket->batch;
    options.sourceLength = bucket->sourceLength;
    options.targetLength = bucket->targetLength;
  }
  // Errors reported while it builds, counted on their way to the printer.
  unsigned errors = 0;
  mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>> module;
  {
    mlir::ScopedDiagnosticHandler count(&context, [&](mlir::Diagnostic &d) {
      errors += d.getSeverity() == mlir::DiagnosticSeverity::Error;
      return mlir::failure(); // on to the handler that prints it
    });
    module = buildRegisteredModel(*model, context, options);
  }
  // The pipelines train @loss: a graph of another name failed later,
  // without a line.
  if (succeeded(module) && *module &&
      !(*module)->lookupSymbol<mlir::func::FuncOp>("loss")) {
    llvm::errs() << "tgc: error: model '" << model->name << "'";
    if (!model->registeredAt.empty())
      llvm::errs() << " (registered at " << model->registeredAt << ")";
    llvm::errs() << " built no function @loss: buildGraph(context, \"loss\", "
                    "...) names the training graph\n";
    return nullptr;
  }
  // A model file's build that never looked at --config built the model
  // without it: not the one asked for.
  if (succeeded(module) && *module && options.configFile.given() &&
      !options.configFile.lookedAt()) {
    llvm::errs() << "tgc: error: model '" << model->name << "'";
    if (!model->registeredAt.empty())
      llvm::errs() << " (registered at " << model->registeredAt << ")";
    llvm::errs() << " never looked at --config " << driver.configFile
                 << " (ModelOptions::configFile): it was built without it; a "
                    "model that reads no config should refuse one\n";
    return nullptr;
  }
  if (succeeded(module) && *module)
    return std::move(*module);
  // A build function that fails (or returns no module) without a word.
  if (errors == 0) {
    llvm::errs() << "tgc: error: model '" << model->name << "'";
    if (!model->registeredAt.empty())
      llvm::errs() << " (registered at " << model->registeredAt << ")";
    llvm::errs() << (succeeded(module) ? " built no module"
                                       : " failed to build")
                 << " without reporting why\n";
  }
  return nullptr;
}

/// The registered model's resolved config for the manifest; empty for a
/// file or a model without describeConfig.
std::string describeModelConfig(const DriverOptions &driver,
                                mlir::MLIRContext &context,
                                int64_t vocabulary) {
  const ModelDefinition *model =
      driver.fromModel() ? lookupModel(driver.modelName) : nullptr;
  if (!model || !model->describeConfig)
    return {};
  ModelOptions options{driver.presetName.empty() ? model->defaultPreset
                                                 : driver.presetName,
                       driver.configFile};
  options.vocabulary = vocabulary;
  // A model file's code, as its build function is (a crash there was a
  // stack dump of tgc).
  std::optional<ModelCodeGuard> guard;
  if (!driver.modelFile.empty())
    guard.emplace(driver.modelFile, "describing its config");
  return model->describeConfig(context, options);
}

mlir::OwningOpRef<mlir::ModuleOp> readModule(const std::string &inputFilename,
                                             mlir::MLIRContext &context,
                                             llvm::SourceMgr &sourceMgr) {
  if (isGraphFile(inputFilename))
    return readGraphFile(context, inputFilename);
  std::string error = checkInputPath(inputFilename);
  if (!error.empty()) {
    llvm::errs() << "tgc: error: " << error << "\n";
    return nullptr;
  }
  auto file = readInputFile(inputFilename, error);
  if (!file) {
    llvm::errs() << "tgc: error: " << error << "\n";
    return nullptr;
  }
  // A binary graph file under another name read as MLIR failed with
  // "unexpected character", no word of what the file is.
  if (file->getBuffer().contains('\0')) {
    llvm::errs() << "tgc: error: " << inputFilename
                 << " holds NUL bytes: it is no MLIR text (a binary graph "
                    "file is read as one by its name, X.tgpb)\n";
    return nullptr;
  }
  // The parser recurses once per bracket: deeper text would overflow the
  // stack.
  if (std::string deep = checkNesting(*file); !deep.empty()) {
    llvm::errs() << deep << "\n";
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  return mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
}

/// Writes what `write` prints to -o (stdout by default); the exit code. A
/// file appears whole or not at all (runtime::AtomicFile): a failed write,
/// a full disk or a crash while printing leaves what it held. A FIFO is
/// opened first and held while the stage prints: one that no process reads
/// is refused at once (the open waited for ever).
int writeOutput(const std::string &outputFilename,
                llvm::function_ref<void(llvm::raw_ostream &)> write) {
  if (outputFilename == "-") {
    write(llvm::outs());
    llvm::outs().flush();
    if (std::error_code ec = llvm::outs().error()) {
      llvm::outs().clear_error();
      llvm::errs() << "tgc: error: cannot write standard output: "
                   << ec.message() << "\n";
      return 1;
    }
    return 0;
  }
  runtime::AtomicFile file(outputFilename);
  if (!file.error().empty()) {
    llvm::errs() << "tgc: error: " << file.error() << "\n";
    return 1;
  }
  std::string text;
  {
    llvm::raw_string_ostream os(text);
    write(os);
  }
  file.write(text);
  if (std::string error = file.commit(); !error.empty()) {
    llvm::errs() << "tgc: error: " << error << "\n";
    return 1;
  }
  return 0;
}

/// Which parameters AdamW decays (tg-adam's choice), which it does not,
/// and which are frozen, one line each.
void printWeightDecay(mlir::ModuleOp module) {
  llvm::SmallVector<llvm::StringRef> decay, keep, frozen;
  // The update names every trained parameter and its moments.
  llvm::DenseSet<llvm::StringRef> named;
  auto nameOf = [](mlir::Attribute ref) {
    return llvm::cast<mlir::FlatSymbolRefAttr>(ref).getValue();
  };
  module.walk([&](tg::MultiAdamUpdateOp update) {
    for (auto [index, ref] : llvm::enumerate(update.getParams())) {
      bool decays = update.getDecays() && (*update.getDecays())[index];
      (decays ? decay : keep).push_back(nameOf(ref));
    }
    for (mlir::ArrayAttr refs : {update.getParams(), update.getMoments1(),
                                 update.getMoments2()})
      for (mlir::Attribute ref : refs)
        named.insert(nameOf(ref));
  });
  for (auto variable : module.getOps<tg::VariableOp>())
    if (!variable.getCache() && !named.contains(variable.getSymName()))
      frozen.push_back(variable.getSymName());
  auto list = [](llvm::StringRef what, llvm::ArrayRef<llvm::StringRef> names) {
    llvm::outs() << what << " (" << names.size() << "):";
    for (llvm::StringRef name : names)
      llvm::outs() << " " << name;
    llvm::outs() << "\n";
  };
  list("weight decay (AdamW, --weight-decay)", decay);
  list("no weight decay", keep);
  if (!frozen.empty())
    list("frozen, not trained", frozen);
}

/// Prints tg-plan-memory's report of @train_step (and the arenas of
/// @predict and the incremental decoder, and its caches).
bool printMemoryReport(mlir::ModuleOp module) {
  auto step = module.lookupSymbol<mlir::func::FuncOp>("train_step");
  if (!step) {
    llvm::errs() << "tgc: error: the module has no @train_step\n";
    return false;
  }
  mlir::FailureOr<MemoryReport> report = readMemoryReport(step);
  if (mlir::failed(report))
    return false;
  llvm::outs() << "memory of @train_step (planned by tg-plan-memory):\n"
               << report->format();
  printWeightDecay(module);
  if (auto predict = module.lookupSymbol<mlir::func::FuncOp>("predict")) {
    mlir::FailureOr<MemoryReport> inference = readMemoryReport(predict);
    if (mlir::failed(inference))
      return false;
    llvm::outs() << "@predict (translation) needs an arena of "
                 << inference->arena
                 << " bytes; it shares the step's, which is the larger\n";
  }
  auto encode = module.lookupSymbol<mlir::func::FuncOp>("encode");
  auto decodeStep = module.lookupSymbol<mlir::func::FuncOp>("decode_step");
  if (encode && decodeStep) {
    mlir::FailureOr<MemoryReport> encoder = readMemoryReport(encode);
    mlir::FailureOr<MemoryReport> decoder = readMemoryReport(decodeStep);
    if (mlir::failed(encoder) || mlir::failed(decoder))
      return false;
    int64_t caches = 0, cacheBytes = 0;
    for (auto variable : module.getOps<tg::VariableOp>())
      if (variable.getCache()) {
        ++caches;
        cacheBytes += variable.getTensorType().getNumElements() * 4;
      }
    llvm::outs() << "incremental decoder: @encode needs an arena of "
                 << encoder->arena << " bytes, @decode_step " << decoder->arena
                 << " (both share the step's); " << caches << " caches of "
                 << cacheBytes << " bytes in all\n";
  }
  return true;
}

/// Flag combinations that cannot work, before anything is built.
bool checkOptions(const DriverOptions &options) {
  auto fail = [](llvm::StringRef message) {
    llvm::errs() << "tgc: error: " << message << "\n";
    return false;
  };
  if (options.fromModel() && !options.inputFilename.empty())
    return fail(std::string("give either an input file or ") +
                (options.modelFile.empty() ? "--model" : "--model-file") +
                ", not both");
  if (!options.fromModel() && options.inputFilename.empty())
    return fail("give either an input file or --model NAME or --model-file "
                "FILE (see --help, --list-models)");
  if (!options.fromModel() &&
      (!options.presetName.empty() || !options.configFile.empty()))
    return fail("--preset and --config apply to --model only");
  if (!options.fromModel() &&
      (!options.bucketList.empty() || !options.corpusFile.empty()))
    return fail("--buckets and --corpus apply to --model only");
  if (options.maxTokensGiven && options.maxTokens < 1)
    return fail("--max-tokens " + std::to_string(options.maxTokens) +
                ": give a positive token budget");
  // Shape flags that would shape nothing are errors, not silences.
  if (options.maxTokensGiven && options.bucketList.empty() &&
      options.corpusFile.empty())
    return fail("--max-tokens sizes the batches of --buckets SOURCExTARGET, "
                "or of buckets fitted to --corpus: give one of them");
  if (options.bucketCountGiven &&
      (options.corpusFile.empty() || !options.bucketList.empty()))
    return fail("--bucket-count is how many buckets are fitted to --corpus "
                "when --buckets is not given");
  if (options.checkGradients &&
      (options.outputFilename != "-" || options.memoryReport ||
       options.target == Target::Cuda))
    return fail("--check-gradients runs the model on the interpreter and "
                "writes nothing: drop -o, --memory-report and --target=cuda");
  // A directory or a device would read as an empty (or endless) config.
  // A missing one too: a model file that reads no config would take it
  // without a word.
  if (!options.configFile.empty()) {
    if (std::string why = checkInputPath(options.configFile, "--config");
        !why.empty())
      return fail(why);
    if (::access(options.configFile.c_str(), R_OK) != 0)
      return fail("cannot read --config " + options.configFile + ": " +
                  std::strerror(errno));
  }
  EmitStage stage = options.emitStage;
  if (stage == EmitStage::Cuda && options.target != Target::Cuda)
    return fail("--emit=cuda needs --target=cuda");
  if (stage == EmitStage::Cpp && options.target == Target::Cuda)
    return fail("--target=cuda writes --emit=cuda, not --emit=cpp");
  bool program = stage == EmitStage::Cpp || stage == EmitStage::Cuda ||
                 stage == EmitStage::Binary || options.memoryReport;
  if (options.target == Target::Interp &&
      (program || stage == EmitStage::Planned))
    return fail("--target=interp runs --emit=tg or --emit=train, not a "
                "compiled program");
  // It ran the interpreter and wrote no graph file.
  if (options.target == Target::Interp && stage == EmitStage::Graph)
    return fail("--target=interp runs --emit=tg or --emit=train, not "
                "--emit=graph (which writes the module as a graph file)");
  if (options.checkGradients && !options.interpreterFlag.empty() &&
      options.interpreterFlag != "--seed")
    return fail(options.interpreterFlag +
                " does nothing with --check-gradients, which turns dropout "
                "off and runs no training step (it takes --seed)");
  // An interpreter run's flags (--steps, --dropout, ...) shape that run
  // only; --check-gradients takes --seed. A compiled program takes them at
  // run time: given here they were ignored without a word.
  if (!options.interpreterFlag.empty() && options.target != Target::Interp &&
      !(options.checkGradients && options.interpreterFlag == "--seed"))
    return fail(options.interpreterFlag +
                " applies to runs on the interpreter (--target=interp); a "
                "compiled program takes it when it runs (./train " +
                options.interpreterFlag + ")");
  // Without --emit=train the interpreter runs the function once on a
  // synthetic batch (seeded by --seed): the training flags did nothing
  // (--dump-params wrote no file).
  if (options.target == Target::Interp && stage != EmitStage::Train &&
      !options.interpreterFlag.empty() && options.interpreterFlag != "--seed")
    return fail(options.interpreterFlag +
                " shapes a training run on the interpreter: give "
                "--emit=train (--target=interp without it runs the function "
                "once on a synthetic batch)");
  if (options.memoryReport && options.outputFilename != "-" &&
      stage != EmitStage::Binary && stage != EmitStage::Cpp &&
      stage != EmitStage::Cuda)
    return fail("--memory-report with -o writes a program: --emit=binary, "
                "cpp or cuda (without -o it only prints the report)");
  if (stage == EmitStage::Binary && !options.memoryReport &&
      !options.checkGradients && options.outputFilename == "-")
    return fail("--emit=binary writes a program: give -o FILE, or "
                "--emit=tg|train|cpp to print a stage");
  // Flags of the program's build would do nothing without one.
  bool buildsProgram = stage == EmitStage::Binary &&
                       options.outputFilename != "-" &&
                       !options.checkGradients;
  if (options.keepSource && !buildsProgram)
    return fail(stage == EmitStage::Cpp || stage == EmitStage::Cuda
                    ? "--keep-cpp keeps the source of a program built with "
                      "--emit=binary; --emit=cpp and --emit=cuda write that "
                      "source themselves"
                    : "--keep-cpp keeps the source of a program built with "
                      "--emit=binary -o FILE");
  if (options.cudaBuildFlagGiven &&
      (options.target != Target::Cuda || !buildsProgram))
    return fail("--nvcc and --cuda-arch build GPU programs: they apply to "
                "--target=cuda with --emit=binary -o FILE (the source of "
                "--emit=cuda is compiled by whoever builds it)");
  if (std::string why = cudaArchitecturesError(options.cudaArchitectures);
      !why.empty())
    return fail(why);
  return true;
}

/// Whether this CPU multiplies bf16 in hardware (/proc/cpuinfo's flags):
/// AVX512-BF16 (Zen 4, Cooper Lake and later) or AMX (Sapphire Rapids).
bool cpuHasBf16() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (llvm::StringRef(line).starts_with("flags")) {
      llvm::SmallVector<llvm::StringRef> flags;
      llvm::StringRef(line).split(flags, ' ');
      return llvm::is_contained(flags, "avx512_bf16") ||
             llvm::is_contained(flags, "amx_bf16");
    }
  return false;
}

/// Resolves --precision=auto: bf16 for GPUs (every one tgc builds for has
/// bf16 tensor cores) and for CPUs with bf16 instructions, fp32 otherwise.
/// A CPU program asked for in bf16 on a CPU without them still runs (oneDNN
/// emulates them, or the operands are widened for sgemm), slower than in
/// f32: say so.
void choosePrecision(DriverOptions &options) {
  bool cpuProgram = options.target == Target::None &&
                    (options.emitStage == EmitStage::Binary ||
                     options.emitStage == EmitStage::Cpp);
  bool hardware = options.target == Target::Cuda || cpuHasBf16();
  // The reference interpreter is an oracle: the same numbers on every
  // machine (auto gave bf16 products on one with AVX512-BF16, f32 on
  // others).
  if (options.precisionByMachine && options.target == Target::Interp) {
    options.pipeline.precision = GemmPrecision::fp32;
    return;
  }
  if (options.precisionByMachine) {
    options.pipeline.precision =
        hardware ? GemmPrecision::bf16 : GemmPrecision::fp32;
    if (!hardware && cpuProgram)
      llvm::errs() << "tgc: note: --precision=auto: this CPU has no bf16 "
                      "instructions (avx512_bf16, amx_bf16); compiling in "
                      "fp32\n";
    return;
  }
  if (options.pipeline.precision == GemmPrecision::bf16 && cpuProgram &&
      !hardware)
    llvm::errs() << "tgc: warning: this CPU has no bf16 instructions "
                    "(avx512_bf16, amx_bf16): the program's bf16 GEMMs will "
                    "be emulated, slower than --precision=fp32\n";
}

/// Whether the stage needs the compile pipeline (a program, its C++, the
/// memory report or the planned module).
bool compiles(const DriverOptions &options) {
  return options.emitStage == EmitStage::Cpp ||
         options.emitStage == EmitStage::Cuda ||
         options.emitStage == EmitStage::Binary || options.memoryReport;
}

/// Runs the pipeline the stage asks for on every bucket's module.
bool runPipelines(const DriverOptions &options, mlir::MLIRContext &context,
                  llvm::ArrayRef<mlir::OwningOpRef<mlir::ModuleOp>> modules) {
  EmitStage stage = options.emitStage;
  bool compile = compiles(options) || stage == EmitStage::Planned;
  if (!compile && stage != EmitStage::Fused && stage != EmitStage::Train)
    return true;
  for (const auto &module : modules) {
    mlir::PassManager pm(&context);
    if (mlir::failed(mlir::applyPassManagerCLOptions(pm)))
      return false;
    mlir::applyDefaultTimingPassManagerCLOptions(pm);
    CompilePipelineOptions pipeline = options.pipeline;
    pipeline.report = options.passStatistics;
    if (compile) {
      buildCompilePipeline(pm, pipeline);
    } else if (stage == EmitStage::Train) {
      // The step as tgc --target=interp trains it: the training pipeline
      // alone, without @predict.
      TrainingPipelineOptions training = pipeline.resolved().training();
      training.predict = false;
      buildTrainingPipeline(pm, training);
    } else if (pipeline.fuse) {
      buildForwardFusionPipeline(pm, pipeline.report);
    }
    if (mlir::failed(pm.run(module.get())))
      return false;
  }
  return true;
}

/// A language model (no input named source_ids) takes a bucket's batch and
/// context: a bucket whose source length differs would have it ignored (two
/// buckets of one context compiled twice under different names), whatever
/// the stage written.
bool checkLanguageModelBuckets(
    const DriverOptions &options, llvm::ArrayRef<BucketShape> buckets,
    llvm::ArrayRef<mlir::OwningOpRef<mlir::ModuleOp>> modules) {
  for (auto [bucket, module] : llvm::zip(buckets, modules)) {
    if (bucket.sourceLength == bucket.targetLength)
      continue;
    bool hasSource = false;
    module.get().walk([&](mlir::func::FuncOp function) {
      for (unsigned i = 0; i < function.getNumArguments(); ++i)
        if (auto name = function.getArgAttrOfType<mlir::StringAttr>(i, "tg.name"))
          hasSource |= name.getValue() == "source_ids";
    });
    if (!hasSource) {
      llvm::errs() << "tgc: error: bucket " << bucket.text() << ": model '"
                   << options.modelName
                   << "' is a language model (it has no source): its "
                      "buckets are BATCHxCONTEXTxCONTEXT\n";
      return false;
    }
  }
  return true;
}

/// The training programs (and the interpreter's runs) pad every batch with
/// id 0: a cross-entropy that ignores another id (PyTorch's -100 is an easy
/// default to carry over) counts padding as targets, without a word.
void warnOfPaddingCounted(mlir::ModuleOp module) {
  module.walk([](tg::CrossEntropyOp loss) {
    auto ignored = static_cast<int32_t>(loss.getIgnoreIndex());
    if (ignored != runtime::kPadId)
      loss.emitWarning()
          << "ignores target id " << ignored
          << ", but batches are padded with id " << runtime::kPadId
          << ": the padding counts as targets (ignore "
          << runtime::kPadId << " to leave it out)";
  });
}

/// A model that ignored the bucket's shape would break the shared arena's
/// and the runtime's assumptions (and its interpreter runs and printed
/// stages would not be the bucket's): checked on @loss's batch inputs,
/// before anything runs.
bool checkBucketShapes(
    const DriverOptions &options, llvm::ArrayRef<BucketShape> buckets,
    llvm::ArrayRef<mlir::OwningOpRef<mlir::ModuleOp>> modules) {
  for (auto [bucket, module] : llvm::zip(buckets, modules)) {
    auto loss = module.get().lookupSymbol<mlir::func::FuncOp>("loss");
    if (!loss)
      continue; // the pipeline names what is missing
    runtime::BatchShape shape{-1, -1, -1};
    bool languageModel = true; // without source_ids
    for (unsigned i = 0; i < loss.getNumArguments(); ++i) {
      auto name = loss.getArgAttrOfType<mlir::StringAttr>(i, "tg.name");
      auto type = llvm::dyn_cast<mlir::RankedTensorType>(
          loss.getArgument(i).getType());
      if (!name || !type || type.getRank() != 2)
        continue;
      if (name.getValue() == "source_ids") {
        languageModel = false;
        shape.sourceLength = type.getDimSize(1);
      } else if (name.getValue() == "target_in_ids") {
        shape.batchSize = type.getDimSize(0);
        shape.targetLength = type.getDimSize(1);
      }
    }
    if (shape.batchSize < 0)
      continue; // no batch inputs: the pipeline says so
    if (shape.batchSize != bucket.batch ||
        (!languageModel && shape.sourceLength != bucket.sourceLength) ||
        shape.targetLength != bucket.targetLength) {
      llvm::errs() << "tgc: error: model '" << options.modelName << "' built "
                   << shape.batchSize << "x" << shape.sourceLength << "x"
                   << shape.targetLength << " for bucket " << bucket.text()
                   << "; it ignores bucket shapes\n";
      return false;
    }
  }
  return true;
}

/// What --corpus (for --model and --model-file only) needs of the model
/// built for it: language-model text trains a model without a source only,
/// and a program reads only a corpus of its own vocabulary, which a model
/// that ignores ModelOptions::vocabulary does not have (its program would
/// refuse the corpus it was compiled for).
bool checkCorpusFits(const DriverOptions &options, const CorpusFacts &corpus,
                     mlir::ModuleOp module) {
  if (options.corpusFile.empty())
    return true;
  mlir::FailureOr<StepSignature> signature = readStepSignature(module);
  if (mlir::failed(signature))
    return false;
  if (corpus.documents && signature->source >= 0) {
    llvm::errs() << "tgc: error: " << options.corpusFile
                 << " is a corpus of documents (language-model text), but the "
                    "model translates (it has source_ids): it trains on "
                    "sentence pairs (tgc-data encode --source S --target T)\n";
    return false;
  }
  if (signature->shape.vocabulary == corpus.vocabulary)
    return true;
  llvm::errs() << "tgc: error: " << options.corpusFile
               << " is encoded with a vocabulary of " << corpus.vocabulary
               << " ids, but the model's loss has "
               << signature->shape.vocabulary
               << " classes: the model does not take its vocabulary from "
                  "ModelOptions::vocabulary (docs/writing-models.md), and its "
                  "program could not read this corpus\n";
  return false;
}

/// The preset a registered model is built from: --preset, else the
/// model's default ("gpt2-tiny", where the program was labelled
/// "gpt2-default"); "default" for a model that lists none.
std::string resolvedPreset(const DriverOptions &options) {
  if (!options.presetName.empty())
    return options.presetName;
  const ModelDefinition *model = lookupModel(options.modelName);
  return model && !model->defaultPreset.empty() ? model->defaultPreset
                                                : "default";
}

/// Emits the planned modules as C++ or CUDA and writes it, or builds the
/// program; the exit code.
int emitProgram(const DriverOptions &options, const CorpusFacts &corpus,
                llvm::ArrayRef<mlir::OwningOpRef<mlir::ModuleOp>> modules) {
  CompiledModelInfo info;
  info.name = options.fromModel()
                  ? options.modelName + "-" + resolvedPreset(options)
                  : llvm::sys::path::stem(options.inputFilename).str();
  info.vocabularyHash = corpus.vocabularyHash;
  info.toolsDirectory = locateToolchain(options.toolchainPrefix).toolsDir;
  std::vector<mlir::ModuleOp> bucketModules;
  for (const auto &module : modules)
    bucketModules.push_back(module.get());
  bool cuda = options.target == Target::Cuda;
  BinaryOptions binary{options.compiler, options.keepSource, options.verbose};
  binary.toolchainPrefix = options.toolchainPrefix;
  binary.buildCache = options.buildCache;
  if (cuda) {
    binary.compiler = options.nvcc;
    binary.cudaArchitectures = options.cudaArchitectures;
  }
  auto emit = [&](std::string &cpp) {
    llvm::raw_string_ostream cppStream(cpp);
    return cuda ? emitCuda(bucketModules, info, cppStream)
                : emitCpp(bucketModules, info, cppStream);
  };
  // The manifest names the code's hash: the code without a manifest first.
  std::string bare, cpp;
  if (mlir::failed(emit(bare)))
    return 1;
  bool build = options.emitStage == EmitStage::Binary;
  info.manifest = programManifest(
      options, bucketModules, info.name,
      describeModelConfig(options, *bucketModules.front()->getContext(),
                          corpus.vocabulary),
      bare, build ? compileCommand(binary, cuda) : "");
  if (mlir::failed(emit(cpp)))
    return 1;
  if (!build)
    return writeOutput(options.outputFilename,
                       [&](llvm::raw_ostream &os) { os << cpp; });
  if (!cuda)
    return buildBinary(cpp, options.outputFilename, binary) ? 0 : 1;
  return buildCudaBinary(cpp, options.outputFilename, binary) ? 0 : 1;
}

} // namespace

int runDriver(const DriverOptions &given) {
  DriverOptions options = given;
  // Before a model file is compiled: nothing is written when refused, and
  // a flag's mistake is said before minutes of compiling.
  if (!checkRunFiles(options))
    return 1;
  if (!options.listModels && !checkOptions(options))
    return 1;
  if (!options.modelFile.empty() && !useModelFile(options))
    return 1;
  // Two registrations of one name: which one a run builds would depend on
  // load order.
  if (std::vector<std::string> conflicts = registrationConflicts();
      !conflicts.empty()) {
    for (const std::string &conflict : conflicts)
      llvm::errs() << "tgc: error: " << conflict << "\n";
    return 1;
  }
  if (options.listModels) {
    printModels(llvm::outs());
    return 0;
  }
  choosePrecision(options);

  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  // Diagnostics name the op and its source line; a dump of the whole
  // surrounding op (a function of thousands of lines) would bury them.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  // Errors without a source position (unknown preset, invalid config value)
  // read "tgc: error: ..." rather than "<unknown>:0: error: ...".
  mlir::ScopedDiagnosticHandler positionless(
      &context, [](mlir::Diagnostic &diag) -> mlir::LogicalResult {
        if (!llvm::isa<mlir::UnknownLoc>(diag.getLocation()))
          return mlir::failure();
        bool error = diag.getSeverity() == mlir::DiagnosticSeverity::Error;
        llvm::errs() << "tgc: " << (error ? "error" : "note") << ": " << diag
                     << "\n";
        return mlir::success();
      });

  CorpusFacts corpus;
  if (!options.corpusFile.empty() && !readCorpusFacts(options, corpus))
    return 1;
  std::vector<BucketShape> buckets = corpus.buckets;
  if (!options.bucketList.empty()) {
    if (std::string why = parseBuckets(options.bucketList, options.maxTokens,
                                       models::kMaxBatchSize, buckets);
        !why.empty()) {
      llvm::errs() << "tgc: error: --buckets: " << why << "\n";
      return 1;
    }
  }
  if (buckets.size() > 1 && options.target == Target::Interp) {
    llvm::errs() << "tgc: error: --target=interp runs one shape; give one bucket\n";
    return 1;
  }

  // One module per bucket; a file or a model without buckets is one.
  std::vector<mlir::OwningOpRef<mlir::ModuleOp>> modules;
  {
    std::optional<ModelCodeGuard> guard;
    if (!options.modelFile.empty())
      guard.emplace(options.modelFile, "building its model");
    if (!options.fromModel())
      modules.push_back(readModule(options.inputFilename, context, sourceMgr));
    else if (buckets.empty())
      modules.push_back(
          buildModel(options, context, nullptr, corpus.vocabulary));
    for (const BucketShape &bucket : buckets)
      modules.push_back(
          buildModel(options, context, &bucket, corpus.vocabulary));
  }
  for (const auto &module : modules)
    if (!module || failed(tg::verifyTgFunctions(*module)))
      return 1;
  if (!checkLanguageModelBuckets(options, buckets, modules))
    return 1;

  if (!buckets.empty() && !checkBucketShapes(options, buckets, modules))
    return 1;
  if (compiles(options) || options.emitStage == EmitStage::Train)
    warnOfPaddingCounted(*modules.front());
  if (options.checkGradients)
    return checkGradientsOnInterpreter(*modules.front(), options);
  if (!runPipelines(options, context, modules))
    return 1;
  if (compiles(options) && !checkCorpusFits(options, corpus, *modules.front()))
    return 1;

  mlir::ModuleOp module = *modules.front();
  if (options.target == Target::Interp)
    return options.emitStage == EmitStage::Train
               ? trainOnInterpreter(module, options)
               : runInterpreter(module, options);
  if (options.memoryReport) {
    for (auto [index, bucketModule] : llvm::enumerate(modules)) {
      if (modules.size() > 1)
        llvm::outs() << (index ? "\n" : "") << "bucket "
                     << buckets[index].text() << ":\n";
      if (!printMemoryReport(*bucketModule))
        return 1;
    }
    // With -o the program is written too, the report printed first.
    if (options.outputFilename == "-")
      return 0;
    llvm::outs().flush();
  }
  if (compiles(options))
    return emitProgram(options, corpus, modules);
  if (options.emitStage == EmitStage::Graph) {
    if (modules.size() > 1) {
      llvm::errs() << "tgc: error: --emit=graph writes one shape; give one bucket\n";
      return 1;
    }
    // Written as every other stage is: a FIFO nobody reads, a full disk and
    // `ulimit -f` are errors naming the file (they hung, or were LLVM's
    // fatal error).
    std::string bytes;
    if (failed(graphFileBytes(module, options.outputFilename, bytes)))
      return 1;
    return writeOutput(options.outputFilename,
                       [&](llvm::raw_ostream &os) { os << bytes; });
  }

  mlir::OpPrintingFlags flags;
  if (options.printLocations)
    flags.enableDebugInfo();
  return writeOutput(options.outputFilename, [&](llvm::raw_ostream &os) {
    for (auto [index, bucketModule] : llvm::enumerate(modules)) {
      if (modules.size() > 1)
        os << "// bucket " << buckets[index].text() << "\n";
      bucketModule->print(os, flags);
      os << "\n";
    }
  });
}

int tgcMain(int argc, char **argv, const char *toolchainPrefix) {
  llvm::InitLLVM initLLVM(argc, argv);
  // After InitLLVM, whose crash handlers would take SIGXFSZ.
  reportFileSizeLimitAsAnError();
  DriverOptions options = parseCommandLine(argc, argv);
  if (toolchainPrefix)
    options.toolchainPrefix = toolchainPrefix;
  return runDriver(options);
}

} // namespace tgc
