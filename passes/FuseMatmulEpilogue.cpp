//===- FuseMatmulEpilogue.cpp - tg-fuse-matmul-epilogue -------------------===//
#include "passes/Passes.h"

#include "ir/TgOps.h"

#include "mlir/IR/PatternMatch.h"

namespace tgc {

#define GEN_PASS_DEF_TGFUSEMATMULEPILOGUE
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

/// `add`'s operands as (a plain x W product, a bias broadcast along the last
/// dimension), in either order.
static std::optional<std::pair<tg::MatmulOp, tg::BroadcastOp>>
matchBiasAdd(tg::AddOp add) {
  for (auto [product, bias] : {std::pair(add.getLhs(), add.getRhs()),
                               std::pair(add.getRhs(), add.getLhs())}) {
    auto matmul = product.getDefiningOp<tg::MatmulOp>();
    auto broadcast = bias.getDefiningOp<tg::BroadcastOp>();
    if (!matmul || !broadcast || !matmul->hasOneUse() ||
        matmul.getTransposeLhs() || matmul.getTransposeRhs())
      continue;
    auto weight = llvm::cast<RankedTensorType>(matmul.getRhs().getType());
    auto vector = llvm::cast<RankedTensorType>(broadcast.getInput().getType());
    int64_t rank = llvm::cast<RankedTensorType>(add.getType()).getRank();
    // A size-1 bias broadcast to N is legal but not tg.linear's [N] bias.
    if (weight.getRank() != 2 || vector.getRank() != 1 ||
        vector.getDimSize(0) != weight.getDimSize(1) ||
        broadcast.getDims() != llvm::ArrayRef<int64_t>{rank - 1})
      continue;
    return std::pair(matmul, broadcast);
  }
  return std::nullopt;
}

/// The activation applied to `x` that the epilogue can take over: the op
/// whose result it becomes (for SiLU, the tg.mul of x * sigmoid(x)).
struct EpilogueActivation {
  Operation *op = nullptr;
  tg::Activation kind = tg::Activation::none;
  Operation *gate = nullptr; ///< SiLU's sigmoid
};

/// Whether `mul` is x * sigmoid(x), in either order.
static bool isSilu(tg::MulOp mul, Value x, tg::SigmoidOp sigmoid) {
  Value gate = sigmoid.getResult();
  return (mul.getLhs() == x && mul.getRhs() == gate) ||
         (mul.getLhs() == gate && mul.getRhs() == x);
}

static EpilogueActivation activationOf(Value x) {
  for (Operation *user : x.getUsers()) {
    if (llvm::isa<tg::ReluOp>(user))
      return {user, tg::Activation::relu};
    if (llvm::isa<tg::GeluOp>(user))
      return {user, tg::Activation::gelu};
    if (llvm::isa<tg::GeluTanhOp>(user))
      return {user, tg::Activation::gelu_tanh};
    if (llvm::isa<tg::TanhOp>(user))
      return {user, tg::Activation::tanh};
    auto sigmoid = llvm::dyn_cast<tg::SigmoidOp>(user);
    if (!sigmoid)
      continue;
    for (Operation *gated : sigmoid->getUsers())
      if (auto mul = llvm::dyn_cast<tg::MulOp>(gated);
          mul && isSilu(mul, x, sigmoid))
        return {mul, tg::Activation::silu, sigmoid};
    return {user, tg::Activation::sigmoid};
  }
  return {};
}

/// Whether `x` is read by anything but the activation (its op and, for
/// SiLU, the sigmoid): the backward of GELU and SiLU reads it, so the
/// fused op must write it as well.
static bool hasOtherUses(Value x, EpilogueActivation activation) {
  for (OpOperand &use : x.getUses()) {
    Operation *user = use.getOwner();
    if (user == activation.op)
      continue;
    if (user == activation.gate &&
        llvm::all_of(user->getUsers(),
                     [&](Operation *u) { return u == activation.op; }))
      continue;
    return true;
  }
  return false;
}

/// Whether `op`'s results are read only after `point` (in its block).
static bool readOnlyAfter(Operation *op, Operation *point) {
  for (Operation *user : op->getUsers()) {
    Operation *reader = point->getBlock()->findAncestorOpInBlock(*user);
    if (!reader || !point->isBeforeInBlock(reader))
      return false;
  }
  return true;
}

/// A bias gradient and its weight gradient's GEMM, both reading the output
/// gradient, become one tg.weight_bias_grad (a GPU's GEMM adds up the bias
/// gradient as it reads). At the later of the two, where the operands of
/// both exist, if the earlier one's result is read only after it.
static bool fuseBiasGradient(IRRewriter &rewriter, tg::ReduceSumOp sum) {
  tg::MatmulOp matmul = tg::weightGradientOf(sum);
  if (!matmul)
    return false;
  bool sumFirst = sum->isBeforeInBlock(matmul);
  Operation *later = sumFirst ? matmul.getOperation() : sum.getOperation();
  Operation *earlier = sumFirst ? sum.getOperation() : matmul.getOperation();
  if (!readOnlyAfter(earlier, later))
    return false;
  rewriter.setInsertionPoint(later);
  auto fused = rewriter.create<tg::WeightBiasGradOp>(
      rewriter.getFusedLoc({matmul.getLoc(), sum.getLoc()}), matmul.getType(),
      sum.getType(), matmul.getLhs(), matmul.getRhs());
  rewriter.replaceOp(matmul, fused.getWeightGrad());
  rewriter.replaceOp(sum, fused.getBiasGrad());
  return true;
}

struct TgFuseMatmulEpiloguePass
    : impl::TgFuseMatmulEpilogueBase<TgFuseMatmulEpiloguePass> {
  using TgFuseMatmulEpilogueBase::TgFuseMatmulEpilogueBase;

  void runOnOperation() override {
    SmallVector<tg::AddOp> adds;
    getOperation().walk([&](tg::AddOp add) { adds.push_back(add); });
    IRRewriter rewriter(&getContext());
    unsigned fused = 0, activated = 0, kept = 0;
    for (tg::AddOp add : adds) {
      auto match = matchBiasAdd(add);
      if (!match)
        continue;
      auto [matmul, broadcast] = *match;
      Value sum = add.getResult();
      EpilogueActivation activation = activationOf(sum);
      bool keep = activation.op && hasOtherUses(sum, activation);
      SmallVector<Location> locs = {matmul.getLoc(), add.getLoc()};
      if (activation.op)
        locs.push_back(activation.op->getLoc());
      SmallVector<Type> types = {add.getType()};
      if (keep)
        types.push_back(add.getType());
      // At the add: it dominates every use of the sum and of the activation.
      rewriter.setInsertionPoint(add);
      auto linear = rewriter.create<tg::LinearOp>(
          rewriter.getFusedLoc(locs), types, matmul.getLhs(), matmul.getRhs(),
          broadcast.getInput(), activation.kind);
      if (activation.op) {
        rewriter.replaceOp(activation.op, linear.getResult());
        // SiLU's sigmoid stays where the backward reads it, on the kept sum.
        if (activation.gate && activation.gate->use_empty())
          rewriter.eraseOp(activation.gate);
      }
      // What still reads the sum (nothing once an activation took it all).
      rewriter.replaceOp(add, keep ? linear.getPreActivation()
                                   : linear.getResult());
      rewriter.eraseOp(matmul);
      if (broadcast->use_empty())
        rewriter.eraseOp(broadcast);
      ++fused;
      activated += bool(activation.op);
      kept += keep;
    }
    // The backward's side: the bias gradients into their weight gradients'
    // GEMMs.
    SmallVector<tg::ReduceSumOp> sums;
    getOperation().walk([&](tg::ReduceSumOp sum) { sums.push_back(sum); });
    unsigned biasGradients = 0;
    for (tg::ReduceSumOp sum : sums)
      biasGradients += fuseBiasGradient(rewriter, sum);
    numFused = fused;
    numActivated = activated;
    numKept = kept;
    numBiasGradients = biasGradients;
    if (report)
      getOperation().emitRemark()
          << "tg-fuse-matmul-epilogue: folded " << fused
          << " bias adds into their GEMM, " << activated
          << " with an activation, " << kept << " keeping its input; "
          << biasGradients << " bias gradients into their weight gradient";
  }
};

} // namespace
} // namespace tgc
