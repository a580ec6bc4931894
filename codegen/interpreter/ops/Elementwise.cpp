//===- Elementwise.cpp - the interpreter's elementwise ops ----------------===//
//
// The ops of codegen/ElementwiseOps.def compute their formula of
// runtime/kernels/Elementwise.h in double, one model per op class from the
// same list the emitters expand. tg.scale and tg.pow (an attribute), tg.dropout and
// tg.dropout_grad (a random factor) take one more argument;
// tg.fused_elementwise runs its body's ops one after another.
//
//===----------------------------------------------------------------------===//
#include "codegen/interpreter/ops/OpSupport.h"
#include "runtime/kernels/Elementwise.h"

using namespace mlir;

namespace tgc::interp {
namespace {

/// The model of an op of ElementwiseOps.def: `formula` (a function of
/// runtime/kernels/Elementwise.h in double) of its `arity` operands.
template <typename OpT, int arity, auto formula>
struct ElementwiseReferenceModel
    : tg::ReferenceOpInterface::ExternalModel<
          ElementwiseReferenceModel<OpT, arity, formula>, OpT> {
  LogicalResult executeReference(Operation *op, Executor &x) const {
    return runElementwise<arity>(
        x, op, [](auto... v) { return formula(v...); });
  }
};

LogicalResult scale(Executor &x, tg::ScaleOp o) {
  double factor = f32Attr(o.getFactor());
  x.bind(o.getResult(), map(x.get(o.getInput()), [factor](double v) {
           return elementwise::scale(v, factor);
         }));
  return success();
}

LogicalResult pow(Executor &x, tg::PowOp o) {
  double exponent = f32Attr(o.getExponent());
  x.bind(o.getResult(), map(x.get(o.getInput()), [exponent](double v) {
           return elementwise::pow(v, exponent);
         }));
  return success();
}

HostTensor dropped(const HostTensor &input, const ref::Dropout &dropout) {
  return ref::dropout(input, dropout);
}

LogicalResult dropout(Executor &x, tg::DropoutOp o) {
  x.bind(o.getResult(),
         dropped(x.get(o.getInput()),
                 dropoutOf(x.get(o.getKey()),
                           givenRate(x, o.getRate(), o.getRateValue()),
                           o.getOpId())));
  return success();
}

LogicalResult dropoutGrad(Executor &x, tg::DropoutGradOp o) {
  x.bind(o.getResult(),
         dropped(x.get(o.getGrad()),
                 dropoutOf(x.get(o.getKey()),
                           givenRate(x, o.getRate(), o.getRateValue()),
                           o.getOpId())));
  return success();
}

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

} // namespace

void attachElementwiseReference(MLIRContext *context) {
#define TGC_ELEMENTWISE(OpClass, formula, arity)                               \
  tg::OpClass::attachInterface<ElementwiseReferenceModel<                      \
      tg::OpClass, arity, &elementwise::formula<double>>>(*context);
#include "codegen/ElementwiseOps.def"
  tg::ScaleOp::attachInterface<ReferenceModel<tg::ScaleOp, scale>>(*context);
  tg::PowOp::attachInterface<ReferenceModel<tg::PowOp, pow>>(*context);
  tg::DropoutOp::attachInterface<ReferenceModel<tg::DropoutOp, dropout>>(
      *context);
  tg::DropoutGradOp::attachInterface<
      ReferenceModel<tg::DropoutGradOp, dropoutGrad>>(*context);
  tg::FusedElementwiseOp::attachInterface<
      ReferenceModel<tg::FusedElementwiseOp, fusedElementwise>>(*context);
}

} // namespace tgc::interp
