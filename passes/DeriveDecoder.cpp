//===- DeriveDecoder.cpp - tg-derive-decoder ------------------------------===//
//
// Splits @predict(source, target prefix) -> logits into an incremental
// decoder:
//
//   @encode(source)                  runs what depends on the source only and
//                                    stores what the decoder reads of it
//                                    (cross-attention keys/values, the source
//                                    padding mask) into cache variables;
//   @decode_step(ids [B,1], position) -> logits [B,1,V]
//                                    runs what depends on the target for one
//                                    position, appending its self-attention
//                                    keys/values to caches.
//
// Values are sorted by what they depend on: the target ids ("target" ops,
// rewritten to one position), the source only ("source" values, cached by
// @encode when a target op reads them), or neither (loads, constants,
// positional encodings: recomputed in @decode_step, for one position where
// they have one). A target value's "time axis" is the dimension that indexes
// target positions; each op kind says how it moves from operands to results,
// and back for recomputed values, in its DecoderAxesOpInterface model
// (passes/decoder/).
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "passes/decoder/DecoderAxes.h"

#include "ir/TgOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseSet.h"

namespace tgc {

#define GEN_PASS_DEF_TGDERIVEDECODER
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

/// The variable read by the GEMM that `value` comes from (through reshapes
/// and transposes): "decoder.layer0.cross_attn.w_k", or "".
StringRef weightName(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (llvm::isa<tg::ReshapeOp, tg::TransposeOp>(def)) {
      value = def->getOperand(0);
      continue;
    }
    Value weight;
    if (auto matmul = llvm::dyn_cast<tg::MatmulOp>(def))
      weight = matmul.getRhs();
    else if (auto linear = llvm::dyn_cast<tg::LinearOp>(def))
      weight = linear.getWeight();
    if (auto load = weight ? weight.getDefiningOp<tg::LoadOp>() : nullptr)
      return load.getVariable();
    return "";
  }
  return "";
}

/// "decoder.layer0.cross_attn" for its w_k: the layer a cache belongs to.
std::string layerOf(Value value) {
  StringRef weight = weightName(value);
  return weight.contains('.') ? weight.rsplit('.').first.str() : "";
}

class DecoderBuilder {
public:
  DecoderBuilder(ModuleOp module, func::FuncOp predict)
      : module(module), predict(predict), symbols(module),
        builder(module.getContext()) {}

  LogicalResult build(StringRef encodeName, StringRef stepName);
  /// Removes what a failed build() added.
  void rollBack();

private:
  LogicalResult classify();
  LogicalResult rewrite(Operation *op);
  LogicalResult rewriteSelfAttention(tg::AttentionOp op);
  /// `value` of @predict as @decode_step sees it, with time axis `axis`.
  FailureOr<Value> operand(Value value, int64_t axis, Operation *user);
  /// Recomputes value (depending on neither input) in @decode_step.
  FailureOr<Value> recompute(Value value, int64_t axis);
  /// Clones `op` into @decode_step with `operands`, its results cut to one
  /// position at `resultAxes`.
  Operation *cloneAt(Operation *op, ArrayRef<Value> operands,
                     ArrayRef<int64_t> resultAxes);
  tg::VariableOp declareCache(StringRef name, Type type);
  SmallVector<tg::VariableOp> declaredCaches;
  Value loadCache(tg::VariableOp cache, Location loc);
  LogicalResult buildEncode(StringRef encodeName);

  ModuleOp module;
  func::FuncOp predict, step;
  SymbolTable symbols;
  OpBuilder builder;
  Value source, target;        ///< @predict's id arguments
  Value stepIds, position;     ///< @decode_step's arguments
  int64_t batch = 0, targetLength = 0;
  llvm::DenseSet<Value> targetValues, sourceValues;
  DenseMap<Value, Value> mapped;       ///< target values -> @decode_step
  DenseMap<Value, int64_t> timeAxis;   ///< of target values
  std::map<std::pair<void *, int64_t>, Value> recomputed;
  /// Source values a target op reads, and the caches @encode stores them in.
  SmallVector<std::pair<Value, tg::VariableOp>> encoderOutputs;
  DenseMap<Value, tg::VariableOp> cacheOf;
  Operation *lastVariable = nullptr;
};

