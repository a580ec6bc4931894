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
