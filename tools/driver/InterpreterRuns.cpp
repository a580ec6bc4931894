//===- InterpreterRuns.cpp - tgc --target=interp, --check-gradients -------===//
#include "tools/driver/InterpreterRuns.h"

#include "codegen/interpreter/GradientCheck.h"
#include "codegen/interpreter/Interpreter.h"
#include "codegen/interpreter/InterpreterTrainer.h"
#include "ir/TgLocations.h"
#include "ir/TgOps.h"
#include "passes/Passes.h"
#include "runtime/data/AtomicFile.h"
#include "runtime/data/Tasks.h"
#include "runtime/program/train/LmWindows.h"
#include "runtime/program/train/Options.h"
#include "runtime/program/train/TrainingLoop.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <optional>
#include <random>

namespace tgc {
namespace {

/// The largest token id every embedding table and loss accepts.
int64_t vocabularyOf(mlir::ModuleOp module) {
  int64_t vocabulary = INT64_MAX;
  module.walk([&](tg::EmbeddingOp op) {
    vocabulary = std::min(vocabulary, op.getTable().getType().getDimSize(0));
  });
  module.walk([&](tg::CrossEntropyOp op) {
    vocabulary = std::min(vocabulary, op.getLogits().getType().getShape().back());
  });
  module.walk([&](tg::OutputLossOp op) {
    vocabulary = std::min(vocabulary, op.getWeight().getType().getDimSize(0));
  });
  return vocabulary == INT64_MAX ? 2 : vocabulary;
}

/// Every variable of `module` as raw f32 in declaration order: the format
/// generated binaries' --dump-params writes, for comparisons.
bool writeVariables(mlir::ModuleOp module, Interpreter &interpreter,
                    llvm::StringRef path) {
  // Whole or not at all: a failed write leaves what the file held.
  runtime::AtomicFile file(path.str());
  for (auto variable : module.getOps<tg::VariableOp>())
    for (double x : interpreter.variable(variable.getSymName())->data) {
      float f = static_cast<float>(x);
      file.write(&f, sizeof f);
    }
  if (std::string error = file.commit(); !error.empty()) {
    llvm::errs() << "tgc: error: " << error << "\n";
    return false;
  }
  return true;
}

} // namespace

/// The run-time hyperparameters the flags set, checked as the training
/// programs check them; none after a message.
std::optional<runtime::StepHyperparameters>
hyperparametersOf(const DriverOptions &options, const StepSignature &step) {
  runtime::StepHyperparameters h;
  bool ok = true;
  auto take = [&](const char *flag, std::optional<double> given,
                  std::optional<float> &out, int argument, bool zeroOk,
                  bool mixed = false) {
    if (!given)
      return;
    if (!(*given >= 0 && *given < 1) || (!zeroOk && *given == 0)) {
      llvm::errs() << "tgc: error: " << flag << " needs a number "
                   << (zeroOk ? "from 0 to below" : "above 0 and below")
                   << " 1, not " << llvm::format("%g", *given) << "\n";
      ok = false;
      return;
    }
    if (mixed) {
      llvm::errs() << "tgc: error: " << flag << " " << llvm::format("%g", *given)
                   << ": the model's sites of it have different compiled "
                      "values, which one flag cannot set (they would run as "
                      "compiled); recompile it with the values wanted, or "
                      "leave the flag out\n";
      ok = false;
      return;
    }
    if (argument < 0 && *given != 0) {
      llvm::errs() << "tgc: error: " << flag << " " << llvm::format("%g", *given)
                   << ": the model was compiled without it, so it has none "
                      "to set at run time; recompile it with a nonzero "
                      "value\n";
      ok = false;
      return;
    }
    out = static_cast<float>(*given);
  };
  std::optional<double> beta1, beta2;
  if (options.adamBetas) {
    std::string text = *options.adamBetas;
    for (char &c : text)
      if (c == '(' || c == ')' || c == ',')
        c = ' ';
    double b1 = 0, b2 = 0;
    char rest = 0;
    if (std::sscanf(text.c_str(), "%lf %lf %c", &b1, &b2, &rest) != 2) {
      llvm::errs() << "tgc: error: --adam-betas needs two numbers B1,B2, not '"
                   << *options.adamBetas << "'\n";
      return std::nullopt;
    }
    beta1 = b1;
    beta2 = b2;
  }
  take("--dropout", options.dropout, h.dropout, step.dropout, true,
       step.mixedDropout);
  take("--attention-dropout", options.attentionDropout, h.attentionDropout,
       step.attentionDropout, true, step.mixedAttentionDropout);
  take("--label-smoothing", options.labelSmoothing, h.labelSmoothing,
       step.labelSmoothing, true, step.mixedLabelSmoothing);
  take("--adam-betas", beta1, h.adamBeta1, step.adamBeta1, true);
  take("--adam-betas", beta2, h.adamBeta2, step.adamBeta2, true);
  take("--adam-eps", options.adamEps, h.adamEps, step.adamEps, false);
  if (!ok)
    return std::nullopt;
  return h;
}

/// The loss is label-smoothed, so the log's perplexity exp(loss) is an upper
/// bound of the model's.
int trainOnInterpreter(mlir::ModuleOp module, const DriverOptions &options) {
  if (failed(checkInterpreterMemory(module, Precision::F32)))
    return 1;
  std::optional<runtime::Task> task = runtime::parseTask(options.taskName);
  if (!task) {
    llvm::errs() << "tgc: error: unknown task '" << options.taskName
                 << "' (known: " << runtime::taskNames() << ")\n";
    return 1;
  }
  for (auto [flag, value] : {std::pair{"--steps", options.steps},
                             {"--log-every", options.logEvery},
                             {"--update-freq", options.updateFreq}})
    if (value < 1) {
      llvm::errs() << "tgc: error: " << flag << " needs an integer >= 1, not "
                   << value << "\n";
      return 1;
    }
  // As the compiled programs: more batches an update are no training (and
  // 1e11 of them ran out of memory).
  if (options.updateFreq > runtime::kMaxUpdateFreq) {
    llvm::errs() << "tgc: error: --update-freq " << options.updateFreq
                 << " is more than " << runtime::kMaxUpdateFreq
                 << " batches an update\n";
    return 1;
  }
  if (!(options.clipNorm >= 0) || !std::isfinite(options.clipNorm)) {
    llvm::errs() << "tgc: error: --clip-norm needs a number >= 0, not "
                 << options.clipNorm << "\n";
    return 1;
  }
  if (options.weightDecay &&
      !(*options.weightDecay >= 0 && *options.weightDecay <= 1)) {
    llvm::errs() << "tgc: error: --weight-decay needs a number from 0 to 1, not "
                 << *options.weightDecay << "\n";
    return 1;
  }
  auto trainer = InterpreterTrainer::create(module, Precision::F32, options.seed);
  if (failed(trainer))
    return 1;
  std::optional<runtime::StepHyperparameters> hyper =
      hyperparametersOf(options, (*trainer)->signature());
  if (!hyper)
    return 1;
  runtime::BatchShape shape = (*trainer)->batchShape();
  // A language model (no source) takes the task's pairs as prompt and
  // continuation, as its training programs do.
  bool languageModel = shape.sourceLength == 0;
  if (std::string why = runtime::validateBatchShape(
          *task, languageModel ? runtime::promptPairShape(shape) : shape);
      !why.empty()) {
    llvm::errs() << "tgc: error: the model cannot take task '" << options.taskName
                 << "': " << why << "\n";
    return 1;
  }
  llvm::outs() << "training @train_step on the interpreter: task "
               << options.taskName << ", batch " << shape.batchSize
               << ", seed " << options.seed << "\n";
  llvm::outs().flush(); // the loop's log is written with stdio

  runtime::TrainingLoop loop{**trainer};
  loop.batch = [&](uint32_t seed, uint64_t index) {
    return languageModel ? runtime::promptTaskBatch(*task, seed, index, shape)
                         : runtime::makeBatch(*task, seed, index, shape);
  };
  loop.schedule = (*trainer)->schedule();
  loop.seed = options.seed;
  loop.lastStep = options.steps;
  loop.logEvery = options.logEvery;
  loop.updateFreq = options.updateFreq;
  loop.clipNorm = static_cast<float>(options.clipNorm);
  loop.weightDecay = options.weightDecay
                         ? static_cast<float>(*options.weightDecay)
                         : (*trainer)->defaultWeightDecay();
  loop.hyper = *hyper;
  loop.lossLog = options.lossLog;
  // A NaN or an infinity: the same step re-run op by op names its op.
  loop.onNonFinite = [&](const runtime::Batch &batch,
                         const runtime::StepInput &input) {
    mlir::FailureOr<mlir::Operation *> op =
        (*trainer)->firstNonFinite(batch, input);
    if (failed(op))
      return;
    if (*op)
      llvm::errs() << "note: the first NaN or infinity of step " << input.step
                   << " comes from " << describeOp(*op) << "\n";
    else
      llvm::errs() << "note: re-running step " << input.step
                   << " op by op gave no NaN or infinity\n";
  };
  if (int code = runtime::runTrainingLoop(loop); code != 0)
    return code;
  if (!options.dumpParams.empty() &&
      !writeVariables(module, (*trainer)->interpreter(), options.dumpParams))
    return 1;
  return 0;
}

namespace {

/// The module's first function, or null after an error.
mlir::func::FuncOp firstFunction(mlir::ModuleOp module) {
  mlir::func::FuncOp function;
  module.walk([&](mlir::func::FuncOp f) {
    if (!function)
      function = f;
  });
  if (!function)
    module.emitError("the module has no function to run");
  return function;
}

/// A synthetic batch for `function`'s arguments: token ids uniform in
/// [1, vocabulary) (0 is padding), f32 inputs uniform in [-1, 1], the
/// dropout key (seed, step 1).
std::vector<HostTensor> syntheticArguments(mlir::ModuleOp module,
                                           mlir::func::FuncOp function,
                                           uint32_t seed) {
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
  return args;
}

} // namespace

/// Runs the module's function on a synthetic batch with the interpreter.
int runInterpreter(mlir::ModuleOp module, const DriverOptions &options) {
  mlir::func::FuncOp function = firstFunction(module);
  if (!function || failed(checkInterpreterMemory(module, Precision::F32)))
    return 1;
  uint32_t seed = options.seed;
  std::vector<HostTensor> args = syntheticArguments(module, function, seed);

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

int checkGradientsOnInterpreter(mlir::ModuleOp given,
                                const DriverOptions &options) {
  // A copy: dropout becomes the identity (a gradient check needs one
  // deterministic function), then tg-autodiff appends the gradients.
  if (failed(checkInterpreterMemory(given, Precision::F64)))
    return 1;
  mlir::OwningOpRef<mlir::ModuleOp> module(given.clone());
  int dropouts = 0;
  module->walk([&](tg::DropoutOp dropout) {
    dropout.getResult().replaceAllUsesWith(dropout.getInput());
    dropout.erase();
    ++dropouts;
  });
  // A fused op's dropout (a .mlir's tg.attention, tg.residual_layer_norm)
  // stays: its mask is the same in every probe, so the check still holds.
  bool fusedDropout = false;
  module->walk([&](mlir::Operation *op) {
    if (auto attention = llvm::dyn_cast<tg::AttentionOp>(op))
      fusedDropout |= attention.getDropoutRate().convertToFloat() > 0;
    else if (auto norm = llvm::dyn_cast<tg::ResidualLayerNormOp>(op))
      fusedDropout |= norm.getRate().convertToFloat() > 0;
  });
  mlir::func::FuncOp function = firstFunction(*module);
  if (!function)
    return 1;
  mlir::PassManager pm(module->getContext());
  pm.addPass(createTgAutodiff());
  if (mlir::failed(pm.run(*module)))
    return 1;

  Interpreter interpreter(*module, Precision::F64);
  interpreter.initializeVariables(options.seed);
  // Moved off their initial values: zero biases, unit gains and other
  // symmetric starts can hide a wrong rule behind a zero.
  std::mt19937 rng(options.seed + 1);
  std::uniform_real_distribution<double> nudge(-0.1, 0.1);
  for (auto variable : module->getOps<tg::VariableOp>())
    if (variable.getTrainable())
      for (double &x : interpreter.variable(variable.getSymName())->data)
        x += nudge(rng);
  std::vector<HostTensor> args =
      syntheticArguments(*module, function, options.seed);

  GradientCheckOptions check;
  check.seed = options.seed;
  std::string dropoutText = dropouts ? "dropout off" : "no dropout";
  if (fusedDropout)
    dropoutText = std::string(dropouts ? "tg.dropout off, " : "") +
                  "fused ops' dropout kept (the same mask in every probe)";
  llvm::outs() << "checking the gradients of @" << function.getName()
               << ": central differences (h = " << llvm::format("%g", check.step) << ", "
               << check.samplesPerVariable
               << " entries per parameter) on the f64 interpreter, a "
                  "synthetic batch (seed "
               << options.seed << "), "
               << dropoutText << "\n";
  llvm::outs().flush();
  auto checks = checkGradients(interpreter, *module, function.getName(), args,
                               check);
  if (mlir::failed(checks))
    return 1;
  constexpr double kTolerance = 1e-5;
  size_t width = 0;
  for (const VariableGradientCheck &c : *checks)
    width = std::max(width, c.variable.size());
  double worst = 0.0;
  const VariableGradientCheck *worstCheck = nullptr;
  for (const VariableGradientCheck &c : *checks) {
    llvm::outs() << "  " << llvm::left_justify(c.variable, width) << "  ";
    if (c.allZero)
      llvm::outs() << "zero gradient: the loss does not depend on it\n";
    else
      llvm::outs() << llvm::format("worst error %.2e", c.worstError())
                   << (c.worstError() > kTolerance ? "  ABOVE TOLERANCE" : "")
                   << "\n";
    if (!worstCheck || c.worstError() > worst) {
      worst = c.worstError();
      worstCheck = &c;
    }
  }
  if (!worstCheck) {
    llvm::errs() << "tgc: error: @" << function.getName()
                 << " has no trainable parameter to check\n";
    return 1;
  }
  if (worst <= kTolerance) {
    llvm::outs() << llvm::format("gradient check passed: worst error %.2e "
                                 "(tolerance %.0e) over %zu parameters\n",
                                 worst, kTolerance, checks->size());
    return 0;
  }
  const GradientEntry *bad = &worstCheck->entries.front();
  for (const GradientEntry &entry : worstCheck->entries)
    if (!(entry.error <= bad->error))
      bad = &entry;
  llvm::errs() << "tgc: error: gradient check failed: @" << worstCheck->variable
               << "[" << bad->index << "]: tg-autodiff gives "
               << llvm::format("%.9g", bad->analytic)
               << ", central differences "
               << llvm::format("%.9g", bad->numeric)
               << llvm::format(" (error %.2e, tolerance %.0e)\n", bad->error,
                               kTolerance);
  return 1;
}

} // namespace tgc