LogicalResult DecoderBuilder::classify() {
  for (BlockArgument arg : predict.getArguments()) {
    auto name = predict.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "tg.name");
    if (name && name.getValue() == "source_ids")
      source = arg;
    else if (name && name.getValue() == "target_in_ids")
      target = arg;
  }
  // A decoder-only model has no source: nothing to encode.
  if (!target)
    return predict.emitError()
           << "tg-derive-decoder: @" << predict.getSymName()
           << " needs an argument named target_in_ids";
  auto targetShape = shapeOf(target);
  if (targetShape.size() != 2)
    return predict.emitError() << "tg-derive-decoder: target_in_ids must be "
                                  "[batch, length]";
  batch = targetShape[0];
  targetLength = targetShape[1];
  if (source)
    sourceValues.insert(source);
  targetValues.insert(target);
  for (Operation &op : predict.getBody().front()) {
    // A decoder runs the model one position at a time, and its encoder once:
    // a write to a variable in the forward (a running statistic) has no
    // such form.
    if (auto effects = llvm::dyn_cast<MemoryEffectOpInterface>(op);
        effects && effects.hasEffect<MemoryEffects::Write>())
      return op.emitError() << "tg-derive-decoder: @" << predict.getSymName()
                            << " writes a variable here; a model whose "
                               "forward writes state has no incremental "
                               "decoder";
    auto reads = [&](const llvm::DenseSet<Value> &set) {
      return llvm::any_of(op.getOperands(), [&](Value v) { return set.contains(v); });
    };
    if (reads(targetValues))
      targetValues.insert(op.getResults().begin(), op.getResults().end());
    else if (reads(sourceValues))
      sourceValues.insert(op.getResults().begin(), op.getResults().end());
  }
  return success();
}

Operation *DecoderBuilder::cloneAt(Operation *op, ArrayRef<Value> operands,
                                   ArrayRef<int64_t> resultAxes) {
  IRMapping mapping;
  mapping.map(op->getOperands(), operands);
  Operation *clone = builder.clone(*op, mapping);
  for (auto [result, axis] : llvm::zip(clone->getResults(), resultAxes))
    result.setType(onePosition(result, axis));
  return clone;
}

tg::VariableOp DecoderBuilder::declareCache(StringRef name, Type type) {
  OpBuilder::InsertionGuard guard(builder);
  if (lastVariable)
    builder.setInsertionPointAfter(lastVariable);
  else
    builder.setInsertionPoint(predict);
  std::string unique = ("decode." + name).str();
  for (int n = 1; symbols.lookup(unique); ++n)
    unique = ("decode." + name + "." + Twine(n)).str();
  auto cache = builder.create<tg::VariableOp>(
      predict.getLoc(), unique, llvm::cast<RankedTensorType>(type),
      tg::InitKind::zeros, std::nullopt, /*trainable=*/false);
  cache.setCache(true);
  symbols.insert(cache);
  declaredCaches.push_back(cache);
  lastVariable = cache;
  return cache;
}

Value DecoderBuilder::loadCache(tg::VariableOp cache, Location loc) {
  return builder.create<tg::LoadOp>(loc, cache.getType(), cache.getSymName());
}

