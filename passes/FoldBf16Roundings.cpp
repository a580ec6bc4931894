//===- FoldBf16Roundings.cpp - tg-fold-bf16-roundings ---------------------===//
#include "passes/Passes.h"

#include "ir/TgOps.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace tgc {

#define GEN_PASS_DEF_TGFOLDBF16ROUNDINGS
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

/// Whether `value` comes from a GEMM on bf16 operands that could write it
/// rounded: its result, read by nothing but the copy.
bool isFoldableGemmResult(Value value) {
  Operation *gemm = value.getDefiningOp();
  if (!gemm || !gemm->hasTrait<tg::traits::GemmResult>() ||
      !value.hasOneUse())
    return false;
  auto operand = llvm::cast<ShapedType>(gemm->getOperand(0).getType());
  return operand.getElementType().isBF16();
}

/// Whether `value` is a transpose of f32 values read by nothing but the copy:
/// the transpose can round as it writes (both targets' kernels).
bool isFoldableTransposeResult(Value value) {
  auto transpose = value.getDefiningOp<tg::TransposeOp>();
  return transpose && value.hasOneUse() &&
         llvm::cast<ShapedType>(transpose.getInput().getType())
             .getElementType()
             .isF32();
}

/// The copies of tg.attention_grad's gradients of q, k and v when each is
/// read by nothing but its copy and the op multiplies in bf16 (bf16_products,
/// the kernels that can write bf16 gradients); empty otherwise. A score
/// bias's gradient stays f32.
SmallVector<tg::ToBf16Op> foldableGradientCopies(tg::AttentionGradOp op) {
  if (!op.getBf16Products())
    return {};
  SmallVector<tg::ToBf16Op> copies;
  for (Value gradient :
       {op.getQueryGrad(), op.getKeyGrad(), op.getValueGrad()}) {
    auto copy = gradient.hasOneUse()
                    ? llvm::dyn_cast<tg::ToBf16Op>(*gradient.user_begin())
                    : nullptr;
    if (!copy)
      return {};
    copies.push_back(copy);
  }
  return copies;
}

/// The copy of tg.attention's output when the op multiplies in bf16
/// (bf16_products) and nothing else reads the output but its gradients
/// (whose bf16_products backward never reads it); null otherwise.
tg::ToBf16Op foldableOutputCopy(tg::AttentionOp op) {
  if (!op.getBf16Products())
    return nullptr;
  tg::ToBf16Op copy;
  for (OpOperand &use : op.getOutput().getUses()) {
    if (auto rounding = llvm::dyn_cast<tg::ToBf16Op>(use.getOwner());
        rounding && !copy) {
      copy = rounding;
      continue;
    }
    auto gradient = llvm::dyn_cast<tg::AttentionGradOp>(use.getOwner());
    // Read as the gradient's `output` operand, not as another (its `grad`).
    if (!gradient || &use != &gradient.getOutputMutable() ||
        !gradient.getBf16Products())
      return nullptr;
  }
  return copy;
}

/// Whether `value` is written by an elementwise loop, a group's or a single
/// elementwise op's (the emitters' one loop either way): that loop can
/// write its rounded copy as well.
bool isElementwiseLoopResult(Value value) {
  Operation *op = value.getDefiningOp();
  return op && op->hasTrait<tg::traits::ElementwiseLoop>();
}

/// `op` itself if it is a group, else a group of `op` alone (the same loop).
tg::FusedElementwiseOp asGroup(Operation *op) {
  if (auto group = llvm::dyn_cast<tg::FusedElementwiseOp>(op))
    return group;
  OpBuilder builder(op);
  llvm::SetVector<Value> inputs(op->operand_begin(), op->operand_end());
  auto group = builder.create<tg::FusedElementwiseOp>(
      op->getLoc(), op->getResultTypes(), inputs.getArrayRef());
  SmallVector<Location> locations(inputs.size(), op->getLoc());
  Block *body = builder.createBlock(&group.getBody(), {},
                                    ValueRange(inputs.getArrayRef()).getTypes(),
                                    locations);
  IRMapping mapping;
  mapping.map(inputs.getArrayRef(), body->getArguments());
  Operation *inner = builder.clone(*op, mapping);
  builder.create<tg::YieldOp>(op->getLoc(), inner->getResults());
  op->replaceAllUsesWith(group.getResults());
  op->erase();
  return group;
}

