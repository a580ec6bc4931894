//===- Driver.cpp - tgc's command line -----------------------------------===//
//
// Input is either a built-in or user-registered model (--model, --preset,
// --config) or a .mlir file. Diagnostics name file:line:col (the DSL source
// line for models); any failure exits non-zero.
//
//===----------------------------------------------------------------------===//
#include "tools/driver/Driver.h"

#include "codegen/Interpreter.h"
#include "codegen/InterpreterTrainer.h"
#include "codegen/StepSignature.h"
#include "codegen/cpu/CppEmitter.h"
#include "frontend/GraphFile.h"
#include "frontend/ModelRegistry.h"
#include "ir/TgOps.h"
#include "passes/MemoryPlan.h"
#include "passes/Passes.h"
#include "runtime/data/Tasks.h"
#include "tools/InitAll.h"
#include "runtime/data/TokenCorpus.h"
#include "tools/driver/BinaryBuilder.h"
#include "tools/driver/Buckets.h"
#include "tools/driver/Version.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <random>

namespace cl = llvm::cl;

namespace tgc {
namespace {

cl::OptionCategory tgcCategory("tgc options");
cl::OptionCategory mlirCategory(
    "MLIR options (IR printing, pass statistics, timing, diagnostics)");

cl::opt<std::string> inputFilename(cl::Positional,
                                   cl::desc("[<input .mlir | .tgpb | .pbtxt>]"),
                                   cl::init(""), cl::cat(tgcCategory));

cl::opt<std::string> modelName(
    "model", cl::desc("Build a registered model instead of reading a file"),
    cl::value_desc("name"), cl::cat(tgcCategory));

cl::opt<std::string> presetName("preset",
                                cl::desc("The model's preset (default: the "
                                         "model's own, e.g. base)"),
                                cl::value_desc("name"), cl::cat(tgcCategory));

cl::opt<std::string> configFile(
    "config",
    cl::desc("Protobuf text file overriding the preset's fields"),
    cl::value_desc("file.pbtxt"), cl::cat(tgcCategory));

cl::opt<std::string> bucketList(
    "buckets",
    cl::desc("Compile the model for several static shapes sharing its state "
             "and arena: comma-separated BATCHxSOURCExTARGET, or "
             "SOURCExTARGET with the batch from --max-tokens (default: the "
             "config's one shape, or buckets fitted to --corpus)"),
    cl::value_desc("list"), cl::cat(tgcCategory));

cl::opt<int64_t> maxTokens(
    "max-tokens",
    cl::desc("Token budget of one batch: a bucket's batch is this divided "
             "by its longer length"),
    cl::init(0), cl::cat(tgcCategory));

cl::opt<std::string> corpusFile(
    "corpus",
    cl::desc("A training corpus written by tgc-data encode: the vocabulary "
             "(size and hash) comes from it and, without --buckets, "
             "--bucket-count buckets fitted to its lengths"),
    cl::value_desc("file.tok"), cl::cat(tgcCategory));

cl::opt<int> bucketCount("bucket-count",
                         cl::desc("Buckets to fit to --corpus (default 4)"),
                         cl::init(4), cl::cat(tgcCategory));

cl::opt<bool> listModels("list-models",
                         cl::desc("List the registered models and presets"),
                         cl::cat(tgcCategory));

cl::opt<std::string> outputFilename("o", cl::desc("Output file (default: stdout)"),
                                    cl::value_desc("file"), cl::init("-"),
                                    cl::cat(tgcCategory));

enum class EmitStage { Graph, Tg, Fused, Train, Planned, Cpp, Cuda, Binary };

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
    cl::cat(tgcCategory));

enum class Target { None, Interp, Cuda };

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
    cl::cat(tgcCategory));

cl::opt<std::string> nvcc(
    "nvcc", cl::desc("CUDA compiler for --target=cuda (default: $TGC_NVCC, "
                     "else nvcc on PATH)"),
    cl::value_desc("path"), cl::cat(tgcCategory));

cl::opt<std::string> cudaArchitectures(
    "cuda-arch",
    cl::desc("GPU architectures of --target=cuda programs, comma-separated "
             "(default 80,90: sm_80 and sm_90)"),
    cl::init("80,90"), cl::value_desc("list"), cl::cat(tgcCategory));