FailureOr<Value> DecoderBuilder::recompute(Value value, int64_t axis) {
  auto key = std::make_pair(value.getAsOpaquePointer(), axis);
  if (auto it = recomputed.find(key); it != recomputed.end())
    return it->second;
  Operation *def = value.getDefiningOp();
  if (!def)
    return predict.emitError()
           << "tg-derive-decoder: argument #"
           << llvm::cast<BlockArgument>(value).getArgNumber()
           << " is neither source_ids nor target_in_ids";
  // Unchanged: recompute its operands as they are, then it. One position:
  // its rule says of which operands, or builds it.
  SmallVector<int64_t> operandAxes(def->getNumOperands(), kNoAxis);
  std::function<Value(OpBuilder &, ValueRange)> fromOperands;
  if (axis != kNoAxis) {
    FailureOr<PositionRecipe> recipe =
        recomputePosition(builder, value, axis, position);
    if (failed(recipe))
      return failure();
    if (recipe->built)
      return recomputed[key] = recipe->built;
    operandAxes = std::move(recipe->operandAxes);
    fromOperands = std::move(recipe->fromOperands);
  }
  SmallVector<Value> operands;
  for (auto [input, inputAxis] : llvm::zip(def->getOperands(), operandAxes)) {
    FailureOr<Value> recomputedInput = recompute(input, inputAxis);
    if (failed(recomputedInput))
      return failure();
    operands.push_back(*recomputedInput);
  }
  if (fromOperands)
    return recomputed[key] = fromOperands(builder, operands);
  SmallVector<int64_t> resultAxes(def->getNumResults(), kNoAxis);
  resultAxes[llvm::cast<OpResult>(value).getResultNumber()] = axis;
  Operation *clone = cloneAt(def, operands, resultAxes);
  for (auto [original, copy] : llvm::zip(def->getResults(), clone->getResults()))
    recomputed[{original.getAsOpaquePointer(),
                original == value ? axis : kNoAxis}] = copy;
  return clone->getResult(llvm::cast<OpResult>(value).getResultNumber());
}

FailureOr<Value> DecoderBuilder::operand(Value value, int64_t axis,
                                         Operation *user) {
  if (targetValues.contains(value)) {
    if (timeAxis.lookup(value) != axis)
      return user->emitOpError()
             << "reads target positions along dimension "
             << timeAxis.lookup(value) << " where dimension " << axis
             << " was expected";
    return mapped.lookup(value);
  }
  if (!sourceValues.contains(value))
    return recompute(value, axis);
  if (axis != kNoAxis)
    return user->emitOpError() << "combines target positions with a value of "
                                  "the source along dimension "
                               << axis;
  tg::VariableOp cache = cacheOf.lookup(value);
  if (!cache) {
    auto type = llvm::cast<RankedTensorType>(value.getType());
    if (!type.getElementType().isF32())
      return user->emitOpError()
             << "reads a value of the source that is not f32 (" << type
             << "); the decoder's caches hold f32";
    if (type.getRank() == 0 || type.getShape()[0] != batch)
      return user->emitOpError()
             << "reads a value of the source without the batch as its first "
                "dimension ("
             << type << "); the decoder's caches must be rows per sentence";
    std::string name;
    if (value.getDefiningOp<tg::PaddingMaskOp>())
      name = "source_padding_mask";
    else {
      auto attention = llvm::dyn_cast<tg::AttentionOp>(user);
      std::string role = !attention                        ? "encoder_output"
                         : value == attention.getKeyIn()   ? "keys"
                         : value == attention.getValue()   ? "values"
                                                           : "mask";
      std::string layer = layerOf(value);
      name = layer.empty() ? role : layer + "." + role;
    }
    cache = declareCache(name, type);
    cacheOf[value] = cache;
    encoderOutputs.push_back({value, cache});
  }
  return loadCache(cache, value.getLoc());
}

LogicalResult DecoderBuilder::rewriteSelfAttention(tg::AttentionOp op) {
  if (!op.getCausal() || op.getMask() || op.getBias() ||
      op.getDropoutRate().convertToFloat() != 0)
    return op.emitOpError() << "cannot run one target position at a time: "
                               "self-attention over the target must be "
                               "causal, unmasked, without a score bias and "
                               "without dropout";
  SmallVector<Value> qkv;
  for (Value v : {op.getQuery(), op.getKeyIn(), op.getValue()}) {
    FailureOr<Value> mappedValue = operand(v, 2, op);
    if (failed(mappedValue))
      return failure();
    qkv.push_back(*mappedValue);
  }
  // Each step appends its key and value at `position`; the query attends to
  // the cache up to there.
  std::string layer = layerOf(op.getKeyIn());
  std::string prefix = layer.empty() ? "self_attention" : layer;
  Location loc = op.getLoc();
  SmallVector<Value> caches;
  const Value inputs[] = {op.getKeyIn(), op.getValue()};
  const char *roles[] = {"keys", "values"};
  for (int i = 0; i < 2; ++i) {
    tg::VariableOp cache =
        declareCache(prefix + "." + roles[i], inputs[i].getType());
    Value row = qkv[1 + i];
    builder.create<tg::StoreSliceOp>(
        loc, row, FlatSymbolRefAttr::get(cache.getSymNameAttr()), position,
        builder.getI64IntegerAttr(2));
    caches.push_back(loadCache(cache, loc));
  }
  auto attention = builder.create<tg::AttentionOp>(
      loc, qkv[0], caches[0], caches[1], Value(), Value(), /*causal=*/true,
      op.getScale().convertToFloat(), 0.0f, op.getOpId(), position);
  for (auto [original, result] : llvm::zip(op.getResults(), attention.getResults())) {
    mapped[original] = result;
    timeAxis[original] = 2;
  }
  return success();
}

