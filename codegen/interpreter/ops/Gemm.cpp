//===- Gemm.cpp - the interpreter's GEMMs and bf16 rounding ---------------===//
//
// tg.matmul, tg.matmul_add, tg.linear and tg.weight_bias_grad call the
// reference GEMMs in double; tg.to_bf16 only binds its operand, since binding
// to a bf16 value rounds (Executor::bind).
//
//===----------------------------------------------------------------------===//
#include "codegen/interpreter/ops/OpSupport.h"

using namespace mlir;

namespace tgc::interp {
namespace {

LogicalResult matmul(Executor &x, tg::MatmulOp o) {
  x.bind(o.getResult(), ref::matmul(x.get(o.getLhs()), x.get(o.getRhs()),
                                    o.getTransposeLhs(), o.getTransposeRhs()));
  return success();
}

/// The product as tg.matmul binds it (f32 values under Precision::F32),
/// then the add in double, rounded once more when bound: the unfused
/// add's arithmetic.
LogicalResult matmulAdd(Executor &x, tg::MatmulAddOp o) {
  HostTensor sum = ref::matmul(x.get(o.getLhs()), x.get(o.getRhs()),
                               o.getTransposeLhs(), o.getTransposeRhs());
  if (x.getPrecision() == Precision::F32)
    roundToFloat(sum);
  const HostTensor &addend = x.get(o.getAddend());
  for (size_t i = 0; i < sum.data.size(); ++i)
    sum.data[i] += addend.data[i];
  x.bind(o.getResult(), std::move(sum));
  return success();
}

/// The two ops tg.weight_bias_grad stands for, each as it binds its result.
LogicalResult weightBiasGrad(Executor &x, tg::WeightBiasGradOp o) {
  // Both computed before either is bound: binding may grow the value map
  // and move the tensors these references point to.
  const HostTensor &input = x.get(o.getInput()), &grad = x.get(o.getGrad());
  HostTensor weightGrad = ref::matmul(input, grad, true, false);
  const int64_t rows[] = {0};
  HostTensor biasGrad =
      ref::reduce(grad, rows, /*keepDims=*/false, ref::Reduction::Sum);
  x.bind(o.getWeightGrad(), std::move(weightGrad));
  x.bind(o.getBiasGrad(), std::move(biasGrad));
  return success();
}

/// tg.linear's activations are runtime::Activation's, in the same order.
static_assert(int(tg::Activation::gelu_tanh) ==
                  int(runtime::Activation::geluTanh) &&
              int(tg::Activation::tanh) == int(runtime::Activation::tanh));

/// Both results from the double sums: each bf16 one rounded once, when
/// bound, as the kernels write it.
LogicalResult linear(Executor &x, tg::LinearOp o) {
  HostTensor pre = ref::linear(x.get(o.getInput()), x.get(o.getWeight()),
                                    x.get(o.getBias()));
  x.bind(o.getResult(),
         ref::activated(pre, runtime::Activation(o.getActivation())));
  if (Value kept = o.getPreActivation())
    x.bind(kept, std::move(pre));
  return success();
}

/// Binding to a bf16 value rounds (Executor::bind).
LogicalResult toBf16(Executor &x, tg::ToBf16Op o) {
  x.bind(o.getResult(), x.get(o.getInput()));
  return success();
}

} // namespace

void attachGemmReference(MLIRContext *context) {
  tg::MatmulOp::attachInterface<ReferenceModel<tg::MatmulOp, matmul>>(*context);
  tg::MatmulAddOp::attachInterface<ReferenceModel<tg::MatmulAddOp, matmulAdd>>(
      *context);
  tg::LinearOp::attachInterface<ReferenceModel<tg::LinearOp, linear>>(*context);
  tg::ToBf16Op::attachInterface<ReferenceModel<tg::ToBf16Op, toBf16>>(*context);
  tg::WeightBiasGradOp::attachInterface<
      ReferenceModel<tg::WeightBiasGradOp, weightBiasGrad>>(*context);
}

} // namespace tgc::interp
