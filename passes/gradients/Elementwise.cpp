//===- Elementwise.cpp - gradients of the elementwise ops -----------------===//
//
// The backward of the arithmetic and activation ops, each itself a few
// elementwise tg ops, so that tg-fuse-elementwise can fuse it like the
// forward.
//
//===----------------------------------------------------------------------===//
#include "passes/gradients/GradientModel.h"

#include "ir/TgOps.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace tgc::gradients {
namespace {

LogicalResult addRule(GradientBuilder &r, tg::AddOp) {
  r.set(0, r.dy());
  r.set(1, r.dy());
  return success();
}

LogicalResult subRule(GradientBuilder &r, tg::SubOp) {
  Value dy = r.dy();
  r.set(0, dy);
  if (r.wants(1))
    r.set(1, r.make<tg::NegOp>(dy));
  return success();
}

LogicalResult mulRule(GradientBuilder &r, tg::MulOp mul) {
  Value dy = r.dy();
  if (r.wants(0))
    r.set(0, r.make<tg::MulOp>(dy, mul.getRhs()));
  if (r.wants(1))
    r.set(1, r.make<tg::MulOp>(dy, mul.getLhs()));
  return success();
}

LogicalResult divRule(GradientBuilder &r, tg::DivOp div) {
  // d(a/b) = da / b - (a/b) db / b
  Value dyOverRhs = r.make<tg::DivOp>(r.dy(), div.getRhs());
  r.set(0, dyOverRhs);
  if (r.wants(1))
    r.set(1,
          r.make<tg::NegOp>(r.make<tg::MulOp>(dyOverRhs, div->getResult(0))));
  return success();
}

/// dy split between lhs and rhs by the weight of lhs: 1 where it wins
/// (`lhsWins`, a 0/1 mask), 1/2 where they tie (as torch.maximum).
void shareBetweenOperands(GradientBuilder &r, Value lhsWins, Value lhs,
                          Value rhs) {
  Value tie = r.make<tg::EqualOp>(lhs, rhs);
  Value weight = r.make<tg::AddOp>(lhsWins, r.scale(tie, 0.5));
  Value toLhs = r.make<tg::MulOp>(r.dy(), weight);
  if (r.wants(0))
    r.set(0, toLhs);
  if (r.wants(1))
    r.set(1, r.make<tg::SubOp>(r.dy(), toLhs));
}

LogicalResult maximumRule(GradientBuilder &r, tg::MaximumOp op) {
  Value a = op.getLhs(), b = op.getRhs();
  shareBetweenOperands(r, r.make<tg::GreaterOp>(a, b), a, b);
  return success();
}

LogicalResult minimumRule(GradientBuilder &r, tg::MinimumOp op) {
  Value a = op.getLhs(), b = op.getRhs();
  shareBetweenOperands(r, r.make<tg::LessOp>(a, b), a, b);
  return success();
}

/// dy goes to the operand chosen at each element; the condition gets none
/// (it is usually a comparison, which blocks gradients anyway).
LogicalResult whereRule(GradientBuilder &r, tg::WhereOp op) {
  Value zeros = r.make<tg::ConstantOp>(
      DenseElementsAttr::get(tensorOf(r.dy()), 0.0f));
  Value c = op.getCondition();
  if (r.wants(1))
    r.set(1, r.make<tg::WhereOp>(c, r.dy(), zeros));
  if (r.wants(2))
    r.set(2, r.make<tg::WhereOp>(c, zeros, r.dy()));
  return success();
}

/// p x^(p-1): x^0 is constant, x^1 passes dy.
LogicalResult powRule(GradientBuilder &r, tg::PowOp op) {
  double p = op.getExponent().convertToFloat();
  Value x = op.getInput();
  if (p == 0.0) {
    r.set(0, r.make<tg::ConstantOp>(DenseElementsAttr::get(tensorOf(x), 0.0f)));
    return success();
  }
  if (p == 1.0) {
    r.set(0, r.dy());
    return success();
  }
  Value derivative =
      p == 2.0 ? x
               : r.make<tg::PowOp>(x, r.b.getF32FloatAttr(float(p - 1.0)));
  r.set(0, r.scale(r.make<tg::MulOp>(r.dy(), derivative), p));
  return success();
}

LogicalResult negRule(GradientBuilder &r, tg::NegOp) {
  r.set(0, r.make<tg::NegOp>(r.dy()));
  return success();
}

LogicalResult expRule(GradientBuilder &r, tg::ExpOp op) {
  r.set(0, r.make<tg::MulOp>(r.dy(), op->getResult(0)));
  return success();
}

LogicalResult logRule(GradientBuilder &r, tg::LogOp log) {
  r.set(0, r.make<tg::DivOp>(r.dy(), log.getInput()));
  return success();
}

LogicalResult sqrtRule(GradientBuilder &r, tg::SqrtOp op) { // 1 / (2 sqrt x)
  r.set(0, r.scale(r.make<tg::DivOp>(r.dy(), op->getResult(0)), 0.5));
  return success();
}

// -x^(-3/2) / 2 = -y^3 / 2
LogicalResult rsqrtRule(GradientBuilder &r, tg::RsqrtOp op) {
  Value y = op->getResult(0);
  Value cube = r.make<tg::MulOp>(r.make<tg::MulOp>(y, y), y);
  r.set(0, r.scale(r.make<tg::MulOp>(r.dy(), cube), -0.5));
  return success();
}

// 1 - y^2, as dy - (dy y) y: no constant operand, and the input need not
// be kept.
LogicalResult tanhRule(GradientBuilder &r, tg::TanhOp op) {
  Value y = op->getResult(0);
  Value dyY = r.make<tg::MulOp>(r.dy(), y);
  r.set(0, r.make<tg::SubOp>(r.dy(), r.make<tg::MulOp>(dyY, y)));
  return success();
}

// y (1 - y), as dy y - (dy y) y: from the result, with no constant.
LogicalResult sigmoidRule(GradientBuilder &r, tg::SigmoidOp op) {
  Value y = op->getResult(0);
  Value dyY = r.make<tg::MulOp>(r.dy(), y);
  r.set(0, r.make<tg::SubOp>(dyY, r.make<tg::MulOp>(dyY, y)));
  return success();
}

// sign(x): dy where x > 0, minus dy where -x > 0 (0 at 0).
LogicalResult absRule(GradientBuilder &r, tg::AbsOp op) {
  Value x = op.getInput();
  r.set(0, r.make<tg::SubOp>(r.make<tg::ReluGradOp>(r.dy(), x),
                             r.make<tg::ReluGradOp>(r.dy(),
                                                    r.make<tg::NegOp>(x))));
  return success();
}

LogicalResult geluRule(GradientBuilder &r, tg::GeluOp op) {
  r.set(0, r.make<tg::GeluGradOp>(r.dy(), op.getInput()));
  return success();
}

LogicalResult geluTanhRule(GradientBuilder &r, tg::GeluTanhOp op) {
  r.set(0, r.make<tg::GeluTanhGradOp>(r.dy(), op.getInput()));
  return success();
}

LogicalResult reluRule(GradientBuilder &r, tg::ReluOp relu) {
  // The output is positive where the input is, and keeping it (not
  // the input) lets the bias add fuse into the GEMM (tg.linear).
  r.set(0, r.make<tg::ReluGradOp>(r.dy(), relu.getResult()));
  return success();
}

LogicalResult scaleRule(GradientBuilder &r, tg::ScaleOp scale) {
  r.set(0, r.make<tg::ScaleOp>(r.dy(), scale.getFactorAttr()));
  return success();
}

} // namespace