LogicalResult DecoderBuilder::rewrite(Operation *op) {
  Value first = *llvm::find_if(op->getOperands(), [&](Value v) {
    return targetValues.contains(v);
  });
  int64_t axis = timeAxis.lookup(first);
  if (auto attention = llvm::dyn_cast<tg::AttentionOp>(op);
      attention && targetValues.contains(attention.getKeyIn()))
    return rewriteSelfAttention(attention);
  FailureOr<OpAxes> axes =
      timeAxes(op, axis, [&](Value v) { return targetValues.contains(v); });
  if (failed(axes))
    return failure();
  SmallVector<Value> operands;
  for (auto [input, inputAxis] : llvm::zip(op->getOperands(), axes->operands)) {
    FailureOr<Value> value = operand(input, inputAxis, op);
    if (failed(value))
      return failure();
    operands.push_back(*value);
  }
  Operation *clone = cloneAt(op, operands, axes->results);
  if (axes->takePosition)
    axes->takePosition(clone, position);
  for (auto [original, result, resultAxis] :
       llvm::zip(op->getResults(), clone->getResults(), axes->results)) {
    if (resultAxis == kNoAxis || shapeOf(original)[resultAxis] != targetLength)
      return op->emitOpError()
             << "cannot run one target position at a time: its result "
             << original.getType() << " has no dimension of the target length "
             << targetLength << " where positions should be";
    mapped[original] = result;
    timeAxis[original] = resultAxis;
  }
  return success();
}

LogicalResult DecoderBuilder::buildEncode(StringRef encodeName) {
  IRMapping mapping;
  auto encode = llvm::cast<func::FuncOp>(predict->clone(mapping));
  encode.setSymName(encodeName);
  builder.setInsertionPointAfter(predict);
  builder.insert(encode);
  Block &body = encode.getBody().front();
  Operation *ret = body.getTerminator();
  OpBuilder b(ret);
  for (auto [value, cache] : encoderOutputs)
    b.create<tg::StoreOp>(value.getLoc(), mapping.lookup(value),
                          cache.getSymName());
  b.create<func::ReturnOp>(ret->getLoc());
  ret->erase();
  // What reads the target goes; what it alone needed, too.
  for (Operation &op : llvm::reverse(predict.getBody().front().without_terminator()))
    if (op.getNumResults() && targetValues.contains(op.getResult(0)))
      mapping.lookup(op.getResult(0)).getDefiningOp()->erase();
  IRRewriter rewriter(module.getContext());
  (void)runRegionDCE(rewriter, encode.getBody());
  llvm::BitVector unused(body.getNumArguments());
  for (BlockArgument arg : body.getArguments())
    if (arg.use_empty())
      unused.set(arg.getArgNumber());
  encode.eraseArguments(unused);
  encode.setType(b.getFunctionType(body.getArgumentTypes(), {}));
  return success();
}

