//===- Adam.cpp - tg-adam: the optimizer update, in the graph ------------===//
//
// Consumes the gradient results tg-autodiff added and turns the loss function
// into the training step: moments as module state, one in-place
// tg.multi_adam_update over every parameter (the optimizer step, with the
// gradient norm, clipping, accumulation and AdamW's weight decay), lr, step
// and the optimizer's controls as runtime inputs. Which parameters decay is
// decided here, once (decaysByRule).
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "ir/TgOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"

namespace tgc {

#define GEN_PASS_DEF_TGADAM
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

struct AdamHyperparameters {
  float beta1, beta2, epsilon;
};

/// The variables the training step reads as the table of a tg.embedding
/// or tg.gather. The step's reads only: the functions derived for decoding
/// (@predict, @encode, @decode_step, made before this pass in a compiled
/// program, not for the interpreter) read other tables so (a learned
/// position table at the step's position), and the rule must not depend
/// on them.
llvm::StringSet<> embeddingTables(func::FuncOp step) {
  llvm::StringSet<> tables;
  auto note = [&](Value table) {
    if (auto load = table.getDefiningOp<tg::LoadOp>())
      tables.insert(load.getVariable());
  };
  step.walk([&](tg::EmbeddingOp op) { note(op.getTable()); });
  step.walk([&](tg::GatherOp op) { note(op.getInput()); });
  return tables;
}

/// Whether AdamW decays `param`: as its `weight_decay` attribute says, else
/// not for rank-0 or rank-1 parameters (scalars, biases, norms' gains) nor
/// embedding tables: tgc's rule (Hugging Face's default exempts only the
/// biases and the norms; nanoGPT decays every matrix, the tables too).
bool decaysByRule(tg::VariableOp param, const llvm::StringSet<> &tables) {
  if (std::optional<bool> marked = param.getWeightDecay())
    return *marked;
  return param.getTensorType().getRank() > 1 &&
         !tables.contains(param.getSymName());
}

/// A dropout site's compiled rate and its run-time operand.
struct RateSite {
  float rate = 0.0f;
  std::optional<MutableOperandRange> runTime;
};

float rateOf(tg::DropoutOp op) { return op.getRate().convertToFloat(); }
float rateOf(tg::DropoutGradOp op) { return op.getRate().convertToFloat(); }
float rateOf(tg::ResidualLayerNormOp op) { return op.getRate().convertToFloat(); }
float rateOf(tg::ResidualLayerNormGradOp op) {
  return op.getRate().convertToFloat();
}
float rateOf(tg::AttentionOp op) { return op.getDropoutRate().convertToFloat(); }
float rateOf(tg::AttentionGradOp op) {
  return op.getDropoutRate().convertToFloat();
}
MutableOperandRange runTimeOf(tg::DropoutOp op) { return op.getRateValueMutable(); }
MutableOperandRange runTimeOf(tg::DropoutGradOp op) {
  return op.getRateValueMutable();
}
MutableOperandRange runTimeOf(tg::ResidualLayerNormOp op) {
  return op.getRateValueMutable();
}
MutableOperandRange runTimeOf(tg::ResidualLayerNormGradOp op) {
  return op.getRateValueMutable();
}
MutableOperandRange runTimeOf(tg::AttentionOp op) {
  return op.getDropoutValueMutable();
}
MutableOperandRange runTimeOf(tg::AttentionGradOp op) {
  return op.getDropoutValueMutable();
}

/// `op` as a site of one of `Ops` (no rate when it is none).
template <typename... Ops> RateSite rateSite(Operation *op) {
  RateSite site;
  auto match = [&](auto typed) {
    if (!typed)
      return;
    site.rate = rateOf(typed);
    site.runTime = runTimeOf(typed);
  };
  (match(llvm::dyn_cast<Ops>(op)), ...);
  return site;
}

/// The op_ids of the dropouts on attention's probabilities that attention
/// fusion left as they were (a softmax's result, dropped): theirs is
/// --attention-dropout, as a fused attention's, not --dropout.
llvm::DenseSet<int64_t> attentionDropoutIds(func::FuncOp function) {
  llvm::DenseSet<int64_t> ids;
  function.walk([&](tg::DropoutOp op) {
    if (op.getInput().getDefiningOp<tg::SoftmaxOp>())
      ids.insert(op.getOpId());
  });
  return ids;
}

/// Adds the input `name` read by every dropout site `siteOf` finds in
/// `function`'s body (rate above 0, none given yet) when they share one
/// compiled rate; when they do not, notes `name` in `mixed`.
template <typename AddInput, typename SiteOf>
void addRateInput(func::FuncOp function, AddInput &addInput, StringRef name,
                  SmallVectorImpl<Attribute> &mixed, SiteOf siteOf) {
  SmallVector<MutableOperandRange> sites;
  std::optional<float> rate;
  bool one = true;
  for (Operation &op : function.getBody().front()) {
    RateSite site = siteOf(&op);
    if (!site.runTime || !(site.rate > 0.0f) || !site.runTime->empty())
      continue;
    one = one && (!rate || *rate == site.rate);
    rate = site.rate;
    sites.push_back(*site.runTime);
  }
  if (!one)
    mixed.push_back(StringAttr::get(function.getContext(), name));
  if (sites.empty() || !one)
    return;
  Value input = addInput(RankedTensorType::get(
                             {}, Float32Type::get(function.getContext())),
                         name);
  for (MutableOperandRange &site : sites)
    site.assign(input);
}

struct TgAdamPass : impl::TgAdamBase<TgAdamPass> {
  using TgAdamBase::TgAdamBase;

