//===- Gemm.cpp - decoder axes of matmul and linear ----------------------===//
//
// A GEMM runs one position at a time when positions are rows of its left
// operand (its input) and the other operand, a weight, is read whole.
//
//===----------------------------------------------------------------------===//
#include "passes/decoder/AxisRequest.h"

using namespace mlir;

namespace tgc {
namespace {

FailureOr<OpAxes> linearAxes(const AxisRequest &r, tg::LinearOp op) {
  if (!r.isTarget(op.getInput()) || !r.notLast())
    return r.unsupported("positions must be rows of its input");
  OpAxes a = r.all(kNoAxis);
  // The result and the pre-activation, when kept, are rows alike.
  a.operands[0] = r.axis;
  for (int64_t &result : a.results)
    result = r.axis;
  return a;
}

FailureOr<OpAxes> matmulAxes(const AxisRequest &r, tg::MatmulOp op) {
  if (r.isTarget(op.getRhs()) || op.getTransposeLhs() ||
      r.axis >= rankOf(op.getLhs()) - 1)
    return r.unsupported("positions must be rows of its left operand");
  return OpAxes{{r.axis, kNoAxis}, {r.axis}};
}

} // namespace

void attachGemmAxes(MLIRContext &context) {
  // Target ops only (recomputed, if at all, whole).
  tg::MatmulOp::attachInterface<
      DecoderAxesModel<tg::MatmulOp, matmulAxes, nullptr>>(context);
  tg::LinearOp::attachInterface<
      DecoderAxesModel<tg::LinearOp, linearAxes, nullptr>>(context);
}

} // namespace tgc
