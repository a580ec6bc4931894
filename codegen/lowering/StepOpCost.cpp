//===- StepOpCost.cpp - what an op of the step moves and computes ---------===//
#include "codegen/lowering/StepOpCost.h"

#include "ir/TgOps.h"

#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace tgc::cpp {

namespace {

int64_t elementsOf(Value value) {
  return llvm::cast<ShapedType>(value.getType()).getNumElements();
}

int64_t bytesOf(Value value) {
  auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape() ||
      !type.getElementType().isIntOrFloat())
    return 0;
  int64_t bits = type.getElementType().getIntOrFloatBitWidth();
  return type.getNumElements() * ((bits + 7) / 8);
}

/// Dimension `sequenceMajor ? 1 : 2` of an attention operand: its rows
/// (queries or keys) in either layout.
int64_t rowsOf(Value value, bool sequenceMajor) {
  return llvm::cast<ShapedType>(value.getType())
      .getDimSize(sequenceMajor ? 1 : 2);
}

/// The multiply-adds of `op`'s products (see productFlops).
int64_t multiplyAddsOf(Operation *op) {
  if (llvm::isa<tg::MatmulOp, tg::MatmulAddOp>(op))
    return tg::multiplyAdds(op);
  if (auto linear = llvm::dyn_cast<tg::LinearOp>(op)) {
    auto input = llvm::cast<ShapedType>(linear.getInput().getType());
    return elementsOf(linear->getResult(0)) *
           input.getDimSize(input.getRank() - 1);
  }
  if (auto grad = llvm::dyn_cast<tg::WeightBiasGradOp>(op)) {
    // x [R, K] and dy [R, N]: x^T dy is R K N.
    auto dy = llvm::cast<ShapedType>(grad.getGrad().getType());
    return elementsOf(grad.getInput()) * dy.getDimSize(dy.getRank() - 1);
  }
  if (auto loss = llvm::dyn_cast<tg::OutputLossOp>(op)) {
    // The logits h W^T, and the gradients dL W and dL^T h.
    auto weight = llvm::cast<ShapedType>(loss.getWeight().getType());
    return 3 * elementsOf(loss.getHidden()) * weight.getDimSize(0);
  }
  if (auto attention = llvm::dyn_cast<tg::AttentionOp>(op)) {
    // Q K^T and P V.
    const bool major = attention.getSequenceMajor();
    const int64_t keys = rowsOf(attention.getKeyIn(), major);
    return (elementsOf(attention.getQuery()) +
            elementsOf(attention.getOutput())) *
           keys;
  }
  if (auto grad = llvm::dyn_cast<tg::AttentionGradOp>(op)) {
    // Q K^T again, dP = dO V^T, dV = P^T dO, dQ = dS K, dK = dS^T Q.
    const bool major = grad.getSequenceMajor();
    const int64_t keys = rowsOf(grad.getKeyIn(), major),
                  queries = rowsOf(grad.getQuery(), major);
    return (2 * elementsOf(grad.getQuery()) + elementsOf(grad.getGrad())) *
               keys +
           (elementsOf(grad.getValue()) + elementsOf(grad.getKeyIn())) *
               queries;
  }
  return 0;
}

/// The optimizer's state, which it reads and writes in place through
/// symbols rather than operands: each gradient element's parameter and two
/// moments (f32), read and written once.
int64_t optimizerStateBytes(Operation *op) {
  int64_t elements = 0;
  if (auto adam = llvm::dyn_cast<tg::MultiAdamUpdateOp>(op))
    for (Value grad : adam.getGrads())
      elements += elementsOf(grad);
  else if (auto adam = llvm::dyn_cast<tg::AdamUpdateOp>(op))
    elements = elementsOf(adam.getGrad());
  return elements * 3 * 2 * int64_t(sizeof(float));
}

} // namespace

int64_t operandAndResultBytes(Operation *op) {
  llvm::SmallPtrSet<void *, 8> seen;
  int64_t bytes = optimizerStateBytes(op);
  for (Value operand : op->getOperands())
    if (seen.insert(operand.getAsOpaquePointer()).second)
      bytes += bytesOf(operand);
  for (Value result : op->getResults())
    bytes += bytesOf(result);
  return bytes;
}

int64_t productFlops(Operation *op) { return 2 * multiplyAddsOf(op); }

} // namespace tgc::cpp