  void runOnOperation() override;

private:
  FailureOr<AdamHyperparameters> hyperparameters(ModuleOp module);
  FailureOr<tg::VariableOp> declareMoment(SymbolTable &symbols,
                                          tg::VariableOp param, StringRef kind,
                                          Operation *after);
};

/// The DSL's declaration (module attribute `tg.optimizer`) or the options.
FailureOr<AdamHyperparameters> TgAdamPass::hyperparameters(ModuleOp module) {
  AdamHyperparameters h{beta1, beta2, epsilon};
  auto declared = module->getAttrOfType<DictionaryAttr>("tg.optimizer");
  if (!declared)
    return h;
  auto name = declared.getAs<StringAttr>("name");
  if (!name || name.getValue() != "adam")
    return module.emitError()
           << "tg-adam: the module declares optimizer " << declared
           << "; only {name = \"adam\", ...} is supported";
  for (NamedAttribute entry : declared) {
    StringRef key = entry.getName().getValue();
    float *field = llvm::StringSwitch<float *>(key)
                       .Case("beta1", &h.beta1)
                       .Case("beta2", &h.beta2)
                       .Case("epsilon", &h.epsilon)
                       .Default(nullptr);
    // The default weight decay is the runtime's (the step's input).
    if (key == "name" || key == "weight_decay")
      continue;
    auto value = dyn_cast<FloatAttr>(entry.getValue());
    if (!field || !value)
      return module.emitError()
             << "tg-adam: tg.optimizer entry '" << key << " = "
             << entry.getValue()
             << "' is not one of beta1, beta2, epsilon as a float";
    *field = static_cast<float>(value.getValueAsDouble());
  }
  return h;
}

/// Declares `adam.<kind>.<param>` after `after`: zeros, not trainable.
FailureOr<tg::VariableOp> TgAdamPass::declareMoment(SymbolTable &symbols,
                                                    tg::VariableOp param,
                                                    StringRef kind,
                                                    Operation *after) {
  std::string name = ("adam." + kind + "." + param.getSymName()).str();
  if (Operation *taken = symbols.lookup(name))
    return taken->emitError()
           << "tg-adam: @" << name << " is the name of @"
           << param.getSymName()
           << "'s Adam moment, and it exists already: names beginning "
              "with 'adam.' are the optimizer's (or tg-adam ran twice)";
  OpBuilder b(after);
  b.setInsertionPointAfter(after);
  auto moment = b.create<tg::VariableOp>(
      param.getLoc(), name, cast<RankedTensorType>(param.getType()),
      tg::InitKind::zeros, std::nullopt, /*trainable=*/false);
  symbols.insert(moment, b.getInsertionPoint());
  return moment;
}

void TgAdamPass::runOnOperation() {
  ModuleOp module = getOperation();
  SymbolTable symbols(module);
  auto function = symbols.lookup<func::FuncOp>(functionName);
  if (!function) {
    module.emitError() << "tg-adam: no function @" << functionName;
    return signalPassFailure();
  }
  if (stepFunctionName.empty()) { // it prints as IR that does not parse
    module.emitError() << "tg-adam: the function it makes needs a name "
                          "(step-function)";
    return signalPassFailure();
  }
  if (!function.getBody().hasOneBlock()) {
    function.emitError() << "tg-adam: @" << functionName
                         << " must be a function with a body of one block";
    return signalPassFailure();
  }
  if (functionName != stepFunctionName && symbols.lookup(stepFunctionName)) {
    module.emitError() << "tg-adam: symbol @" << stepFunctionName
                       << " already exists";
    return signalPassFailure();
  }
  FailureOr<AdamHyperparameters> h = hyperparameters(module);
  if (failed(h))
    return signalPassFailure();

  Operation *terminator = function.getBody().front().getTerminator();
  llvm::BitVector gradientResults(function.getNumResults());
  for (unsigned i = 0; i < function.getNumResults(); ++i)
    if (function.getResultAttr(i, kGradientOfAttr))
      gradientResults.set(i);
  if (gradientResults.none()) {
    function.emitError() << "tg-adam: @" << functionName
                         << " returns no gradients; run tg-autodiff first";
    return signalPassFailure();
  }

  // The runtime's inputs of each step: the schedule's lr and step, and the
  // optimizer step's controls (gradient weight, accumulation phase, clip).
  OpBuilder b(terminator);
  Location loc = function.getLoc();
  auto named = [&](StringRef name) {
    return b.getDictionaryAttr(b.getNamedAttr("tg.name", b.getStringAttr(name)));
  };
  auto f32 = RankedTensorType::get({}, b.getF32Type());
  auto i32 = RankedTensorType::get({}, b.getI32Type());
  auto addInput = [&](Type type, StringRef name) {
    unsigned index = function.getNumArguments();
    function.insertArgument(index, type, named(name), loc);
    return function.getArgument(index);
  };
  Value lr = addInput(f32, "lr");
  Value step = addInput(i32, "step");
  Value weight = addInput(f32, "grad_weight");
  Value phase = addInput(i32, "update_phase");
  Value clip = addInput(f32, "clip_norm");
  Value weightDecay = addInput(f32, "weight_decay");
  // Adam's hyperparameters, the model's as defaults (the attributes).
  Value beta1 = addInput(f32, "adam_beta1");
  Value beta2 = addInput(f32, "adam_beta2");
  Value epsilon = addInput(f32, "adam_eps");
  // The dropout rates: one input for every dropout site but attention's and
  // one for attention's (fused, or a dropout of a softmax's result, forward
  // and backward alike), each where the sites share one compiled rate, its
  // default. A site compiled at rate 0 does not exist, so a model without
  // dropout gets no input.
  SmallVector<Attribute> mixed;
  const llvm::DenseSet<int64_t> attentionIds = attentionDropoutIds(function);
  auto ofAttention = [&](Operation *op) {
    if (auto drop = dyn_cast<tg::DropoutOp>(op))
      return attentionIds.contains(drop.getOpId());
    if (auto drop = dyn_cast<tg::DropoutGradOp>(op))
      return attentionIds.contains(drop.getOpId());
    return isa<tg::AttentionOp, tg::AttentionGradOp>(op);
  };
  addRateInput(function, addInput, "dropout", mixed, [&](Operation *op) {
    return ofAttention(op)
               ? RateSite{}
               : rateSite<tg::DropoutOp, tg::DropoutGradOp,
                          tg::ResidualLayerNormOp,
                          tg::ResidualLayerNormGradOp>(op);
  });
  addRateInput(function, addInput, "attention_dropout", mixed,
               [&](Operation *op) {
                 return ofAttention(op)
                            ? rateSite<tg::DropoutOp, tg::DropoutGradOp,
                                       tg::AttentionOp, tg::AttentionGradOp>(op)
                            : RateSite{};
               });
  // The loss's label smoothing, one input for the cross-entropies and their
  // gradients when they share one compiled value (its default).
  SmallVector<Operation *> losses;
  std::optional<APFloat> smoothing;
  bool oneSmoothing = true;
  auto noteLoss = [&](Operation *op, APFloat value, Value given) {
    if (given)
      return;
    losses.push_back(op);
    if (smoothing && *smoothing != value)
      oneSmoothing = false;
    smoothing = value;
  };
  function.walk([&](tg::CrossEntropyOp op) {
    noteLoss(op, op.getSmoothing(), op.getSmoothingValue());
  });
  function.walk([&](tg::CrossEntropyGradOp op) {
    noteLoss(op, op.getSmoothing(), op.getSmoothingValue());
  });
  if (!losses.empty() && !oneSmoothing)
    mixed.push_back(b.getStringAttr("label_smoothing"));
  if (!mixed.empty())
    function->setAttr(tg::kMixedRatesAttr, b.getArrayAttr(mixed));
  if (!losses.empty() && oneSmoothing) {
    Value labelSmoothing = addInput(f32, "label_smoothing");
    for (Operation *op : losses) {
      if (auto loss = dyn_cast<tg::CrossEntropyOp>(op))
        loss.getSmoothingValueMutable().assign(labelSmoothing);
      else
        cast<tg::CrossEntropyGradOp>(op).getSmoothingValueMutable().assign(
            labelSmoothing);
    }
  }

  SmallVector<Value> kept, grads;
  SmallVector<Attribute> params, moments1, moments2;
  SmallVector<Location> locs;
  SmallVector<bool> decays;
  const llvm::StringSet<> tables = embeddingTables(function);
  llvm::StringSet<> updated;
  for (unsigned i = 0; i < function.getNumResults(); ++i) {
    Value returned = terminator->getOperand(i);
    if (!gradientResults.test(i)) {
      kept.push_back(returned);
      continue;
    }
    auto ref = dyn_cast<FlatSymbolRefAttr>(
        function.getResultAttr(i, kGradientOfAttr));
    auto param = ref ? symbols.lookup<tg::VariableOp>(ref.getValue())
                     : tg::VariableOp();
    if (!param || !param.getTrainable()) {
      function.emitError() << "tg-adam: result #" << i << " is the gradient of "
                           << function.getResultAttr(i, kGradientOfAttr)
                           << ", which is not a trainable variable";
      return signalPassFailure();
    }
    if (!updated.insert(ref.getValue()).second) {
      function.emitError() << "tg-adam: results carry two gradients of " << ref;
      return signalPassFailure();
    }
    FailureOr<tg::VariableOp> m = declareMoment(symbols, param, "m", param);
    if (failed(m))
      return signalPassFailure();
    FailureOr<tg::VariableOp> v = declareMoment(symbols, param, "v", *m);
    if (failed(v))
      return signalPassFailure();
    params.push_back(FlatSymbolRefAttr::get(param.getSymNameAttr()));
    moments1.push_back(FlatSymbolRefAttr::get(m->getSymNameAttr()));
    moments2.push_back(FlatSymbolRefAttr::get(v->getSymNameAttr()));
    grads.push_back(returned);
    locs.push_back(param.getLoc());
    decays.push_back(decaysByRule(param, tables));
  }
  // One op over every parameter: clipping needs the global norm, and
  // accumulation one accumulator for the whole gradient.
  auto update = b.create<tg::MultiAdamUpdateOp>(
      b.getFusedLoc(locs), f32, b.getArrayAttr(params),
      b.getArrayAttr(moments1), b.getArrayAttr(moments2), grads, lr, step,
      weight, phase, clip, weightDecay, beta1, beta2, epsilon,
      b.getF32FloatAttr(h->beta1),
      b.getF32FloatAttr(h->beta2), b.getF32FloatAttr(h->epsilon),
      b.getDenseBoolArrayAttr(decays));
  kept.push_back(update.getGradNorm());
  terminator->setOperands(kept);
  function.eraseResults(gradientResults);
  // The norm is the last result, named for the runtime.
  unsigned last = function.getNumResults();
  function.insertResult(last, f32, named("grad_norm"));
  if (functionName != stepFunctionName)
    symbols.setSymbolName(function, stepFunctionName);
}

} // namespace
} // namespace tgc