void attachElementwiseGradients(MLIRContext *context) {
  attachGradientRule<tg::AddOp, addRule>(context);
  attachGradientRule<tg::SubOp, subRule>(context);
  attachGradientRule<tg::MulOp, mulRule>(context);
  attachGradientRule<tg::DivOp, divRule>(context);
  attachGradientRule<tg::MaximumOp, maximumRule>(context);
  attachGradientRule<tg::MinimumOp, minimumRule>(context);
  attachGradientRule<tg::WhereOp, whereRule>(context);
  attachGradientRule<tg::PowOp, powRule>(context);
  // Comparisons are piecewise constant (BlocksGradient).
  attachGradientRule<tg::LessOp, blockedGradient>(context);
  attachGradientRule<tg::LessEqualOp, blockedGradient>(context);
  attachGradientRule<tg::GreaterOp, blockedGradient>(context);
  attachGradientRule<tg::GreaterEqualOp, blockedGradient>(context);
  attachGradientRule<tg::EqualOp, blockedGradient>(context);
  attachGradientRule<tg::NotEqualOp, blockedGradient>(context);
  attachGradientRule<tg::NegOp, negRule>(context);
  attachGradientRule<tg::ExpOp, expRule>(context);
  attachGradientRule<tg::LogOp, logRule>(context);
  attachGradientRule<tg::SqrtOp, sqrtRule>(context);
  attachGradientRule<tg::RsqrtOp, rsqrtRule>(context);
  attachGradientRule<tg::TanhOp, tanhRule>(context);
  attachGradientRule<tg::SigmoidOp, sigmoidRule>(context);
  attachGradientRule<tg::AbsOp, absRule>(context);
  attachGradientRule<tg::GeluOp, geluRule>(context);
  attachGradientRule<tg::GeluTanhOp, geluTanhRule>(context);
  attachGradientRule<tg::ReluOp, reluRule>(context);
  attachGradientRule<tg::ScaleOp, scaleRule>(context);
}

} // namespace tgc::gradients
