//===- Adam.cpp - the interpreter's optimizer ops -------------------------===//
//
// tg.adam_update and tg.multi_adam_update update the variables in place
// (rounded to float under Precision::F32); the multi-tensor op first makes
// the optimizer step's gradient (weighted, accumulated, clipped) from its
// controls, which are checked here, and decays the parameters it flags
// (AdamW). tg.all_reduce is here too: the
// interpreter is one process, so it passes its operands through.
//
//===----------------------------------------------------------------------===//
#include "codegen/interpreter/ops/OpSupport.h"

#include <cmath>

using namespace mlir;

namespace tgc::interp {
namespace {

/// Adam's beta1, beta2 and epsilon as the op has them.
struct AdamHyper {
  double beta1, beta2, epsilon;
};

AdamHyper hyperOf(Executor &, tg::AdamUpdateOp o) {
  return {f32Attr(o.getBeta1()), f32Attr(o.getBeta2()),
          f32Attr(o.getEpsilon())};
}

/// The run-time values when the op has them, else the attributes.
AdamHyper hyperOf(Executor &x, tg::MultiAdamUpdateOp o) {
  if (!o.getBeta1Value())
    return {f32Attr(o.getBeta1()), f32Attr(o.getBeta2()),
            f32Attr(o.getEpsilon())};
  auto read = [&](Value value) {
    return static_cast<double>(static_cast<float>(x.get(value)[0]));
  };
  return {read(o.getBeta1Value()), read(o.getBeta2Value()),
          read(o.getEpsilonValue())};
}

/// One parameter's Adam step, shared by tg.adam_update and
/// tg.multi_adam_update; AdamW when `weightDecay` is not 0.
template <typename AdamLike>
LogicalResult adamStep(Executor &x, AdamLike o, llvm::StringRef param,
                       llvm::StringRef moment1, llvm::StringRef moment2,
                       const HostTensor &grad, double weightDecay = 0.0) {
  int64_t step = scalarOf(x.get(o.getStep()));
  if (step < 1)
    return o.emitOpError() << "step must be >= 1 (Adam's bias correction "
                              "divides by 1 - beta^step) but is "
                           << step;
  HostTensor &p = x.variable(param), &m = x.variable(moment1),
             &v = x.variable(moment2);
  const AdamHyper h = hyperOf(x, o);
  ref::adamUpdate(p, m, v, grad, x.get(o.getLr())[0], step, h.beta1, h.beta2,
                  h.epsilon, weightDecay);
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
      !runtime::adamTakes(norm, clip))
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
  double weightDecay =
      o.getWeightDecay() ? x.get(o.getWeightDecay())[0] : 0.0;
  for (auto [index, entry] : llvm::enumerate(llvm::zip(
           o.getParams(), o.getMoments1(), o.getMoments2(), o.getGrads()))) {
    auto [param, m, v, grad] = entry;
    // The optimizer step's gradient, or the op's gradient as is.
    const HostTensor &g = update.empty() ? x.get(grad) : update[index];
    bool decays = o.getDecays() && (*o.getDecays())[index];
    if (failed(adamStep(x, o, name(param), name(m), name(v), g,
                        decays ? weightDecay : 0.0)))
      return failure();
  }
  return success();
}

/// The interpreter is one process: the sum over the processes is the
/// operand itself.
LogicalResult allReduce(Executor &x, tg::AllReduceOp o) {
  for (auto [input, sum] : llvm::zip(o.getInputs(), o.getSums()))
    x.bind(sum, x.get(input));
  return success();
}

} // namespace

void attachAdamReference(MLIRContext *context) {
  tg::AdamUpdateOp::attachInterface<
      ReferenceModel<tg::AdamUpdateOp, adamUpdate>>(*context);
  tg::MultiAdamUpdateOp::attachInterface<
      ReferenceModel<tg::MultiAdamUpdateOp, multiAdamUpdate>>(*context);
  tg::AllReduceOp::attachInterface<ReferenceModel<tg::AllReduceOp, allReduce>>(
      *context);
}

} // namespace tgc::interp