cl::opt<bool> fuse("fuse",
                   cl::desc("Run the fusion passes (--fuse=false compiles the "
                            "unfused graph, for comparisons)"),
                   cl::init(true), cl::cat(tgcCategory));

cl::opt<std::string> taskName("task",
                              cl::desc("Built-in task to train on (--emit=train "
                                       "--target=interp): copy, reverse"),
                              cl::init("copy"), cl::cat(tgcCategory));

cl::opt<int64_t> steps("steps", cl::desc("Training steps (--target=interp)"),
                       cl::init(100), cl::cat(tgcCategory));

cl::opt<int64_t> logEvery("log-every",
                          cl::desc("Log a line every N steps (and the last)"),
                          cl::init(10), cl::cat(tgcCategory));

cl::opt<uint32_t> seed("seed",
                       cl::desc("Seed of parameters, inputs and dropout "
                                "(--target=interp)"),
                       cl::init(1), cl::cat(tgcCategory));

cl::opt<bool> memoryReport(
    "memory-report",
    cl::desc("Print the planned memory of the training step (weights, "
             "optimizer state, gradients, saved activations, scratch, peak) "
             "and stop"),
    cl::cat(tgcCategory));

cl::opt<std::string> compiler(
    "cxx", cl::desc("C++ compiler for --emit=binary (default: $TGC_CXX, else "
                    "the compiler tgc was built with)"),
    cl::value_desc("path"), cl::cat(tgcCategory));

cl::opt<bool> keepSource("keep-cpp",
                         cl::desc("--emit=binary: keep the generated C++ as "
                                  "<output>.cpp"),
                         cl::cat(tgcCategory));

cl::opt<bool> verbose("v", cl::desc("Print the host compiler's command"),
                      cl::cat(tgcCategory));

cl::opt<std::string> dumpParams(
    "dump-params",
    cl::desc("--target=interp --emit=train: write every variable after "
             "training (raw f32, declaration order)"),
    cl::value_desc("file"), cl::cat(tgcCategory));

cl::opt<std::string> lossLog(
    "loss-log",
    cl::desc("--target=interp --emit=train: write 'step loss tokens' per "
             "step"),
    cl::value_desc("file"), cl::cat(tgcCategory));

cl::opt<bool> printLocations(
    "locations",
    cl::desc("Print MLIR locations (on by default for --model: they point at "
             "the model's source lines)"),
    cl::cat(tgcCategory));

/// libLLVM registers hundreds of backend flags; --help shows only tgc's own
/// and the MLIR ones (--mlir-print-ir-after-all, --mlir-timing, ...).
void hideUnrelatedOptions() {
  for (auto &entry : cl::getRegisteredOptions())
    if (entry.getKey().starts_with("mlir-"))
      entry.getValue()->addCategory(mlirCategory);
  cl::HideUnrelatedOptions({&tgcCategory, &mlirCategory});
}

/// Debian's LLVM compiles pass statistics out; with --mlir-pass-statistics
/// the fusion passes also report their counts as remarks.
bool passStatisticsRequested() {
  auto &options = cl::getRegisteredOptions();
  auto it = options.find("mlir-pass-statistics");
  return it != options.end() && it->second->getNumOccurrences() > 0;
}

void printVersion(llvm::raw_ostream &os) {
  os << "tgc " << TGC_VERSION << " (MLIR " << TGC_MLIR_VERSION << ")\n";
}

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
  std::vector<BucketShape> buckets;
};

bool readCorpusFacts(CorpusFacts &facts) {
  std::string error;
  std::optional<runtime::TokenCorpus> corpus =
      runtime::TokenCorpus::open(corpusFile, error);
  if (!corpus) {
    llvm::errs() << "tgc: " << error << "\n";
    return false;
  }
  facts.vocabulary = corpus->vocabularySize();
  facts.vocabularyHash = corpus->vocabularyHash();
  if (!bucketList.empty())
    return true;
  if (maxTokens <= 0) {
    llvm::errs() << "tgc: --corpus fits buckets to the data: give "
                    "--max-tokens (or --buckets)\n";
    return false;
  }
  std::vector<PairLength> lengths;
  for (size_t i = 0; i < corpus->size(); ++i)
    lengths.push_back({static_cast<int64_t>(corpus->source(i).size()) + 1,
                       static_cast<int64_t>(corpus->target(i).size()) + 1});
  facts.buckets = bucketsForCorpus(lengths, bucketCount, maxTokens);
  if (facts.buckets.empty()) {
    llvm::errs() << "tgc: " << corpusFile << " has no sentence pairs\n";
    return false;
  }
  return true;
}

