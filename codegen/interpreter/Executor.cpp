//===- Executor.cpp - the op dispatch of the reference interpreter ------===//
//
// One case per op of ir/TgOps.td (but tg.yield, which its parent reads)
// plus func.return. Each case reads its operands, calls the op's kernel
// (Kernels.h) and binds the results; data the verifier cannot see (ids, targets, the Adam step) is checked here.
//
//===----------------------------------------------------------------------===//
#include "codegen/interpreter/Executor.h"
#include "codegen/interpreter/Kernels.h"
#include "ir/TgOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <type_traits>

using namespace mlir;

namespace tgc::interp {

std::optional<ElementType> elementTypeOf(Type type) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return std::nullopt;
  if (tensor.getElementType().isF32())
    return ElementType::F32;
  if (tensor.getElementType().isSignlessInteger(32))
    return ElementType::I32;
  return std::nullopt;
}

void roundToFloat(HostTensor &tensor) {
  if (tensor.type != ElementType::F32)
    return;
  for (double &x : tensor.data)
    x = static_cast<float>(x);
}

void Executor::bind(Value value, HostTensor tensor) {
  tensor.type = elementTypeOf(value.getType()).value_or(tensor.type);
  if (precision == Precision::F32)
    roundToFloat(tensor);
  values[value] = std::move(tensor);
}

static std::vector<int64_t> shapeOf(Value value) {
  auto shape = llvm::cast<RankedTensorType>(value.getType()).getShape();
  return std::vector<int64_t>(shape.begin(), shape.end());
}

static std::span<const int64_t> span(llvm::ArrayRef<int64_t> values) {
  return {values.data(), values.size()};
}

/// The dropout stream of a site with key tensor (seed, step).
static DropoutStream streamOf(const HostTensor &key, float rate,
                              uint64_t opId) {
  auto word = [&](int64_t i) {
    return static_cast<uint32_t>(static_cast<int32_t>(key[i]));
  };
  return DropoutStream{word(0), word(1), static_cast<uint32_t>(opId), rate};
}

/// Ids (or targets) must lie in [0, bound); `ignored` ones are exempt.
static LogicalResult checkIds(Operation *op, const HostTensor &ids,
                              int64_t bound, llvm::StringRef what,
                              std::optional<int64_t> ignored = std::nullopt) {
  for (int64_t i = 0; i < ids.numElements(); ++i) {
    int64_t id = static_cast<int64_t>(ids[i]);
    if ((id < 0 || id >= bound) && id != ignored)
      return op->emitOpError() << what << " " << id << " at flat index " << i
                               << " is outside [0, " << bound << ")";
  }
  return success();
}

/// Applies `fn` to each element of the operands (all of one shape).
template <typename Fn> static HostTensor map(const HostTensor &a, Fn fn) {
  HostTensor result(a.shape);
  for (int64_t i = 0; i < a.numElements(); ++i)
    result[i] = fn(a[i]);
  return result;
}
template <typename Fn>
static HostTensor map(const HostTensor &a, const HostTensor &b, Fn fn) {
  HostTensor result(a.shape);
  for (int64_t i = 0; i < a.numElements(); ++i)
    result[i] = fn(a[i], b[i]);
  return result;
}

static double f32Attr(llvm::APFloat value) { return value.convertToFloat(); }