/// `copy`, of an elementwise loop's result, made in that loop: the group
/// yields the rounded value as one more (bf16) result, or instead of the
/// f32 one where the copy was its only reader.
void foldIntoLoop(tg::ToBf16Op copy) {
  auto result = llvm::cast<OpResult>(copy.getInput());
  unsigned index = result.getResultNumber();
  tg::FusedElementwiseOp group = asGroup(result.getOwner());
  bool replacesResult = group.getResult(index).hasOneUse();
  tg::YieldOp yield = group.getYield();
  OpBuilder builder(yield);
  Value rounded =
      builder.create<tg::ToBf16Op>(copy.getLoc(), yield.getValues()[index]);
  SmallVector<Value> values(yield.getValues());
  SmallVector<Type> types(group.getResultTypes());
  unsigned roundedIndex = replacesResult ? index : values.size();
  if (replacesResult) {
    values[index] = rounded;
    types[index] = copy.getType();
  } else {
    values.push_back(rounded);
    types.push_back(copy.getType());
  }
  yield->setOperands(values);
  builder.setInsertionPoint(group);
  auto grown = builder.create<tg::FusedElementwiseOp>(group.getLoc(), types,
                                                      group.getInputs());
  grown->setAttrs(group->getAttrs());
  grown.getBody().takeBody(group.getBody());
  copy.getResult().replaceAllUsesWith(grown.getResult(roundedIndex));
  copy.erase();
  for (unsigned i = 0; i < group.getNumResults(); ++i)
    if (!(replacesResult && i == index))
      group.getResult(i).replaceAllUsesWith(grown.getResult(i));
  group.erase();
}

/// The tg.to_bf16 copy of `value` (tg-mixed-precision makes at most one),
/// or null.
tg::ToBf16Op copyOf(Value value) {
  for (Operation *user : value.getUsers())
    if (auto copy = llvm::dyn_cast<tg::ToBf16Op>(user))
      return copy;
  return nullptr;
}

/// `op` again with one more result, standing for `copy` (the optional bf16
/// result both residual norm ops end with).
template <typename NormOp> void foldAsLastResult(NormOp op, tg::ToBf16Op copy) {
  OpBuilder builder(op);
  SmallVector<Type> types(op->getResultTypes());
  types.push_back(copy.getType());
  auto rounding = builder.create<NormOp>(op.getLoc(), types, op->getOperands(),
                                         op->getAttrs());
  // The attributes carry op's result segments, whose last (the rounded
  // result's) was empty.
  rounding.getProperties().resultSegmentSizes.back() = 1;
  copy.getResult().replaceAllUsesWith(rounding->getResults().back());
  copy.erase();
  op->replaceAllUsesWith(rounding->getResults().drop_back());
  op.erase();
}

/// The block arguments of `group` that stand for a GEMM's f32 result (read
/// by nothing else, bf16 operands) which the body only masks with a
/// tg.relu_grad whose result it only rounds: relu_grad picks each value or
/// 0, and 0 rounds to itself, so masking the rounded value gives the same
/// bits as rounding the masked one. The GEMM can then write it rounded.
SmallVector<BlockArgument> maskedGemmResults(tg::FusedElementwiseOp group) {
  SmallVector<BlockArgument> found;
  for (OpOperand &operand : group->getOpOperands()) {
    Value input = operand.get();
    if (!llvm::cast<ShapedType>(input.getType()).getElementType().isF32() ||
        !isFoldableGemmResult(input))
      continue;
    BlockArgument argument =
        group.getBody().getArgument(operand.getOperandNumber());
    auto mask = argument.hasOneUse()
                    ? llvm::dyn_cast<tg::ReluGradOp>(*argument.user_begin())
                    : nullptr;
    if (!mask || mask.getGrad() != argument || mask.getResult().use_empty() ||
        !llvm::all_of(mask.getResult().getUsers(),
                      [](Operation *user) { return isa<tg::ToBf16Op>(user); }))
      continue;
    found.push_back(argument);
  }
  return found;
}