mlir::OwningOpRef<mlir::ModuleOp>
buildModel(mlir::MLIRContext &context, const BucketShape *bucket,
           int64_t vocabulary) {
  const ModelDefinition *model = lookupModel(modelName);
  if (!model) {
    std::vector<std::string> names;
    for (const ModelDefinition *known : registeredModels())
      names.push_back(known->name);
    llvm::errs() << "tgc: unknown model '" << modelName
                 << "' (known: " << llvm::join(names, ", ") << ")\n";
    return nullptr;
  }
  ModelOptions options{presetName.empty() ? model->defaultPreset : presetName,
                       configFile};
  options.vocabulary = vocabulary;
  if (bucket) {
    options.batchSize = bucket->batch;
    options.sourceLength = bucket->sourceLength;
    options.targetLength = bucket->targetLength;
  }
  auto module = model->build(context, options);
  if (failed(module))
    return nullptr;
  return std::move(*module);
}

mlir::OwningOpRef<mlir::ModuleOp> readModule(mlir::MLIRContext &context,
                                             llvm::SourceMgr &sourceMgr) {
  if (isGraphFile(inputFilename))
    return readGraphFile(context, inputFilename);
  std::string error;
  auto file = mlir::openInputFile(inputFilename, &error);
  if (!file) {
    llvm::errs() << "tgc: " << error << "\n";
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  return mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
}

/// The largest token id every embedding table and loss accepts.
int64_t vocabularyOf(mlir::ModuleOp module) {
  int64_t vocabulary = INT64_MAX;
  module.walk([&](tg::EmbeddingOp op) {
    vocabulary = std::min(vocabulary, op.getTable().getType().getDimSize(0));
  });
  module.walk([&](tg::CrossEntropyOp op) {
    vocabulary = std::min(vocabulary, op.getLogits().getType().getShape().back());
  });
  return vocabulary == INT64_MAX ? 2 : vocabulary;
}

/// Writes what `write` prints to -o (stdout by default); the exit code.
int writeOutput(llvm::function_ref<void(llvm::raw_ostream &)> write) {
  std::string error;
  auto output = mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << "tgc: " << error << "\n";
    return 1;
  }
  write(output->os());
  output->keep();
  return 0;
}

/// Every variable of `module` as raw f32 in declaration order: the format
/// generated binaries' --dump-params writes, for comparisons.
bool writeVariables(mlir::ModuleOp module, Interpreter &interpreter,
                    llvm::StringRef path) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    llvm::errs() << "tgc: cannot write " << path << ": " << ec.message()
                 << "\n";
    return false;
  }
  for (auto variable : module.getOps<tg::VariableOp>())
    for (double x : interpreter.variable(variable.getSymName())->data) {
      float f = static_cast<float>(x);
      os.write(reinterpret_cast<const char *>(&f), sizeof f);
    }
  return true;
}

