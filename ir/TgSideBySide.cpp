//===- TgSideBySide.cpp - tg.beside_next: two GEMMs that run at once ------===//
#include "ir/TgOps.h"

using namespace mlir;

namespace tgc::tg {

Operation *nextComputingOp(Operation *op) {
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
    if (!writesNoCode(next))
      return next;
  return nullptr;
}

bool isPairableGemm(Operation *op) {
  return llvm::isa<MatmulOp, MatmulAddOp>(op);
}

int64_t multiplyAdds(Operation *gemm) {
  auto lhs = llvm::cast<ShapedType>(gemm->getOperand(0).getType());
  auto matmul = llvm::dyn_cast<MatmulOp>(gemm);
  bool transposed = matmul ? matmul.getTransposeLhs()
                           : llvm::cast<MatmulAddOp>(gemm).getTransposeLhs();
  int64_t k = lhs.getDimSize(lhs.getRank() - (transposed ? 2 : 1));
  return llvm::cast<ShapedType>(gemm->getResult(0).getType())
             .getNumElements() *
         k;
}

bool readsResultOf(Operation *later, Operation *op) {
  // A view is its input's bytes: where they are made counts.
  for (Value operand : later->getOperands())
    if (viewSource(operand).getDefiningOp() == op)
      return true;
  return false;
}

LogicalResult verifyBesideNext(Operation *op, Attribute value) {
  if (!llvm::isa<UnitAttr>(value))
    return op->emitError() << kBesideNextAttr << " must be a unit attribute";
  if (!isPairableGemm(op))
    return op->emitError() << kBesideNextAttr
                           << " is for tg.matmul and tg.matmul_add only";
  Operation *next = nextComputingOp(op);
  if (!next || !isPairableGemm(next))
    return op->emitError() << kBesideNextAttr
                           << " needs a tg.matmul or tg.matmul_add as the "
                              "next op that computes something";
  if (next->hasAttr(kBesideNextAttr))
    return op->emitError() << kBesideNextAttr
                           << " pairs two ops: the next one may not have it";
  if (readsResultOf(next, op))
    return op->emitError() << kBesideNextAttr
                           << ": the next GEMM reads this one's result, so "
                              "they cannot run at once";
  return success();
}

} // namespace tgc::tg