/// `copy`'s input takes the copy's bf16 type and the copy goes.
void fold(tg::ToBf16Op copy) {
  Value result = copy.getInput();
  result.setType(copy.getType());
  copy.getResult().replaceAllUsesWith(result);
  copy.erase();
}

struct FoldBf16RoundingsPass
    : public impl::TgFoldBf16RoundingsBase<FoldBf16RoundingsPass> {
  using TgFoldBf16RoundingsBase::TgFoldBf16RoundingsBase;

  void runOnOperation() override {
    int64_t folded = 0;
    getOperation().walk([&](tg::ToBf16Op copy) {
      Value input = copy.getInput();
      if (!isFoldableTransposeResult(input) && !isFoldableGemmResult(input))
        return;
      fold(copy);
      ++folded;
    });
    // Collected first: the copies follow their op, and the walk must not
    // come upon erased ones.
    SmallVector<tg::ToBf16Op> attentionCopies;
    getOperation().walk([&](tg::AttentionGradOp op) {
      llvm::append_range(attentionCopies, foldableGradientCopies(op));
    });
    getOperation().walk([&](tg::AttentionOp op) {
      if (tg::ToBf16Op copy = foldableOutputCopy(op))
        attentionCopies.push_back(copy);
    });
    for (tg::ToBf16Op copy : attentionCopies) {
      fold(copy);
      ++folded;
    }
    SmallVector<tg::ToBf16Op> loopCopies;
    getOperation().walk([&](tg::ToBf16Op copy) {
      // A rounding inside a group is already the loop's.
      if (isElementwiseLoopResult(copy.getInput()) &&
          !llvm::isa<tg::FusedElementwiseOp>(copy->getParentOp()))
        loopCopies.push_back(copy);
    });
    for (tg::ToBf16Op copy : loopCopies) {
      foldIntoLoop(copy);
      ++folded;
    }
    SmallVector<std::pair<tg::ResidualLayerNormOp, tg::ToBf16Op>> normCopies;
    SmallVector<std::pair<tg::ResidualLayerNormGradOp, tg::ToBf16Op>>
        normGradCopies;
    // The LayerNorm kernels write the copies beside the f32 values the next
    // residual and the bias gradient read.
    getOperation().walk([&](Operation *op) {
      if (auto norm = llvm::dyn_cast<tg::ResidualLayerNormOp>(op)) {
        if (tg::ToBf16Op copy = copyOf(norm.getResult());
            copy && !norm.getRounded())
          normCopies.emplace_back(norm, copy);
      } else if (auto grad = llvm::dyn_cast<tg::ResidualLayerNormGradOp>(op)) {
        if (tg::ToBf16Op copy = copyOf(grad.getSublayerGrad());
            copy && !grad.getSublayerGradRounded())
          normGradCopies.emplace_back(grad, copy);
      }
    });
    for (auto [norm, copy] : normCopies)
      foldAsLastResult(norm, copy);
    for (auto [grad, copy] : normGradCopies)
      foldAsLastResult(grad, copy);
    folded += normCopies.size() + normGradCopies.size();
    // After the loops took their copies in: the rounding a mask feeds is
    // then inside the group.
    int64_t masked = 0;
    getOperation().walk([&](tg::FusedElementwiseOp group) {
      for (BlockArgument argument : maskedGemmResults(group)) {
        Type bf16 = tg::withBf16Elements(argument.getType());
        group->getOperand(argument.getArgNumber()).setType(bf16);
        argument.setType(bf16);
        ++masked;
      }
    });
    numFolded = folded;
    numMasked = masked;
    if (report)
      getOperation().emitRemark()
          << "tg-fold-bf16-roundings: " << folded
          << " tg.to_bf16 copies folded into their GEMMs, attention ops, "
             "transposes, elementwise loops and residual LayerNorms; "
          << masked << " GEMM results written rounded for a ReLU gradient";
  }
};

} // namespace
} // namespace tgc