/// Prints tg-plan-memory's report of @train_step (and the arenas of
/// @predict and the incremental decoder, and its caches).
bool printMemoryReport(mlir::ModuleOp module) {
  auto step = module.lookupSymbol<mlir::func::FuncOp>("train_step");
  if (!step) {
    llvm::errs() << "tgc: the module has no @train_step\n";
    return false;
  }
  mlir::FailureOr<MemoryReport> report = readMemoryReport(step);
  if (mlir::failed(report))
    return false;
  llvm::outs() << "memory of @train_step (planned by tg-plan-memory):\n"
               << report->format();
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

/// Trains the compiled step on the interpreter and logs every --log-every
/// steps. The loss is label-smoothed, so its perplexity exp(loss) is an upper
/// bound of the model's.
int trainOnInterpreter(mlir::ModuleOp module) {
  std::optional<runtime::Task> task = runtime::parseTask(taskName);
  if (!task) {
    llvm::errs() << "tgc: unknown task '" << taskName
                 << "' (known: " << runtime::taskNames() << ")\n";
    return 1;
  }
  if (steps < 1 || logEvery < 1) {
    llvm::errs() << "tgc: --steps and --log-every must be at least 1\n";
    return 1;
  }
  auto trainer = InterpreterTrainer::create(module, Precision::F32, seed);
  if (failed(trainer))
    return 1;
  runtime::BatchShape shape = (*trainer)->batchShape();
  if (std::string why = runtime::validateBatchShape(*task, shape); !why.empty()) {
    llvm::errs() << "tgc: the model cannot take task '" << taskName
                 << "': " << why << "\n";
    return 1;
  }
  llvm::outs() << "training @train_step on the interpreter: task " << taskName
               << ", batch " << shape.batchSize << ", seed " << seed << "\n";
  std::unique_ptr<llvm::raw_fd_ostream> losses;
  if (!lossLog.empty()) {
    std::error_code ec;
    losses = std::make_unique<llvm::raw_fd_ostream>(lossLog, ec);
    if (ec) {
      llvm::errs() << "tgc: cannot write " << lossLog << ": " << ec.message()
                   << "\n";
      return 1;
    }
  }
  auto start = std::chrono::steady_clock::now();
  int64_t tokens = 0;
  for (int64_t step = 1; step <= steps; ++step) {
    runtime::Batch batch =
        runtime::makeBatch(*task, seed, static_cast<uint64_t>(step - 1), shape);
    auto result = (*trainer)->step(batch);
    if (failed(result))
      return 1;
    tokens += result->tokens;
    if (losses)
      *losses << llvm::format("%lld %.9g %lld\n", static_cast<long long>(step),
                              result->loss,
                              static_cast<long long>(result->tokens));
    if (step % logEvery != 0 && step != steps && step != 1)
      continue;
    double elapsed = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    llvm::outs() << llvm::format(
        "step %6lld/%lld  loss %.4f  ppl %8.3f  lr %.3e  tok/s %7.0f  "
        "elapsed %6.1fs\n",
        static_cast<long long>(step), static_cast<long long>(steps.getValue()),
        result->loss, std::exp(result->loss), result->learningRate,
        tokens / std::max(elapsed, 1e-9), elapsed);
  }
  if (!dumpParams.empty())
    return writeVariables(module, (*trainer)->interpreter(), dumpParams) ? 0 : 1;
  return 0;
}

/// Runs the module's function on a synthetic batch with the interpreter:
/// token ids uniform in [1, vocabulary) (0 is padding), f32 inputs uniform in
/// [-1, 1], the dropout key (seed, step 1).
int runInterpreter(mlir::ModuleOp module) {
  mlir::func::FuncOp function;
  module.walk([&](mlir::func::FuncOp f) { function = f; });
  if (!function) {
    llvm::errs() << "tgc: the module has no function to run\n";
    return 1;
  }
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> token(
      1, std::max<int64_t>(1, vocabularyOf(module) - 1));
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<HostTensor> args;
  for (mlir::BlockArgument arg : function.getArguments()) {
    auto type = llvm::cast<mlir::RankedTensorType>(arg.getType());
    std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
    auto name = function.getArgAttrOfType<mlir::StringAttr>(arg.getArgNumber(),
                                                            "tg.name");
    if (name && name.getValue() == "dropout_key") {
      args.push_back(HostTensor::i32(shape, {double(seed), 1.0}));
      continue;
    }
    bool ids = type.getElementType().isInteger(32);
    HostTensor tensor(shape, ids ? ElementType::I32 : ElementType::F32);
    for (double &element : tensor.data)
      element = ids ? double(token(rng)) : value(rng);
    args.push_back(std::move(tensor));
  }

  Interpreter interpreter(module, Precision::F32);
  interpreter.initializeVariables(seed);
  auto results = interpreter.run(function.getName(), args);
  if (failed(results))
    return 1;
  llvm::outs() << "@" << function.getName() << " on a synthetic batch (seed "
               << seed << "):\n";
  for (auto [index, result] : llvm::enumerate(*results)) {
    llvm::outs() << "  result " << index << ": ";
    // Small results in full (row-major), larger ones by their size.
    if (result.numElements() > 16) {
      llvm::outs() << "tensor of " << result.numElements() << " elements";
    } else {
      bool scalar = result.rank() == 0;
      llvm::outs() << (scalar ? "" : "[");
      llvm::interleaveComma(result.data, llvm::outs(), [](double element) {
        llvm::outs() << llvm::format("%.6g", element);
      });
      llvm::outs() << (scalar ? "" : "]");
    }
    llvm::outs() << "\n";
  }
  return 0;
}

} // namespace