LogicalResult DecoderBuilder::build(StringRef encodeName, StringRef stepName) {
  if (failed(classify()))
    return failure();
  // Caches are declared after the last variable.
  for (auto variable : module.getOps<tg::VariableOp>())
    lastVariable = variable;

  // @decode_step(ids [B, 1], position) -> logits [B, 1, V].
  MLIRContext *context = module.getContext();
  auto ret = llvm::cast<func::ReturnOp>(predict.getBody().front().getTerminator());
  if (ret.getNumOperands() != 1 || !targetValues.contains(ret.getOperand(0)))
    return predict.emitError() << "tg-derive-decoder: @" << predict.getSymName()
                               << " must return logits computed from the "
                                  "target";
  auto idsType = onePosition(target, 1);
  auto positionType = RankedTensorType::get({}, IntegerType::get(context, 32));
  builder.setInsertionPointAfter(predict);
  step = builder.create<func::FuncOp>(
      predict.getLoc(), stepName,
      builder.getFunctionType({idsType, positionType}, {}));
  step.setArgAttr(0, "tg.name", builder.getStringAttr("target_in_ids"));
  step.setArgAttr(1, "tg.name", builder.getStringAttr("position"));
  Block *entry = step.addEntryBlock();
  stepIds = entry->getArgument(0);
  position = entry->getArgument(1);
  mapped[target] = stepIds;
  timeAxis[target] = 1;

  builder.setInsertionPointToEnd(entry);
  for (Operation &op : predict.getBody().front().without_terminator())
    if (op.getNumResults() && targetValues.contains(op.getResult(0)) &&
        failed(rewrite(&op)))
      return failure();
  Value logits = mapped.lookup(ret.getOperand(0));
  if (timeAxis.lookup(ret.getOperand(0)) != 1)
    return ret.emitOpError() << "tg-derive-decoder: the logits must be "
                                "[batch, positions, vocabulary]";
  builder.create<func::ReturnOp>(ret.getLoc(), logits);
  step.setType(builder.getFunctionType(entry->getArgumentTypes(),
                                       {logits.getType()}));
  return buildEncode(encodeName);
}

void DecoderBuilder::rollBack() {
  if (step)
    step.erase();
  for (tg::VariableOp cache : declaredCaches)
    cache.erase();
}

struct TgDeriveDecoderPass : impl::TgDeriveDecoderBase<TgDeriveDecoderPass> {
  using TgDeriveDecoderBase::TgDeriveDecoderBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto predict = module.lookupSymbol<func::FuncOp>(predictName);
    if (!predict) {
      module.emitError() << "tg-derive-decoder: no function @" << predictName;
      return signalPassFailure();
    }
    if (predict.isExternal()) {
      predict.emitError() << "tg-derive-decoder: @" << predictName
                          << " is a declaration (it has no body)";
      return signalPassFailure();
    }
    for (StringRef name : {StringRef(encodeName), StringRef(stepName)})
      if (name.empty()) { // an empty symbol prints as IR that does not parse
        module.emitError() << "tg-derive-decoder: the functions it makes "
                              "need names (encode-function, step-function)";
        return signalPassFailure();
      } else if (module.lookupSymbol(name)) {
        module.emitError() << "tg-derive-decoder: the module already has a @"
                           << name;
        return signalPassFailure();
      }
    DecoderBuilder decoder(module, predict);
    if (required) {
      if (failed(decoder.build(encodeName, stepName)))
        signalPassFailure();
      return;
    }
    // Optional: why it cannot be split becomes a warning, and the module
    // is left as it was (decoding then recomputes whole prefixes).
    // The warning is put where the refusing op is: the model's line.
    std::string why;
    Location where = predict.getLoc();
    LogicalResult built = success();
    {
      ScopedDiagnosticHandler capture(&getContext(), [&](Diagnostic &d) {
        if (d.getSeverity() == DiagnosticSeverity::Error && why.empty()) {
          why = d.str();
          if (!llvm::isa<UnknownLoc>(d.getLocation()))
            where = d.getLocation();
        }
        return success();
      });
      built = decoder.build(encodeName, stepName);
    }
    if (failed(built)) {
      decoder.rollBack();
      emitWarning(where) << "no incremental decoder (decoding recomputes "
                            "every prefix with @"
                         << predictName << "): " << why;
    }
  }
};

} // namespace
} // namespace tgc
