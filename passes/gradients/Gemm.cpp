//===- Gemm.cpp - gradients of the GEMM ops -------------------------------===//
//
// The backward of tg.matmul is two more matmuls, with the transposes folded
// into their flags; tg.linear and tg.to_bf16 exist only after autodiff
// (NoGradient.cpp).
//
//===----------------------------------------------------------------------===//
#include "passes/gradients/GradientModel.h"

#include "ir/TgOps.h"

#include "mlir/IR/BuiltinTypes.h"

#include <numeric>

using namespace mlir;

namespace tgc::gradients {
namespace {

/// y = A' B' where A' = A or A^T, B' = B or B^T:
///   dA' = dy B'^T and dB' = A'^T dy, transposed back where A or B was.
/// A weight B of rank 2 shared by a batched A gets the sum over the batch:
/// one GEMM over the flattened rows when A is not transposed.
LogicalResult matmulRule(GradientBuilder &r, tg::MatmulOp op) {
  Value a = op.getLhs(), bm = op.getRhs(), dy = r.dy();
  bool ta = op.getTransposeLhs(), tb = op.getTransposeRhs();
  bool sharedRhs = tensorOf(bm).getRank() == 2 && tensorOf(a).getRank() > 2;

  if (r.wants(0)) {
    if (!ta)
      r.set(0, r.matmul(dy, bm, false, !tb));
    else if (!sharedRhs) // dA = B' dy^T
      r.set(0, r.matmul(bm, dy, tb, true));
    else // (dy B'^T)^T: B cannot be the batched product's lhs
      r.set(0, r.transposeLast(r.matmul(dy, bm, false, !tb)));
  }
  if (!r.wants(1))
    return success();
  if (sharedRhs && !ta) {
    ArrayRef<int64_t> as = tensorOf(a).getShape(), ds = tensorOf(dy).getShape();
    int64_t rows = tensorOf(dy).getNumElements() / ds.back();
    Value flatA = r.reshape(a, {rows, as.back()});
    Value flatDy = r.reshape(dy, {rows, ds.back()});
    r.set(1, tb ? r.matmul(flatDy, flatA, true, false)
                : r.matmul(flatA, flatDy, true, false));
    return success();
  }
  // dB = A'^T dy, or (A'^T dy)^T = dy^T A' when B was transposed.
  Value db = tb ? r.matmul(dy, a, true, ta) : r.matmul(a, dy, !ta, false);
  if (sharedRhs) {
    SmallVector<int64_t> batch(tensorOf(a).getRank() - 2);
    std::iota(batch.begin(), batch.end(), 0);
    db = r.sum(db, batch);
  }
  r.set(1, db);
  return success();
}

} // namespace

void attachGemmGradients(MLIRContext *context) {
  attachGradientRule<tg::MatmulOp, matmulRule>(context);
}

} // namespace tgc::gradients
