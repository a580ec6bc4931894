//===- StepSignature.cpp - reading @train_step's inputs and schedule -----===//
#include "codegen/StepSignature.h"

#include "ir/TgOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace tgc {

static FailureOr<WarmupSchedule> readSchedule(ModuleOp module) {
  auto attr = module->getAttrOfType<DictionaryAttr>("tg.schedule");
  auto name = attr ? attr.getAs<StringAttr>("name") : StringAttr();
  auto dModel = attr ? attr.getAs<IntegerAttr>("d_model") : IntegerAttr();
  auto warmup = attr ? attr.getAs<IntegerAttr>("warmup") : IntegerAttr();
  if (!name || name.getValue() != "warmup" || !dModel || !warmup ||
      dModel.getInt() < 1 || warmup.getInt() < 1)
    return module.emitError()
           << "the module declares no usable learning-rate schedule: expected "
              "tg.schedule = {name = \"warmup\", d_model = D, warmup = W} "
              "with D, W >= 1";
  WarmupSchedule schedule{dModel.getInt(), warmup.getInt(), 1.0};
  if (auto factor = attr.getAs<FloatAttr>("factor"))
    schedule.factor = factor.getValueAsDouble();
  // After the warmup: the paper's inverse square root unless `kind` says.
  if (auto kind = attr.getAs<StringAttr>("kind")) {
    std::optional<LrScheduler> known;
    for (LrScheduler k : {LrScheduler::InverseSqrt, LrScheduler::Cosine,
                          LrScheduler::Linear, LrScheduler::Constant})
      if (kind.getValue() == lrSchedulerName(k))
        known = k;
    if (!known)
      return module.emitError()
             << "tg.schedule's kind '" << kind.getValue()
             << "' is not inverse_sqrt, cosine, linear or constant";
    schedule.kind = *known;
  }
  if (auto peak = attr.getAs<FloatAttr>("peak"))
    schedule.peak = peak.getValueAsDouble();
  if (auto minimum = attr.getAs<FloatAttr>("minimum"))
    schedule.minimum = minimum.getValueAsDouble();
  // Finite numbers only: they become literals of the generated program.
  if (!std::isfinite(schedule.factor) || !std::isfinite(schedule.peak) ||
      !std::isfinite(schedule.minimum) || !(schedule.peak >= 0) ||
      !(schedule.minimum >= 0) ||
      (schedule.peak > 0 && schedule.minimum >= schedule.peak))
    return module.emitError()
           << "tg.schedule's factor, peak and minimum must be finite, the "
              "peak and minimum >= 0, the minimum below the peak";
  return schedule;
}

FailureOr<StepResults> readStepResults(func::FuncOp function) {
  StepResults r;
  unsigned count = function.getNumResults();
  bool ok = count >= 1;
  for (unsigned i = 1; i < count && ok; ++i) {
    auto name = function.getResultAttrOfType<StringAttr>(i, "tg.name");
    int *slot = llvm::StringSwitch<int *>(name ? name.getValue() : "")
                    .Case("", &r.tokens)
                    .Case("cross_entropy", &r.crossEntropy)
                    .Case("grad_norm", &r.gradNorm)
                    .Default(nullptr);
    // In that order, each at most once.
    ok = slot && *slot < 0 && r.gradNorm < 0 &&
         (slot != &r.tokens || r.crossEntropy < 0);
    if (ok)
      *slot = static_cast<int>(i);
  }
  if (!ok)
    return function.emitOpError()
           << "must return (loss[, tokens][, cross_entropy][, grad_norm])";
  return r;
}

