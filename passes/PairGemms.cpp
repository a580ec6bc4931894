//===- PairGemms.cpp - tg-pair-gemms ------------------------------------===//
#include "passes/Passes.h"

#include "ir/TgOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace tgc {

#define GEN_PASS_DEF_TGPAIRGEMMS
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

bool isF32(Value value) {
  return llvm::cast<ShapedType>(value.getType()).getElementType().isF32();
}

struct PairGemmsPass : public impl::TgPairGemmsBase<PairGemmsPass> {
  using TgPairGemmsBase::TgPairGemmsBase;

  bool pairable(Operation *first, Operation *second) const {
    for (Operation *op : {first, second})
      if (!tg::isPairableGemm(op) || !isF32(op->getOperand(0)) ||
          !isF32(op->getResult(0)))
        return false;
    int64_t a = tg::multiplyAdds(first), b = tg::multiplyAdds(second);
    int64_t smaller = std::min(a, b), larger = std::max(a, b);
    return smaller >= minMacs && larger <= maxMacs && 2 * smaller >= larger &&
           !tg::readsResultOf(second, first);
  }

  void runOnOperation() override {
    int64_t pairs = 0;
    getOperation().walk([&](func::FuncOp function) {
      if (function.isExternal())
        return;
      Operation *op = &function.getBody().front().front();
      while (op) {
        Operation *next = tg::nextComputingOp(op);
        if (next && pairable(op, next)) {
          op->setAttr(tg::kBesideNextAttr, UnitAttr::get(&getContext()));
          ++pairs;
          next = tg::nextComputingOp(next); // one pair per op
        }
        op = next;
      }
    });
    numPairs = pairs;
    if (report)
      getOperation().emitRemark()
          << "tg-pair-gemms: " << pairs
          << " pairs of GEMMs run side by side";
  }
};

} // namespace
} // namespace tgc
