//===- MixedPrecision.cpp - tg-mixed-precision ----------------------------===//
#include "passes/Passes.h"

#include "ir/TgOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/SetVector.h"

namespace tgc {

#define GEN_PASS_DEF_TGMIXEDPRECISION
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

bool isF32Tensor(Value value) {
  auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
  return type && type.getElementType().isF32();
}

/// An incremental decoder's attention reads its keys and values from a
/// cache variable: rounding the whole cache at every step would cost more
/// than the products gain, so it stays f32. Only a cache: a training step's
/// attention that reads a variable as it is goes to bf16 like any other,
/// as its backward does (which recomputes the probabilities from the same
/// rounded keys and values).
bool readsCache(tg::AttentionOp attention) {
  auto cached = [&](Value value) {
    auto load = value.getDefiningOp<tg::LoadOp>();
    if (!load)
      return false;
    auto variable = SymbolTable::lookupNearestSymbolFrom<tg::VariableOp>(
        load, load.getVariableAttr());
    return variable && variable.getCache();
  };
  return cached(attention.getKeyIn()) || cached(attention.getValue());
}

/// The bf16 copies of one function's f32 values, one per value.
class Bf16Copies {
public:
  /// `value`'s bf16 copy, made right after `value` (or, for a reshape,
  /// the reshape of its input's copy) the first time it is asked for.
  Value of(Value value) {
    if (Value copy = copies.lookup(value))
      return copy;
    Value copy;
    OpBuilder builder(value.getContext());
    if (auto reshape = value.getDefiningOp<tg::ReshapeOp>();
        reshape && isF32Tensor(reshape.getInput())) {
      Value input = of(reshape.getInput());
      builder.setInsertionPointAfterValue(input);
      copy = builder.create<tg::ReshapeOp>(
          reshape.getLoc(), tg::withBf16Elements(value.getType()), input);
    } else {
      // A function's arguments are rounded at its start, in the order
      // their GEMMs come.
      bool argument = llvm::isa<BlockArgument>(value);
      if (argument && lastArgumentCopy)
        builder.setInsertionPointAfter(lastArgumentCopy);
      else
        builder.setInsertionPointAfterValue(value);
      auto toBf16 = builder.create<tg::ToBf16Op>(value.getLoc(), value);
      if (argument)
        lastArgumentCopy = toBf16;
      copy = toBf16;
      ++made;
    }
    copies[value] = copy;
    return copy;
  }

  /// `value`'s copy if one was made, else null.
  Value existing(Value value) const { return copies.lookup(value); }

  int64_t made = 0;

private:
  llvm::DenseMap<Value, Value> copies;
  Operation *lastArgumentCopy = nullptr;
};

struct MixedPrecisionPass
    : public impl::TgMixedPrecisionBase<MixedPrecisionPass> {
  using TgMixedPrecisionBase::TgMixedPrecisionBase;

  void runOnOperation() override {
    int64_t gemms = 0, copies = 0;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      Bf16Copies bf16;
      // Operands of each GEMM: both f32 (the verifier's rule) or already
      // bf16 (a module that went through the pass before).
      llvm::SetVector<Operation *> bypassed;
      auto convert = [&](Operation *gemm, ArrayRef<unsigned> operands) {
        if (!isF32Tensor(gemm->getOperand(operands.front())))
          return;
        if (llvm::isa<tg::AttentionOp, tg::AttentionGradOp>(gemm) &&
            attentionProducts)
          gemm->setAttr("bf16_products", UnitAttr::get(gemm->getContext()));
        for (unsigned index : operands) {
          Value operand = gemm->getOperand(index);
          if (auto reshape = operand.getDefiningOp<tg::ReshapeOp>())
            bypassed.insert(reshape);
          gemm->setOperand(index, bf16.of(operand));
        }
        ++gemms;
      };
      // The bias gradients (below), found before their weight gradients'
      // GEMMs read bf16 copies: a sum of that shape that no such GEMM
      // shares its operand with (a forward sum) stays f32.
      SmallVector<tg::ReduceSumOp> biasGradients;
      func.walk([&](tg::ReduceSumOp sum) {
        if (sum->getParentOp() == func.getOperation() &&
            tg::weightGradientOf(sum))
          biasGradients.push_back(sum);
      });
      func.walk([&](Operation *op) {
        if (op->hasTrait<tg::traits::GemmOperands>())
          convert(op, {0, 1});
        else if (auto forward = llvm::dyn_cast<tg::AttentionOp>(op);
                 forward && attention && !readsCache(forward))
          convert(op, {0, 1, 2});
        else if (auto backward = llvm::dyn_cast<tg::AttentionGradOp>(op);
                 backward && attention)
          convert(op, {1, 2, 3});
      });
      // A relu's gradient needs only the signs of its output, which the
      // output's bf16 copy keeps: reading the copy lets the f32 output die
      // after the forward (the largest activation of a feed-forward layer).
      func.walk([&](tg::ReluGradOp reluGrad) {
        if (reluGrad->getParentOp() != func.getOperation())
          return; // inside a group, whose inputs stay as they are
        if (Value copy = bf16.existing(reluGrad.getInput()))
          reluGrad.getInputMutable().assign(copy);
      });
      // A bias gradient is the product 1^T g of the gradient g its weight
      // gradient's GEMM multiplies: it reads the same bf16 copy of g (as
      // PyTorch's autocast does), so the f32 g need not be written where
      // nothing else reads it, and the sum reads half the bytes. The sum
      // itself accumulates in double.
      for (tg::ReduceSumOp sum : biasGradients)
        if (Value copy = bf16.existing(sum.getInput()))
          sum.getInputMutable().assign(copy);
      // The f32 reshapes the bf16 ones replaced, unless something else
      // reads them (a chain of them goes link by link).
      while (!bypassed.empty()) {
        Operation *reshape = bypassed.pop_back_val();
        if (!reshape->use_empty())
          continue;
        if (auto input = reshape->getOperand(0).getDefiningOp<tg::ReshapeOp>())
          bypassed.insert(input);
        reshape->erase();
      }
      // A linear whose result is read only through its bf16 copy adds a
      // bf16 copy of its bias (as PyTorch's autocast does): the result is
      // rounded anyway, and a GPU's GEMM can then add the bias in its
      // epilogue as it writes bf16 (cuBLASLt's bias has the result's type).
      // Its f32 sum is not rounded before the bias is added.
      func.walk([&](tg::LinearOp linear) {
        Value result = linear.getResult();
        if (linear->getParentOp() != func.getOperation() ||
            !isF32Tensor(linear.getBias()) || isF32Tensor(linear.getInput()) ||
            linear.getPreActivation() || !result.hasOneUse() ||
            !bf16.existing(result))
          return;
        linear.getBiasMutable().assign(bf16.of(linear.getBias()));
      });
      copies += bf16.made;
    }
    numGemms = gemms;
    numCopies = copies;
    if (report)
      getOperation().emitRemark()
          << "tg-mixed-precision: " << gemms << " GEMMs on bf16 operands, "
          << copies << " tg.to_bf16 copies";
  }
};

} // namespace
} // namespace tgc
