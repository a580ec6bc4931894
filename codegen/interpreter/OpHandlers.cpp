//===- OpHandlers.cpp - one handler per op for the interpreter -----------===//
//
// Each handler reads its operands from the Executor, checks the data the
// verifier cannot see, calls the op's reference kernel and binds the
// results. Elementwise ops come from codegen/ElementwiseOps.def with their
// formulas in runtime/kernels/Elementwise.h. tg.yield has no handler: its
// parent reads it.
//
//===----------------------------------------------------------------------===//
#include "codegen/interpreter/Executor.h"
#include "ir/TgOps.h"
#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/KernelTypes.h"
#include "runtime/kernels/reference/Kernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <type_traits>

using namespace mlir;

namespace tgc::interp {
namespace ref = tgc::reference;

namespace {

std::vector<int64_t> shapeOf(Value value) {
  auto shape = llvm::cast<RankedTensorType>(value.getType()).getShape();
  return std::vector<int64_t>(shape.begin(), shape.end());
}

std::span<const int64_t> span(llvm::ArrayRef<int64_t> values) {
  return {values.data(), values.size()};
}

double f32Attr(const llvm::APFloat &value) { return value.convertToFloat(); }

int64_t scalarOf(const HostTensor &tensor) {
  return static_cast<int64_t>(tensor[0]);
}

/// The dropout site of an op with key tensor (seed, step).
ref::Dropout dropoutOf(const HostTensor &key, const llvm::APFloat &rate,
                       uint64_t opId) {
  auto word = [&](int64_t i) {
    return static_cast<uint32_t>(static_cast<int32_t>(key[i]));
  };
  return ref::Dropout{word(0), word(1), static_cast<uint32_t>(opId),
                      rate.convertToFloat()};
}

/// Ids (or targets) must lie in [0, bound); `ignored` ones are exempt.
LogicalResult checkIds(Operation *op, const HostTensor &ids, int64_t bound,
                       llvm::StringRef what,
                       std::optional<int64_t> ignored = std::nullopt) {
  for (int64_t i = 0; i < ids.numElements(); ++i) {
    int64_t id = static_cast<int64_t>(ids[i]);
    if ((id < 0 || id >= bound) && id != ignored)
      return op->emitOpError() << what << " " << id << " at flat index " << i
                               << " is outside [0, " << bound << ")";
  }
  return success();
}

/// Applies `fn` elementwise over the operands (all of one shape).
template <typename Fn> HostTensor map(const HostTensor &a, Fn fn) {
  HostTensor result(a.shape);
  for (int64_t i = 0; i < a.numElements(); ++i)
    result[i] = fn(a[i]);
  return result;
}
template <typename Fn>
HostTensor map(const HostTensor &a, const HostTensor &b, Fn fn) {
  HostTensor result(a.shape);
  for (int64_t i = 0; i < a.numElements(); ++i)
    result[i] = fn(a[i], b[i]);
  return result;
}

/// An elementwise op of ElementwiseOps.def, of `arity` operands.
template <int arity, typename Fn>
LogicalResult runElementwise(Executor &x, Operation *op, Fn formula) {
  if constexpr (arity == 1)
    x.bind(op->getResult(0), map(x.get(op->getOperand(0)), formula));
  else
    x.bind(op->getResult(0),
           map(x.get(op->getOperand(0)), x.get(op->getOperand(1)), formula));
  return success();
}

//===--- State ------------------------------------------------------------===//

LogicalResult load(Executor &x, tg::LoadOp o) {
  x.bind(o.getResult(), x.variable(o.getVariable()));
  return success();
}

LogicalResult store(Executor &x, tg::StoreOp o) {
  x.variable(o.getVariable()) = x.get(o.getValue());
  return success();
}

LogicalResult storeSlice(Executor &x, tg::StoreSliceOp o) {
  HostTensor &target = x.variable(o.getVariable());
  const HostTensor &value = x.get(o.getValue());
  int64_t axis = o.getAxis(), index = scalarOf(x.get(o.getIndex()));
  int64_t length = value.shape[axis], extent = target.shape[axis];
  if (index < 0 || index + length > extent)
    return o.emitOpError() << "index " << index << " puts a slice of " << length
                           << " outside the " << extent << " positions of @"
                           << o.getVariable();
  ref::storeSlice(target, value, axis, index);
  return success();
}

LogicalResult constant(Executor &x, tg::ConstantOp o) {
  auto dense = llvm::dyn_cast<DenseElementsAttr>(o.getValue());
  if (!dense)
    return o.emitOpError() << "holds a non-dense constant, which the "
                              "reference interpreter does not read";
  HostTensor t(shapeOf(o.getResult()));
  int64_t i = 0;
  if (dense.getElementType().isF32())
    for (const llvm::APFloat &v : dense.getValues<llvm::APFloat>())
      t[i++] = v.convertToFloat();
  else
    for (const llvm::APInt &v : dense.getValues<llvm::APInt>())
      t[i++] = static_cast<double>(v.getSExtValue());
  x.bind(o.getResult(), std::move(t));
  return success();
}

//===--- Embeddings and GEMMs ---------------------------------------------===//

LogicalResult embedding(Executor &x, tg::EmbeddingOp o) {
  const HostTensor &table = x.get(o.getTable()), &ids = x.get(o.getIds());
  if (failed(checkIds(o, ids, table.shape[0], "id")))
    return failure();
  x.bind(o.getResult(), ref::embedding(table, ids));
  return success();
}

LogicalResult embeddingGrad(Executor &x, tg::EmbeddingGradOp o) {
  int64_t vocab = shapeOf(o.getResult())[0];
  const HostTensor &ids = x.get(o.getIds());
  if (failed(checkIds(o, ids, vocab, "id")))
    return failure();
  x.bind(o.getResult(), ref::embeddingGrad(x.get(o.getGrad()), ids, vocab));
  return success();
}

LogicalResult matmul(Executor &x, tg::MatmulOp o) {
  x.bind(o.getResult(), ref::matmul(x.get(o.getLhs()), x.get(o.getRhs()),
                                    o.getTransposeLhs(), o.getTransposeRhs()));
  return success();
}

LogicalResult linear(Executor &x, tg::LinearOp o) {
  x.bind(o.getResult(), ref::linear(x.get(o.getInput()), x.get(o.getWeight()),
                                    x.get(o.getBias()), o.getRelu()));
  return success();
}

/// Binding to a bf16 value rounds (Executor::bind).
LogicalResult toBf16(Executor &x, tg::ToBf16Op o) {
  x.bind(o.getResult(), x.get(o.getInput()));
  return success();
}

//===--- Elementwise with an attribute or a random factor -----------------===//

LogicalResult scale(Executor &x, tg::ScaleOp o) {
  double factor = f32Attr(o.getFactor());
  x.bind(o.getResult(), map(x.get(o.getInput()), [factor](double v) {
           return elementwise::scale(v, factor);
         }));
  return success();
}

HostTensor dropped(const HostTensor &input, const ref::Dropout &dropout) {
  return ref::dropout(input, dropout);
}

LogicalResult dropout(Executor &x, tg::DropoutOp o) {
  x.bind(o.getResult(),
         dropped(x.get(o.getInput()),
                 dropoutOf(x.get(o.getKey()), o.getRate(), o.getOpId())));
  return success();
}

LogicalResult dropoutGrad(Executor &x, tg::DropoutGradOp o) {
  x.bind(o.getResult(),
         dropped(x.get(o.getGrad()),
                 dropoutOf(x.get(o.getKey()), o.getRate(), o.getOpId())));
  return success();
}

//===--- Shapes and reductions --------------------------------------------===//

LogicalResult broadcast(Executor &x, tg::BroadcastOp o) {
  x.bind(o.getResult(), ref::broadcast(x.get(o.getInput()), span(o.getDims()),
                                       shapeOf(o.getResult())));
  return success();
}

LogicalResult reshape(Executor &x, tg::ReshapeOp o) {
  HostTensor t = x.get(o.getInput());
  t.shape = shapeOf(o.getResult());
  x.bind(o.getResult(), std::move(t));
  return success();
}

/// The interpreter is one process: the sum over the processes is the
/// operand itself.
LogicalResult allReduce(Executor &x, tg::AllReduceOp o) {
  for (auto [input, sum] : llvm::zip(o.getInputs(), o.getSums()))
    x.bind(sum, x.get(input));
  return success();
}

LogicalResult transpose(Executor &x, tg::TransposeOp o) {
  x.bind(o.getResult(),
         ref::transpose(x.get(o.getInput()), span(o.getPermutation())));
  return success();
}

template <typename ReduceOp, ref::Reduction kind>
LogicalResult reduce(Executor &x, ReduceOp o) {
  x.bind(o.getResult(), ref::reduce(x.get(o.getInput()), span(o.getDims()),
                                    o.getKeepDims(), kind));
  return success();
}

//===--- Softmax and LayerNorm --------------------------------------------===//

LogicalResult softmax(Executor &x, tg::SoftmaxOp o) {
  x.bind(o.getResult(), ref::softmax(x.get(o.getInput()), o.getAxis()));
  return success();
}

LogicalResult softmaxGrad(Executor &x, tg::SoftmaxGradOp o) {
  x.bind(o.getResult(), ref::softmaxGrad(x.get(o.getOutput()),
                                         x.get(o.getGrad()), o.getAxis()));
  return success();
}

LogicalResult layerNorm(Executor &x, tg::LayerNormOp o) {
  x.bind(o.getResult(),
         ref::layerNorm(x.get(o.getInput()), x.get(o.getGamma()),
                        x.get(o.getBeta()), f32Attr(o.getEpsilon())));
  return success();
}

LogicalResult layerNormGrad(Executor &x, tg::LayerNormGradOp o) {
  ref::LayerNormGrads g =
      ref::layerNormGrad(x.get(o.getGrad()), x.get(o.getInput()),
                         x.get(o.getGamma()), f32Attr(o.getEpsilon()));
  x.bind(o.getInputGrad(), std::move(g.input));
  x.bind(o.getGammaGrad(), std::move(g.gamma));
  x.bind(o.getBetaGrad(), std::move(g.beta));
  return success();
}

LogicalResult residualLayerNorm(Executor &x, tg::ResidualLayerNormOp o) {
  ref::ResidualLayerNormResult r = ref::residualLayerNorm(
      x.get(o.getResidual()), x.get(o.getSublayer()), x.get(o.getGamma()),
      x.get(o.getBeta()),
      dropoutOf(x.get(o.getKey()), o.getRate(), o.getOpId()),
      f32Attr(o.getEpsilon()));
  x.bind(o.getResult(), std::move(r.result));
  x.bind(o.getMean(), std::move(r.mean));
  x.bind(o.getRstd(), std::move(r.rstd));
  if (Value rounded = o.getRounded()) // binding to bf16 rounds
    x.bind(rounded, x.get(o.getResult()));
  return success();
}

LogicalResult residualLayerNormGrad(Executor &x,
                                    tg::ResidualLayerNormGradOp o) {
  ref::ResidualLayerNormGrads g = ref::residualLayerNormGrad(
      x.get(o.getGrad()), x.get(o.getResult()), x.get(o.getGamma()),
      x.get(o.getBeta()), x.get(o.getRstd()),
      dropoutOf(x.get(o.getKey()), o.getRate(), o.getOpId()));
  x.bind(o.getResidualGrad(), std::move(g.residual));
  x.bind(o.getSublayerGrad(), std::move(g.sublayer));
  x.bind(o.getGammaGrad(), std::move(g.gamma));
  x.bind(o.getBetaGrad(), std::move(g.beta));
  if (Value rounded = o.getSublayerGradRounded()) // binding to bf16 rounds
    x.bind(rounded, x.get(o.getSublayerGrad()));
  return success();
}

//===--- Masks and positions ----------------------------------------------===//

LogicalResult causalMask(Executor &x, tg::CausalMaskOp o) {
  x.bind(o.getResult(), ref::causalMask(shapeOf(o.getResult())[0]));
  return success();
}

LogicalResult paddingMask(Executor &x, tg::PaddingMaskOp o) {
  x.bind(o.getResult(),
         ref::paddingMask(x.get(o.getIds()), o.getPadIdAttr().getInt()));
  return success();
}

LogicalResult positionalEncoding(Executor &x, tg::PositionalEncodingOp o) {
  auto shape = shapeOf(o.getResult());
  int64_t first = o.getOffset() ? scalarOf(x.get(o.getOffset())) : 0;
  x.bind(o.getResult(), ref::positionalEncoding(shape[0], shape[1], first));
  return success();
}

//===--- Attention --------------------------------------------------------===//

/// Shared by tg.attention and tg.attention_grad.
template <typename AttentionLike>
ref::AttentionConfig attentionConfig(Executor &x, AttentionLike o) {
  ref::AttentionConfig config;
  if (o.getMask())
    config.mask = &x.get(o.getMask());
  config.causal = o.getCausal();
  if constexpr (std::is_same_v<AttentionLike, tg::AttentionOp>)
    if (o.getPosition())
      config.causalOffset = scalarOf(x.get(o.getPosition()));
  config.scale = f32Attr(o.getScale());
  config.bf16Products = o.getBf16Products();
  if (o.getRngKey())
    config.dropout =
        dropoutOf(x.get(o.getRngKey()), o.getDropoutRate(), o.getOpId());
  return config;
}

/// A sequence-major operand or result ([B, S, H, D], lse [B, S, H]) in the
/// reference kernels' head-major layout, or back (the swap of dimensions 1
/// and 2 is its own inverse); head-major values pass as they are.
HostTensor swapHeads(const HostTensor &t, bool sequenceMajor) {
  if (!sequenceMajor)
    return t;
  static constexpr int64_t kRank4[] = {0, 2, 1, 3}, kRank3[] = {0, 2, 1};
  return t.shape.size() == 4 ? ref::transpose(t, kRank4)
                             : ref::transpose(t, kRank3);
}

LogicalResult attention(Executor &x, tg::AttentionOp o) {
  bool swap = o.getSequenceMajor();
  ref::AttentionResult r = ref::attention(
      swapHeads(x.get(o.getQuery()), swap), swapHeads(x.get(o.getKeyIn()), swap),
      swapHeads(x.get(o.getValue()), swap), attentionConfig(x, o));
  x.bind(o.getOutput(), swapHeads(r.output, swap));
  x.bind(o.getLse(), swapHeads(r.lse, swap));
  return success();
}

LogicalResult attentionGrad(Executor &x, tg::AttentionGradOp o) {
  bool swap = o.getSequenceMajor();
  ref::AttentionGrads g = ref::attentionGrad(
      swapHeads(x.get(o.getGrad()), swap), swapHeads(x.get(o.getQuery()), swap),
      swapHeads(x.get(o.getKeyIn()), swap), swapHeads(x.get(o.getValue()), swap),
      swapHeads(x.get(o.getLse()), swap), attentionConfig(x, o));
  x.bind(o.getQueryGrad(), swapHeads(g.query, swap));
  x.bind(o.getKeyGrad(), swapHeads(g.key, swap));
  x.bind(o.getValueGrad(), swapHeads(g.value, swap));
  return success();
}

//===--- Loss -------------------------------------------------------------===//

template <typename LossLike>
LogicalResult checkTargets(Executor &x, LossLike o) {
  return checkIds(o, x.get(o.getTargets()), x.get(o.getLogits()).shape.back(),
                  "target", o.getIgnoreIndexAttr().getInt());
}

LogicalResult crossEntropy(Executor &x, tg::CrossEntropyOp o) {
  if (failed(checkTargets(x, o)))
    return failure();
  ref::CrossEntropyResult r = ref::crossEntropy(
      x.get(o.getLogits()), x.get(o.getTargets()), f32Attr(o.getSmoothing()),
      o.getIgnoreIndexAttr().getInt());
  x.bind(o.getLoss(), std::move(r.loss));
  x.bind(o.getTokens(), std::move(r.tokens));
  return success();
}

LogicalResult crossEntropyGrad(Executor &x, tg::CrossEntropyGradOp o) {
  if (failed(checkTargets(x, o)))
    return failure();
  x.bind(o.getResult(),
         ref::crossEntropyGrad(x.get(o.getLossGrad())[0], x.get(o.getLogits()),
                               x.get(o.getTargets()), f32Attr(o.getSmoothing()),
                               o.getIgnoreIndexAttr().getInt()));
  return success();
}

/// The ops tg-fuse-output-loss replaced, on the whole batch at once: the
/// oracle of the chunked kernels. The workspace is left zero.
LogicalResult outputLoss(Executor &x, tg::OutputLossOp o) {
  const HostTensor &hidden = x.get(o.getHidden()), &weight = x.get(o.getWeight());
  const HostTensor &targets = x.get(o.getTargets());
  int64_t ignore = o.getIgnoreIndexAttr().getInt();
  if (failed(checkIds(o, targets, weight.shape[0], "target", ignore)))
    return failure();
  double smoothing = f32Attr(o.getSmoothing());
  HostTensor logits = ref::matmul(hidden, weight, false, true);
  ref::CrossEntropyResult r =
      ref::crossEntropy(logits, targets, smoothing, ignore);
  HostTensor grad = ref::crossEntropyGrad(x.get(o.getLossGrad())[0], logits,
                                          targets, smoothing, ignore);
  // bf16 operands: the kernels round the logit gradient (computed in f32)
  // to bf16 before the two gradient GEMMs.
  if (hidden.type == ElementType::BF16) {
    roundToFloat(grad);
    roundToBf16(grad);
  }
  HostTensor hiddenGrad = ref::matmul(grad, weight, false, false);
  int64_t rows = targets.numElements();
  HostTensor flatGrad = grad, flatHidden = hidden;
  flatGrad.shape = {rows, weight.shape[0]};
  flatHidden.shape = {rows, weight.shape[1]};
  x.bind(o.getLoss(), std::move(r.loss));
  x.bind(o.getTokens(), std::move(r.tokens));
  x.bind(o.getHiddenGrad(), std::move(hiddenGrad));
  x.bind(o.getWeightGrad(), ref::matmul(flatGrad, flatHidden, true, false));
  x.bind(o.getWorkspace(), HostTensor(shapeOf(o.getWorkspace())));
  return success();
}

//===--- Groups and the optimizer -----------------------------------------===//

LogicalResult fusedElementwise(Executor &x, tg::FusedElementwiseOp o) {
  // The body means its ops one after another; run them so.
  Block &body = o.getBody().front();
  for (auto [input, arg] : llvm::zip(o.getInputs(), body.getArguments()))
    x.bind(arg, x.get(input));
  for (Operation &inner : body.without_terminator())
    if (failed(x.execute(&inner)))
      return failure();
  for (auto [result, value] :
       llvm::zip(o.getResults(), o.getYield().getValues()))
    x.bind(result, x.get(value));
  return success();
}

/// One parameter's Adam step, shared by tg.adam_update and
/// tg.multi_adam_update.
template <typename AdamLike>
LogicalResult adamStep(Executor &x, AdamLike o, llvm::StringRef param,
                       llvm::StringRef moment1, llvm::StringRef moment2,
                       const HostTensor &grad) {
  int64_t step = scalarOf(x.get(o.getStep()));
  if (step < 1)
    return o.emitOpError() << "step must be >= 1 (Adam's bias correction "
                              "divides by 1 - beta^step) but is "
                           << step;
  HostTensor &p = x.variable(param), &m = x.variable(moment1),
             &v = x.variable(moment2);
  ref::adamUpdate(p, m, v, grad, x.get(o.getLr())[0], step,
                  f32Attr(o.getBeta1()), f32Attr(o.getBeta2()),
                  f32Attr(o.getEpsilon()));
  if (x.getPrecision() == Precision::F32)
    for (HostTensor *t : {&p, &m, &v})
      roundToFloat(*t);
  return success();
}

LogicalResult adamUpdate(Executor &x, tg::AdamUpdateOp o) {
  return adamStep(x, o, o.getParam(), o.getMoment1(), o.getMoment2(),
                  x.get(o.getGrad()));
}

/// The gradient tg.multi_adam_update's controls make of `o`'s gradients
/// (ir/TgOptimizerOps.td): weighted, accumulated, clipped; binds the norm.
/// Returns false when the phase only accumulates or the norm is not finite
/// (no update).
FailureOr<bool> optimizerGradient(Executor &x, tg::MultiAdamUpdateOp o,
                                  std::vector<HostTensor> &update) {
  double weight = x.get(o.getWeight())[0];
  int64_t phase = scalarOf(x.get(o.getPhase()));
  double clip = x.get(o.getClip())[0];
  if (phase < runtime::kUpdate || phase > runtime::kAccumulateUpdate)
    return o.emitOpError() << "phase must be 0 (update), 1 (start "
                              "accumulating), 2 (accumulate) or 3 (update "
                              "with the accumulation) but is "
                           << phase;
  std::vector<double> &acc = x.accumulator();
  int64_t total = 0;
  for (Value grad : o.getGrads())
    total += x.get(grad).numElements();
  if (phase == runtime::kAccumulateFirst)
    acc.assign(static_cast<size_t>(total), 0.0);
  else if (phase != runtime::kUpdate &&
           acc.size() != static_cast<size_t>(total))
    return o.emitOpError() << "phase " << phase
                           << " continues an accumulation that phase 1 did "
                              "not start";
  double squares = 0;
  int64_t flat = 0;
  for (Value grad : o.getGrads()) {
    HostTensor g = x.get(grad);
    for (int64_t i = 0; i < g.numElements(); ++i, ++flat) {
      g[i] *= weight;
      if (phase == runtime::kAccumulateFirst)
        acc[flat] = g[i];
      else if (phase != runtime::kUpdate)
        g[i] = acc[flat] += g[i];
      squares += g[i] * g[i];
    }
    update.push_back(std::move(g));
  }
  double norm = std::sqrt(squares);
  x.bind(o.getGradNorm(), HostTensor::scalar(norm));
  if (phase == runtime::kAccumulateFirst || phase == runtime::kAccumulate ||
      !std::isfinite(norm))
    return false;
  double factor = runtime::clipFactor(norm, clip);
  for (HostTensor &g : update)
    for (int64_t i = 0; i < g.numElements(); ++i)
      g[i] *= factor;
  return true;
}

LogicalResult multiAdamUpdate(Executor &x, tg::MultiAdamUpdateOp o) {
  auto name = [](Attribute ref) {
    return llvm::cast<FlatSymbolRefAttr>(ref).getValue();
  };
  std::vector<HostTensor> update;
  if (o.getGradNorm()) {
    FailureOr<bool> updates = optimizerGradient(x, o, update);
    if (failed(updates))
      return failure();
    if (!*updates)
      return success();
  }
  for (auto [index, entry] : llvm::enumerate(llvm::zip(
           o.getParams(), o.getMoments1(), o.getMoments2(), o.getGrads()))) {
    auto [param, m, v, grad] = entry;
    // The optimizer step's gradient, or the op's gradient as is.
    const HostTensor &g = update.empty() ? x.get(grad) : update[index];
    if (failed(adamStep(x, o, name(param), name(m), name(v), g)))
      return failure();
  }
  return success();
}

LogicalResult funcReturn(Executor &x, func::ReturnOp o) {
  for (Value v : o.getOperands())
    x.results.push_back(x.get(v));
  return success();
}

using Table = OpRuleTable<OpHandler>;

template <typename OpT>
void add(Table &table, LogicalResult (*handler)(Executor &, OpT)) {
  table.insert<OpT>(OpRule<LogicalResult, Executor &>::of(handler));
}

Table buildTable() {
  Table t;
  add(t, load);
  add(t, store);
  add(t, storeSlice);
  add(t, constant);
  add(t, embedding);
  add(t, embeddingGrad);
  add(t, matmul);
  add(t, linear);
  add(t, toBf16);
#define TGC_ELEMENTWISE(OpClass, formula, arity)                               \
  t.insert<tg::OpClass>([](Executor &x, Operation *op) {                       \
    return runElementwise<arity>(                                              \
        x, op, [](auto... v) { return elementwise::formula<double>(v...); });  \
  });
#include "codegen/ElementwiseOps.def"
  add(t, scale);
  add(t, dropout);
  add(t, dropoutGrad);
  add(t, broadcast);
  add(t, reshape);
  add(t, transpose);
  add(t, reduce<tg::ReduceSumOp, ref::Reduction::Sum>);
  add(t, reduce<tg::ReduceMaxOp, ref::Reduction::Max>);
  add(t, reduce<tg::ReduceMeanOp, ref::Reduction::Mean>);
  add(t, softmax);
  add(t, softmaxGrad);
  add(t, layerNorm);
  add(t, layerNormGrad);
  add(t, residualLayerNorm);
  add(t, residualLayerNormGrad);
  add(t, causalMask);
  add(t, paddingMask);
  add(t, positionalEncoding);
  add(t, attention);
  add(t, attentionGrad);
  add(t, crossEntropy);
  add(t, crossEntropyGrad);
  add(t, outputLoss);
  add(t, fusedElementwise);
  add(t, adamUpdate);
  add(t, multiAdamUpdate);
  add(t, allReduce);
  add(t, funcReturn);
  return t;
}

} // namespace

const OpRuleTable<OpHandler> &opHandlers() {
  static const Table table = buildTable();
  return table;
}

} // namespace tgc::interp