int tgcMain(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  hideUnrelatedOptions();
  cl::SetVersionPrinter(printVersion);
  cl::ParseCommandLineOptions(
      argc, argv,
      "tgc: ahead-of-time compiler for the Transformer's training step\n");

  if (listModels) {
    printModels(llvm::outs());
    return 0;
  }
  bool fromModel = !modelName.empty();
  if (fromModel == !inputFilename.empty()) {
    llvm::errs() << "tgc: give either an input file or --model NAME "
                    "(see --help, --list-models)\n";
    return 1;
  }
  if (!fromModel && (!presetName.empty() || !configFile.empty())) {
    llvm::errs() << "tgc: --preset and --config apply to --model only\n";
    return 1;
  }

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
  if (!corpusFile.empty() && !readCorpusFacts(corpus))
    return 1;
  std::vector<BucketShape> buckets = corpus.buckets;
  if (!bucketList.empty()) {
    if (std::string why = parseBuckets(bucketList, maxTokens, buckets);
        !why.empty()) {
      llvm::errs() << "tgc: --buckets: " << why << "\n";
      return 1;
    }
  }
  if (!fromModel && (!buckets.empty() || !corpusFile.empty())) {
    llvm::errs() << "tgc: --buckets and --corpus apply to --model only\n";
    return 1;
  }
  if (buckets.size() > 1 && target == Target::Interp) {
    llvm::errs() << "tgc: --target=interp runs one shape; give one bucket\n";
    return 1;
  }

  // One module per bucket; a file or a model without buckets is one.
  std::vector<mlir::OwningOpRef<mlir::ModuleOp>> modules;
  if (!fromModel)
    modules.push_back(readModule(context, sourceMgr));
  else if (buckets.empty())
    modules.push_back(buildModel(context, nullptr, corpus.vocabulary));
  for (const BucketShape &bucket : buckets)
    modules.push_back(buildModel(context, &bucket, corpus.vocabulary));
  for (const auto &module : modules)
    if (!module)
      return 1;

  // A program cannot go to stdout: without --emit and -o (or with
  // --target=interp), tgc prints the verified module instead.
  if (!emitStage.getNumOccurrences() &&
      (outputFilename == "-" || target == Target::Interp))
    emitStage = EmitStage::Tg;
  if (emitStage == EmitStage::Cuda && target != Target::Cuda) {
    llvm::errs() << "tgc: --emit=cuda needs --target=cuda\n";
    return 1;
  }
  if (emitStage == EmitStage::Cpp && target == Target::Cuda) {
    llvm::errs() << "tgc: --target=cuda writes --emit=cuda, not --emit=cpp\n";
    return 1;
  }
  bool compile = emitStage == EmitStage::Cpp || emitStage == EmitStage::Cuda ||
                 emitStage == EmitStage::Binary || memoryReport;
  if (target == Target::Interp && (compile || emitStage == EmitStage::Planned)) {
    llvm::errs() << "tgc: --target=interp runs --emit=tg or --emit=train, "
                    "not a compiled program\n";
    return 1;
  }
  if (emitStage == EmitStage::Binary && !memoryReport &&
      outputFilename == "-" && target != Target::Interp) {
    llvm::errs() << "tgc: --emit=binary writes a program: give -o FILE, or "
                    "--emit=tg|train|cpp to print a stage\n";
    return 1;
  }
  if (compile || emitStage == EmitStage::Fused ||
      emitStage == EmitStage::Train || emitStage == EmitStage::Planned) {
    for (auto &module : modules) {
      mlir::PassManager pm(&context);
      if (mlir::failed(mlir::applyPassManagerCLOptions(pm)))
        return 1;
      mlir::applyDefaultTimingPassManagerCLOptions(pm);
      bool report = passStatisticsRequested();
      if (compile || emitStage == EmitStage::Planned) {
        CompilePipelineOptions options;
        options.fuse = fuse.getValue();
        options.report = report;
        buildCompilePipeline(pm, options);
      } else if (emitStage == EmitStage::Train) {
        TrainingPipelineOptions options;
        options.fuse = fuse.getValue();
        options.report = report;
        buildTrainingPipeline(pm, options);
      } else if (fuse) {
        buildForwardFusionPipeline(pm, report);
      }
      if (mlir::failed(pm.run(*module)))
        return 1;
    }
  }
  // A model that ignored the bucket's shape would break the shared arena's
  // and the runtime's assumptions.
  if (compile && !buckets.empty()) {
    for (auto [bucket, module] : llvm::zip(buckets, modules)) {
      mlir::FailureOr<StepSignature> signature = readStepSignature(*module);
      if (mlir::failed(signature))
        return 1;
      const runtime::BatchShape &shape = signature->shape;
      if (shape.batchSize != bucket.batch ||
          shape.sourceLength != bucket.sourceLength ||
          shape.targetLength != bucket.targetLength) {
        llvm::errs() << "tgc: model '" << modelName << "' built "
                     << shape.batchSize << "x" << shape.sourceLength << "x"
                     << shape.targetLength << " for bucket " << bucket.text()
                     << "; it ignores bucket shapes\n";
        return 1;
      }
    }
  }

  mlir::ModuleOp module = *modules.front();
  if (target == Target::Interp)
    return emitStage == EmitStage::Train ? trainOnInterpreter(module)
                                         : runInterpreter(module);
  if (memoryReport) {
    for (auto [index, bucketModule] : llvm::enumerate(modules)) {
      if (modules.size() > 1)
        llvm::outs() << (index ? "\n" : "") << "bucket "
                     << buckets[index].text() << ":\n";
      if (!printMemoryReport(*bucketModule))
        return 1;
    }
    return 0;
  }
  if (compile) {
    CompiledModelInfo info;
    info.name = fromModel ? modelName + "-" +
                                (presetName.empty() ? std::string("default")
                                                    : presetName.getValue())
                          : llvm::sys::path::stem(inputFilename).str();
    info.vocabularyHash = corpus.vocabularyHash;
    std::vector<mlir::ModuleOp> bucketModules;
    for (auto &bucketModule : modules)
      bucketModules.push_back(*bucketModule);
    bool cuda = target == Target::Cuda;
    std::string cpp;
    llvm::raw_string_ostream cppStream(cpp);
    if (mlir::failed(cuda ? emitCuda(bucketModules, info, cppStream)
                          : emitCpp(bucketModules, info, cppStream)))
      return 1;
    if (emitStage == EmitStage::Binary) {
      BinaryOptions options{compiler, keepSource, verbose};
      if (cuda) {
        options.compiler = nvcc;
        options.cudaArchitectures = cudaArchitectures;
        return buildCudaBinary(cpp, outputFilename, options) ? 0 : 1;
      }
      return buildBinary(cpp, outputFilename, options) ? 0 : 1;
    }
    return writeOutput([&](llvm::raw_ostream &os) { os << cpp; });
  }
  if (emitStage == EmitStage::Graph) {
    if (modules.size() > 1) {
      llvm::errs() << "tgc: --emit=graph writes one shape; give one bucket\n";
      return 1;
    }
    return failed(writeGraphFile(module, outputFilename)) ? 1 : 0;
  }

  mlir::OpPrintingFlags flags;
  if (printLocations.getNumOccurrences() ? printLocations : fromModel)
    flags.enableDebugInfo();
  return writeOutput([&](llvm::raw_ostream &os) {
    for (auto [index, bucketModule] : llvm::enumerate(modules)) {
      if (modules.size() > 1)
        os << "// bucket " << buckets[index].text() << "\n";
      bucketModule->print(os, flags);
      os << "\n";
    }
  });
}

} // namespace tgc
