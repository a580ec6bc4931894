//===- Gemm.cpp - the GEMMs and to_bf16 as kernel calls -------------------===//
//
// The GEMMs and the bf16 rounding of their operands: the shapes of the
// product (batch, m, n, k) and its transposes as literals.
//
//===----------------------------------------------------------------------===//
#include "codegen/calls/KernelArgs.h"
#include "codegen/calls/KernelCallModels.h"

#include "ir/TgOps.h"

#include <cstdint>
#include <limits>

using namespace mlir;

namespace tgc::cpp {

namespace {

/// The BLAS libraries under the kernels (OpenBLAS's cblas, cuBLAS) take a
/// GEMM's sizes and batch count as 32-bit ints: a larger one would wrap.
LogicalResult checkGemmSizes(Operation *op, ArrayRef<int64_t> sizes) {
  for (int64_t size : sizes)
    if (size > std::numeric_limits<int32_t>::max())
      return op->emitOpError()
             << "is a matrix product with a size of " << size
             << ", past the 2147483647 (2^31 - 1) that the BLAS libraries "
                "under the kernels (OpenBLAS, cuBLAS) take";
  return success();
}

/// "batch, m, n, k, transposeLhs, transposeRhs, rhsShared": the product's
/// shape as the kernels' matmul and matmulAdd take it.
template <typename GemmOp> FailureOr<std::string> productShape(GemmOp o) {
  auto lhs = shapeOf(o.getLhs()), rhs = shapeOf(o.getRhs());
  int64_t rank = static_cast<int64_t>(lhs.size());
  int64_t m = o.getTransposeLhs() ? lhs[rank - 1] : lhs[rank - 2];
  int64_t k = o.getTransposeLhs() ? lhs[rank - 2] : lhs[rank - 1];
  int64_t n = o.getTransposeRhs() ? rhs[rhs.size() - 2] : rhs.back();
  int64_t batch = product(lhs.drop_back(2));
  bool shared = rhs.size() == 2 && rank > 2;
  // A shared weight under untransposed rows is one tall product.
  int64_t rows = shared && !o.getTransposeLhs() ? batch * m : m;
  if (failed(checkGemmSizes(o, {batch, rows, n, k})))
    return failure();
  return std::to_string(batch) + ", " + std::to_string(m) + ", " +
         std::to_string(n) + ", " + std::to_string(k) + ", " +
         b(o.getTransposeLhs()) + ", " + b(o.getTransposeRhs()) + ", " +
         b(shared);
}

FailureOr<std::string> emitMatmul(KernelArgs &p, EmitContext &context,
                                  tg::MatmulOp o) {
  FailureOr<std::string> shape = productShape(o);
  if (failed(shape))
    return failure();
  return std::string("  kernels::matmul(" + p(o.getLhs()) + ", " +
                     p(o.getRhs()) + ", " + p(o.getResult()) + ", " + *shape +
                     ");\n");
}

FailureOr<std::string> emitMatmulAdd(KernelArgs &p, EmitContext &context,
                                     tg::MatmulAddOp o) {
  FailureOr<std::string> shape = productShape(o);
  if (failed(shape))
    return failure();
  return std::string("  kernels::matmulAdd(" + p(o.getLhs()) + ", " +
                     p(o.getRhs()) + ", " + p(o.getAddend()) + ", " +
                     p(o.getResult()) + ", " + *shape + ");\n");
}

FailureOr<std::string> emitWeightBiasGrad(KernelArgs &p, EmitContext &context,
                                          tg::WeightBiasGradOp o) {
  auto input = shapeOf(o.getInput()), grad = shapeOf(o.getGrad());
  if (failed(checkGemmSizes(o, {input[0], input[1], grad[1]})))
    return failure();
  return std::string("  kernels::weightBiasGrad(" + p(o.getInput()) + ", " +
                     p(o.getGrad()) + ", " + p(o.getWeightGrad()) + ", " +
                     p(o.getBiasGrad()) + ", " + std::to_string(input[0]) +
                     ", " + std::to_string(input[1]) + ", " +
                     std::to_string(grad[1]) + ");\n");
}

/// The kernels' name of tg.linear's activation (runtime/kernels/KernelTypes.h).
const char *activationName(tg::Activation activation) {
  switch (activation) {
  case tg::Activation::none:
    return "none";
  case tg::Activation::relu:
    return "relu";
  case tg::Activation::gelu:
    return "gelu";
  case tg::Activation::gelu_tanh:
    return "geluTanh";
  case tg::Activation::silu:
    return "silu";
  case tg::Activation::sigmoid:
    return "sigmoid";
  case tg::Activation::tanh:
    return "tanh";
  }
  llvm_unreachable("an activation the kernels do not name");
}

FailureOr<std::string> emitLinear(KernelArgs &p, EmitContext &context,
                                  tg::LinearOp o) {
  auto weight = shapeOf(o.getWeight());
  if (failed(checkGemmSizes(o, {numElements(o.getInput()) / weight[0],
                                weight[0], weight[1]})))
    return failure();
  std::string pre =
      o.getPreActivation() ? p(o.getPreActivation()) + ", " : std::string();
  return std::string(
      "  kernels::linear(" + p(o.getInput()) + ", " + p(o.getWeight()) + ", " +
      p(o.getBias()) + ", " + p(o.getResult()) + ", " + pre +
      std::to_string(numElements(o.getInput()) / weight[0]) + ", " +
      std::to_string(weight[0]) + ", " + std::to_string(weight[1]) +
      ", kernels::Activation::" + activationName(o.getActivation()) + ");\n");
}

FailureOr<std::string> emitToBf16(KernelArgs &p, EmitContext &context,
                                  tg::ToBf16Op o) {
  return std::string("  kernels::toBf16(" + p(o.getInput()) + ", " +
                     p(o.getResult()) + ", " +
                     std::to_string(numElements(o.getInput())) + ");\n");
}

} // namespace

void attachGemmCalls(MLIRContext &context) {
  tg::MatmulOp::attachInterface<KernelCallModel<tg::MatmulOp, emitMatmul>>(
      context);
  tg::MatmulAddOp::attachInterface<
      KernelCallModel<tg::MatmulAddOp, emitMatmulAdd>>(context);
  tg::WeightBiasGradOp::attachInterface<
      KernelCallModel<tg::WeightBiasGradOp, emitWeightBiasGrad>>(context);
  tg::LinearOp::attachInterface<KernelCallModel<tg::LinearOp, emitLinear>>(
      context);
  tg::ToBf16Op::attachInterface<KernelCallModel<tg::ToBf16Op, emitToBf16>>(
      context);
}

} // namespace tgc::cpp