LogicalResult Executor::execute(Operation *op) {
  auto unary = [&](Operation *o, auto fn) {
    bind(o->getResult(0), map(get(o->getOperand(0)), fn));
    return success();
  };
  auto binary = [&](Operation *o, auto fn) {
    bind(o->getResult(0),
         map(get(o->getOperand(0)), get(o->getOperand(1)), fn));
    return success();
  };
  auto reduction = [&](Operation *o, llvm::ArrayRef<int64_t> dims,
                       bool keepDims, Reduction kind) {
    bind(o->getResult(0),
         reduce(get(o->getOperand(0)), span(dims), keepDims, kind));
    return success();
  };
  // Shared by tg.attention and tg.attention_grad.
  auto attentionConfig = [&](auto o) {
    AttentionConfig config;
    if (o.getMask())
      config.mask = &get(o.getMask());
    config.causal = o.getCausal();
    if constexpr (std::is_same_v<decltype(o), tg::AttentionOp>)
      if (o.getPosition())
        config.causalOffset = static_cast<int64_t>(get(o.getPosition())[0]);
    config.scale = f32Attr(o.getScale());
    if (o.getRngKey())
      config.dropout = streamOf(
          get(o.getRngKey()), o.getDropoutRate().convertToFloat(), o.getOpId());
    return config;
  };

  // Shared by tg.adam_update and tg.multi_adam_update.
  auto adam = [&](Operation *o, llvm::StringRef paramName,
                  llvm::StringRef moment1, llvm::StringRef moment2,
                  Value grad, Value lr, Value stepValue, llvm::APFloat beta1,
                  llvm::APFloat beta2, llvm::APFloat epsilon) -> LogicalResult {
    int64_t step = static_cast<int64_t>(get(stepValue)[0]);
    if (step < 1)
      return o->emitOpError()
             << "step must be >= 1 (Adam's bias correction divides by "
                "1 - beta^step) but is "
             << step;
    HostTensor &param = variable(paramName);
    HostTensor &m = variable(moment1);
    HostTensor &v = variable(moment2);
    adamUpdate(param, m, v, get(grad), get(lr)[0], step, f32Attr(beta1),
               f32Attr(beta2), f32Attr(epsilon));
    if (precision == Precision::F32)
      for (HostTensor *t : {&param, &m, &v})
        roundToFloat(*t);
    return success();
  };

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      // State.
      .Case([&](tg::LoadOp o) {
        bind(o.getResult(), variable(o.getVariable()));
        return success();
      })
      .Case([&](tg::StoreOp o) {
        variable(o.getVariable()) = get(o.getValue());
        return success();
      })
      .Case([&](tg::StoreSliceOp o) -> LogicalResult {
        HostTensor &target = variable(o.getVariable());
        const HostTensor &value = get(o.getValue());
        int64_t axis = o.getAxis();
        int64_t index = static_cast<int64_t>(get(o.getIndex())[0]);
        int64_t length = value.shape[axis], extent = target.shape[axis];
        if (index < 0 || index + length > extent)
          return o.emitOpError()
                 << "index " << index << " puts a slice of " << length
                 << " outside the " << extent << " positions of @"
                 << o.getVariable();
        int64_t outer = 1, inner = 1;
        for (int64_t d = 0; d < axis; ++d)
          outer *= value.shape[d];
        for (int64_t d = axis + 1; d < static_cast<int64_t>(value.shape.size()); ++d)
          inner *= value.shape[d];
        for (int64_t o2 = 0; o2 < outer; ++o2)
          for (int64_t i = 0; i < length * inner; ++i)
            target[(o2 * extent + index) * inner + i] =
                value[o2 * length * inner + i];
        return success();
      })
      .Case([&](tg::ConstantOp o) -> LogicalResult {
        auto dense = llvm::dyn_cast<DenseElementsAttr>(o.getValue());
        if (!dense)
          return o.emitOpError()
                 << "holds a non-dense constant, which the reference "
                    "interpreter does not read";
        HostTensor t(shapeOf(o.getResult()));
        int64_t i = 0;
        if (dense.getElementType().isF32())
          for (const llvm::APFloat &x : dense.getValues<llvm::APFloat>())
            t[i++] = x.convertToFloat();
        else
          for (const llvm::APInt &x : dense.getValues<llvm::APInt>())
            t[i++] = static_cast<double>(x.getSExtValue());
        bind(o.getResult(), std::move(t));
        return success();
      })
      // Embeddings and matmul.
      .Case([&](tg::EmbeddingOp o) -> LogicalResult {
        const HostTensor &table = get(o.getTable()), &ids = get(o.getIds());
        if (failed(checkIds(o, ids, table.shape[0], "id")))
          return failure();
        bind(o.getResult(), embedding(table, ids));
        return success();
      })
      .Case([&](tg::EmbeddingGradOp o) -> LogicalResult {
        int64_t vocab = shapeOf(o.getResult())[0];
        const HostTensor &ids = get(o.getIds());
        if (failed(checkIds(o, ids, vocab, "id")))
          return failure();
        bind(o.getResult(), embeddingGrad(get(o.getGrad()), ids, vocab));
        return success();
      })
      .Case([&](tg::MatmulOp o) {
        bind(o.getResult(), matmul(get(o.getLhs()), get(o.getRhs()),
                                   o.getTransposeLhs(), o.getTransposeRhs()));
        return success();
      })
      .Case([&](tg::LinearOp o) {
        HostTensor t = matmul(get(o.getInput()), get(o.getWeight()),
                              /*transposeLhs=*/false, /*transposeRhs=*/false);
        const HostTensor &bias = get(o.getBias());
        int64_t n = bias.numElements();
        for (int64_t i = 0; i < t.numElements(); ++i) {
          t[i] += bias[i % n];
          if (o.getRelu() && t[i] < 0.0)
            t[i] = 0.0;
        }
        bind(o.getResult(), std::move(t));
        return success();
      })
      // Elementwise.
      .Case([&](tg::AddOp o) { return binary(o, std::plus<double>()); })
      .Case([&](tg::SubOp o) { return binary(o, std::minus<double>()); })
      .Case([&](tg::MulOp o) { return binary(o, std::multiplies<double>()); })
      .Case([&](tg::DivOp o) { return binary(o, std::divides<double>()); })
      .Case([&](tg::NegOp o) { return unary(o, std::negate<double>()); })
      .Case([&](tg::ExpOp o) {
        return unary(o, [](double x) { return std::exp(x); });
      })
      .Case([&](tg::LogOp o) {
        return unary(o, [](double x) { return std::log(x); });
      })
      .Case([&](tg::SqrtOp o) {
        return unary(o, [](double x) { return std::sqrt(x); });
      })
      .Case([&](tg::RsqrtOp o) {
        return unary(o, [](double x) { return 1.0 / std::sqrt(x); });
      })
      .Case([&](tg::ReluOp o) {
        return unary(o, [](double x) { return x > 0.0 ? x : 0.0; });
      })
      .Case([&](tg::ScaleOp o) {
        double factor = f32Attr(o.getFactor());
        return unary(o, [factor](double x) { return factor * x; });
      })
      .Case([&](tg::ReluGradOp o) {
        return binary(
            o, [](double grad, double x) { return x > 0.0 ? grad : 0.0; });
      })
      // Shapes and reductions.
      .Case([&](tg::BroadcastOp o) {
        bind(o.getResult(), broadcast(get(o.getInput()), span(o.getDims()),
                                      shapeOf(o.getResult())));
        return success();
      })
      .Case([&](tg::ReshapeOp o) {
        HostTensor t = get(o.getInput());
        t.shape = shapeOf(o.getResult());
        bind(o.getResult(), std::move(t));
        return success();
      })
      .Case([&](tg::TransposeOp o) {
        bind(o.getResult(),
             transpose(get(o.getInput()), span(o.getPermutation())));
        return success();
      })
      .Case([&](tg::ReduceSumOp o) {
        return reduction(o, o.getDims(), o.getKeepDims(), Reduction::Sum);
      })
      .Case([&](tg::ReduceMaxOp o) {
        return reduction(o, o.getDims(), o.getKeepDims(), Reduction::Max);
      })
      .Case([&](tg::ReduceMeanOp o) {
        return reduction(o, o.getDims(), o.getKeepDims(), Reduction::Mean);
      })
      // Softmax, LayerNorm, dropout.
      .Case([&](tg::SoftmaxOp o) {
        bind(o.getResult(), softmax(get(o.getInput()), o.getAxis()));
        return success();
      })
      .Case([&](tg::SoftmaxGradOp o) {
        bind(o.getResult(),
             softmaxGrad(get(o.getOutput()), get(o.getGrad()), o.getAxis()));
        return success();
      })
      .Case([&](tg::LayerNormOp o) {
        bind(o.getResult(),
             layerNorm(get(o.getInput()), get(o.getGamma()), get(o.getBeta()),
                       f32Attr(o.getEpsilon())));
        return success();
      })
      .Case([&](tg::LayerNormGradOp o) {
        LayerNormGrads g =
            layerNormGrad(get(o.getGrad()), get(o.getInput()),
                          get(o.getGamma()), f32Attr(o.getEpsilon()));
        bind(o.getInputGrad(), std::move(g.input));
        bind(o.getGammaGrad(), std::move(g.gamma));
        bind(o.getBetaGrad(), std::move(g.beta));
        return success();
      })
      .Case([&](tg::DropoutOp o) {
        DropoutStream stream = streamOf(
            get(o.getKey()), o.getRate().convertToFloat(), o.getOpId());
        bind(o.getResult(), dropout(get(o.getInput()), stream));
        return success();
      })
      .Case([&](tg::DropoutGradOp o) {
        DropoutStream stream = streamOf(
            get(o.getKey()), o.getRate().convertToFloat(), o.getOpId());
        bind(o.getResult(), dropout(get(o.getGrad()), stream));
        return success();
      })
      // Masks and positions.
      .Case([&](tg::CausalMaskOp o) {
        bind(o.getResult(), causalMask(shapeOf(o.getResult())[0]));
        return success();
      })
      .Case([&](tg::PaddingMaskOp o) {
        bind(o.getResult(),
             paddingMask(get(o.getIds()), o.getPadIdAttr().getInt()));
        return success();
      })
      .Case([&](tg::PositionalEncodingOp o) {
        auto shape = shapeOf(o.getResult());
        int64_t first =
            o.getOffset() ? static_cast<int64_t>(get(o.getOffset())[0]) : 0;
        bind(o.getResult(), positionalEncoding(shape[0], shape[1], first));
        return success();
      })
      // Loss.
      .Case([&](tg::CrossEntropyOp o) -> LogicalResult {
        const HostTensor &logits = get(o.getLogits()),
                         &targets = get(o.getTargets());
        int64_t ignore = o.getIgnoreIndexAttr().getInt();
        if (failed(checkIds(o, targets, logits.shape.back(), "target", ignore)))
          return failure();
        CrossEntropyResult r =
            crossEntropy(logits, targets, f32Attr(o.getSmoothing()), ignore);
        bind(o.getLoss(), std::move(r.loss));
        bind(o.getTokens(), std::move(r.tokens));
        return success();
      })
      .Case([&](tg::CrossEntropyGradOp o) -> LogicalResult {
        const HostTensor &logits = get(o.getLogits()),
                         &targets = get(o.getTargets());
        int64_t ignore = o.getIgnoreIndexAttr().getInt();
        if (failed(checkIds(o, targets, logits.shape.back(), "target", ignore)))
          return failure();
        bind(o.getResult(),
             crossEntropyGrad(get(o.getLossGrad())[0], logits, targets,
                              f32Attr(o.getSmoothing()), ignore));
        return success();
      })
      // Fused ops.
      .Case([&](tg::AttentionOp o) {
        AttentionConfig config = attentionConfig(o);
        AttentionResult r = attention(get(o.getQuery()), get(o.getKeyIn()),
                                      get(o.getValue()), config);
        bind(o.getOutput(), std::move(r.output));
        bind(o.getLse(), std::move(r.lse));
        return success();
      })
      .Case([&](tg::AttentionGradOp o) {
        AttentionConfig config = attentionConfig(o);
        AttentionGrads g = attentionGrad(get(o.getGrad()), get(o.getQuery()),
                                         get(o.getKeyIn()), get(o.getValue()),
                                         get(o.getLse()), config);
        bind(o.getQueryGrad(), std::move(g.query));
        bind(o.getKeyGrad(), std::move(g.key));
        bind(o.getValueGrad(), std::move(g.value));
        return success();
      })
      .Case([&](tg::ResidualLayerNormOp o) {
        DropoutStream stream = streamOf(
            get(o.getKey()), o.getRate().convertToFloat(), o.getOpId());
        ResidualLayerNormResult r = residualLayerNorm(
            get(o.getResidual()), get(o.getSublayer()), get(o.getGamma()),
            get(o.getBeta()), stream, f32Attr(o.getEpsilon()));
        bind(o.getResult(), std::move(r.result));
        bind(o.getMean(), std::move(r.mean));
        bind(o.getRstd(), std::move(r.rstd));
        return success();
      })
      .Case([&](tg::ResidualLayerNormGradOp o) {
        DropoutStream stream = streamOf(
            get(o.getKey()), o.getRate().convertToFloat(), o.getOpId());
        ResidualLayerNormGrads g = residualLayerNormGrad(
            get(o.getGrad()), get(o.getResidual()), get(o.getSublayer()),
            get(o.getGamma()), get(o.getMean()), get(o.getRstd()), stream);
        bind(o.getResidualGrad(), std::move(g.residual));
        bind(o.getSublayerGrad(), std::move(g.sublayer));
        bind(o.getGammaGrad(), std::move(g.gamma));
        bind(o.getBetaGrad(), std::move(g.beta));
        return success();
      })
      .Case([&](tg::FusedElementwiseOp o) -> LogicalResult {
        // The body means its ops one after another; run them so.
        Block &body = o.getBody().front();
        for (auto [input, arg] : llvm::zip(o.getInputs(), body.getArguments()))
          bind(arg, get(input));
        for (Operation &inner : body.without_terminator())
          if (failed(execute(&inner)))
            return failure();
        for (auto [result, value] :
             llvm::zip(o.getResults(), o.getYield().getValues()))
          bind(result, get(value));
        return success();
      })
      // Optimizer.
      .Case([&](tg::AdamUpdateOp o) {
        return adam(o, o.getParam(), o.getMoment1(), o.getMoment2(),
                    o.getGrad(), o.getLr(), o.getStep(), o.getBeta1(),
                    o.getBeta2(), o.getEpsilon());
      })
      .Case([&](tg::MultiAdamUpdateOp o) -> LogicalResult {
        auto name = [](Attribute ref) {
          return llvm::cast<FlatSymbolRefAttr>(ref).getValue();
        };
        for (auto [param, m, v, grad] :
             llvm::zip(o.getParams(), o.getMoments1(), o.getMoments2(),
                       o.getGrads()))
          if (failed(adam(o, name(param), name(m), name(v), grad, o.getLr(),
                          o.getStep(), o.getBeta1(), o.getBeta2(),
                          o.getEpsilon())))
            return failure();
        return success();
      })
      .Case([&](func::ReturnOp o) {
        for (Value v : o.getOperands())
          results.push_back(get(v));
        return success();
      })
      .Default([](Operation *o) {
        return o->emitOpError()
               << "is not supported by the reference interpreter";
      });
}

} // namespace tgc::interp