FailureOr<StepSignature> readStepSignature(ModuleOp module,
                                           StringRef stepFunction) {
  auto function = module.lookupSymbol<func::FuncOp>(stepFunction);
  if (!function)
    return module.emitError() << "no training step @" << stepFunction
                              << " (run tg-training-pipeline first)";
  FailureOr<WarmupSchedule> schedule = readSchedule(module);
  if (failed(schedule))
    return failure();

  FailureOr<StepResults> results = readStepResults(function);
  if (failed(results))
    return failure();
  StepSignature s;
  s.function = function;
  if (auto adam = module->getAttrOfType<DictionaryAttr>("tg.optimizer"))
    if (auto decay = adam.getAs<FloatAttr>("weight_decay"))
      s.defaultWeightDecay = static_cast<float>(decay.getValueAsDouble());
  s.schedule = *schedule;
  s.results = *results;
  if (auto mixed = function->getAttrOfType<ArrayAttr>(tg::kMixedRatesAttr))
    for (auto name : mixed.getAsRange<StringAttr>()) {
      s.mixedDropout |= name.getValue() == "dropout";
      s.mixedAttentionDropout |= name.getValue() == "attention_dropout";
      s.mixedLabelSmoothing |= name.getValue() == "label_smoothing";
    }
  for (unsigned i = 0; i < function.getNumArguments(); ++i) {
    auto name = function.getArgAttrOfType<StringAttr>(i, "tg.name");
    int *slot = llvm::StringSwitch<int *>(name ? name.getValue() : "")
                    .Case("source_ids", &s.source)
                    .Case("target_in_ids", &s.targetIn)
                    .Case("target_out_ids", &s.targetOut)
                    .Case("dropout_key", &s.key)
                    .Case("lr", &s.lr)
                    .Case("step", &s.step)
                    .Case("grad_weight", &s.gradWeight)
                    .Case("update_phase", &s.updatePhase)
                    .Case("clip_norm", &s.clipNorm)
                    .Case("weight_decay", &s.weightDecay)
                    .Case("adam_beta1", &s.adamBeta1)
                    .Case("adam_beta2", &s.adamBeta2)
                    .Case("adam_eps", &s.adamEps)
                    .Case("label_smoothing", &s.labelSmoothing)
                    .Case("dropout", &s.dropout)
                    .Case("attention_dropout", &s.attentionDropout)
                    .Default(nullptr);
    // At the input's declaration (the model file's line).
    if (!slot)
      return mlir::emitError(function.getArgument(i).getLoc())
             << "argument #" << i << " of @" << stepFunction
             << " is not a training input (source_ids, target_in_ids, "
                "target_out_ids, dropout_key, lr, step, grad_weight, "
                "update_phase, clip_norm, weight_decay, adam_beta1, "
                "adam_beta2, adam_eps, label_smoothing, dropout, "
                "attention_dropout)";
    // The runtime fills each input by its name, with values of one type:
    // a model's own input of that name (an "lr" of its own, f32 token ids)
    // would be fed the wrong values, or not compile.
    BlockArgument argument = function.getArgument(i);
    if (*slot >= 0) {
      InFlightDiagnostic error =
          mlir::emitError(function.getArgument(*slot).getLoc())
          << "the step's input '" << name.getValue()
          << "' is given twice (arguments #" << *slot << " and #" << i
          << "): the runtime fills it, a model cannot name an input so";
      error.attachNote(argument.getLoc()) << "the other '" << name.getValue()
                                          << "'";
      return error;
    }
    auto type = dyn_cast<RankedTensorType>(argument.getType());
    llvm::StringRef kind = name.getValue();
    bool ids = kind == "source_ids" || kind == "target_in_ids" ||
               kind == "target_out_ids";
    bool integer = ids || kind == "dropout_key" || kind == "step" ||
                   kind == "update_phase";
    int64_t rank = ids ? 2 : kind == "dropout_key" ? 1 : 0;
    if (!type || type.getRank() != rank ||
        (integer ? !type.getElementType().isInteger(32)
                 : !type.getElementType().isF32()))
      return mlir::emitError(argument.getLoc())
             << "the step's input '" << kind << "' must be "
             << (ids                      ? "[batch, length] i32 token ids"
                 : kind == "dropout_key" ? "tensor<2xi32>"
                 : integer               ? "tensor<i32>"
                                         : "tensor<f32>")
             << ", as the runtime fills it, but is " << argument.getType();
    *slot = static_cast<int>(i);
  }
  // A language model has no source_ids: its batches are token windows.
  if (s.targetIn < 0 || s.targetOut < 0 || s.lr < 0 || s.step < 0 ||
      s.gradWeight < 0 || s.updatePhase < 0 || s.clipNorm < 0 ||
      s.results.gradNorm < 0)
    return function.emitError()
           << "@" << stepFunction << " must take target_in_ids, "
           << "target_out_ids (and source_ids, but for a language model), "
              "lr, step, grad_weight, update_phase and clip_norm, and return "
              "the grad_norm (run tg-adam)";

  auto shapeOf = [&](int arg) {
    return cast<RankedTensorType>(function.getArgument(arg).getType()).getShape();
  };
  ArrayRef<int64_t> target = shapeOf(s.targetOut);
  SmallVector<int64_t, 2> source =
      s.source >= 0 ? SmallVector<int64_t, 2>(shapeOf(s.source))
                    : SmallVector<int64_t, 2>{target.empty() ? 0 : target[0], 0};
  // The vocabulary: the classes every cross-entropy predicts. The runtime
  // reads logits rows of that width (decoders, validation) and checks ids
  // against it; a second loss of other classes (an auxiliary head) made the
  // last one walked the program's, silently.
  int64_t vocabulary = 0;
  Operation *firstLoss = nullptr;
  WalkResult classes = module.walk([&](Operation *op) -> WalkResult {
    int64_t count = 0;
    if (auto loss = dyn_cast<tg::CrossEntropyOp>(op))
      count = loss.getLogits().getType().getShape().back();
    else if (auto loss = dyn_cast<tg::OutputLossOp>(op))
      count = loss.getWeight().getType().getDimSize(0);
    else
      return WalkResult::advance();
    if (!firstLoss) {
      firstLoss = op;
      vocabulary = count;
    }
    if (count == vocabulary)
      return WalkResult::advance();
    InFlightDiagnostic error =
        op->emitError() << "predicts " << count << " classes, where the first "
                        << firstLoss->getName() << " predicts " << vocabulary
                        << ": a program has one vocabulary (its decoders and "
                           "token checks read logits of one width)";
    error.attachNote(firstLoss->getLoc()) << "the first loss";
    return WalkResult::interrupt();
  });
  if (classes.wasInterrupted())
    return failure();
  if (source.size() != 2 || target.size() != 2 || source[0] != target[0] ||
      shapeOf(s.targetIn) != target || vocabulary == 0)
    return function.emitError()
           << "@" << stepFunction << " must take [batch, length] token ids "
           << "and compute a cross-entropy loss";
  s.shape = {source[0], source[1], target[1], static_cast<int32_t>(vocabulary)};
  // The runtime checks token ids against the loss's vocabulary only: a
  // table of fewer rows that takes them would be read past its end (other
  // parameters' bytes, silently). Tables of other ids (learned positions)
  // may be smaller.
  WalkResult tables = function.walk([&](tg::EmbeddingOp op) -> WalkResult {
    // Through the ops that move ids without changing them (reshapes,
    // transposes, slices: one integer operand).
    Value ids = op.getIds();
    while (Operation *producer = ids.getDefiningOp()) {
      if (producer->getNumOperands() != 1 ||
          !getElementTypeOrSelf(producer->getOperand(0).getType()).isInteger())
        break;
      ids = producer->getOperand(0);
    }
    auto input = dyn_cast<BlockArgument>(ids);
    if (!input || input.getOwner()->getParentOp() != function.getOperation() ||
        (static_cast<int>(input.getArgNumber()) != s.source &&
         static_cast<int>(input.getArgNumber()) != s.targetIn))
      return WalkResult::advance();
    int64_t rows = op.getTable().getType().getDimSize(0);
    if (rows >= vocabulary)
      return WalkResult::advance();
    op.emitError() << "the embedding table has " << rows
                   << " rows, fewer than the vocabulary of " << vocabulary
                   << " tokens the loss predicts: token ids from " << rows
                   << " on would be read past its end (give the table the "
                      "vocabulary's rows)";
    return WalkResult::interrupt();
  });
  if (tables.wasInterrupted())
    return failure();
  // The compiled defaults of the run-time hyperparameters: the attributes of
  // the ops that read them.
  function.walk([&](tg::MultiAdamUpdateOp op) {
    s.defaultAdamBeta1 = op.getBeta1().convertToFloat();
    s.defaultAdamBeta2 = op.getBeta2().convertToFloat();
    s.defaultAdamEps = op.getEpsilon().convertToFloat();
  });
  function.walk([&](tg::CrossEntropyOp op) {
    s.defaultLabelSmoothing = op.getSmoothing().convertToFloat();
  });
  function.walk([&](tg::OutputLossOp op) {
    s.defaultLabelSmoothing = op.getSmoothing().convertToFloat();
  });
  // A dropout rate's default: the compiled rate of a site that reads it.
  auto noteRate = [&](Value runTime, APFloat rate) {
    auto arg = llvm::dyn_cast_or_null<BlockArgument>(runTime);
    if (!arg || arg.getOwner()->getParentOp() != function)
      return;
    if (static_cast<int>(arg.getArgNumber()) == s.dropout)
      s.defaultDropout = rate.convertToFloat();
    if (static_cast<int>(arg.getArgNumber()) == s.attentionDropout)
      s.defaultAttentionDropout = rate.convertToFloat();
  };
  function.walk([&](Operation *op) {
    if (auto drop = llvm::dyn_cast<tg::DropoutOp>(op))
      noteRate(drop.getRateValue(), drop.getRate());
    else if (auto drop = llvm::dyn_cast<tg::DropoutGradOp>(op))
      noteRate(drop.getRateValue(), drop.getRate());
    else if (auto norm = llvm::dyn_cast<tg::ResidualLayerNormOp>(op))
      noteRate(norm.getRateValue(), norm.getRate());
    else if (auto attention = llvm::dyn_cast<tg::AttentionOp>(op))
      noteRate(attention.getDropoutValue(), attention.getDropoutRate());
    else if (auto group = llvm::dyn_cast<tg::FusedElementwiseOp>(op))
      // Inside a group the rate is a body argument: its input's.
      for (auto [input, arg] : llvm::zip(group.getInputs(),
                                         group.getBody().getArguments()))
        if (tg::isDropoutRateInput(arg))
          for (Operation *user : arg.getUsers())
            if (auto drop = llvm::dyn_cast<tg::DropoutOp>(user))
              noteRate(input, drop.getRate());
            else if (auto drop = llvm::dyn_cast<tg::DropoutGradOp>(user))
              noteRate(input, drop.getRate());
  });
  return s;
}

} // namespace tgc
