//===- Autodiff.cpp - tg-autodiff: reverse-mode gradients -----------------===//
//
// Three sweeps over the loss function's single block:
//  1. forward: which values vary with a trainable variable;
//  2. backward: which of those the loss depends on (the active values);
//  3. reverse, emitting each active op's gradient rule (its
//     GradientOpInterface model, passes/gradients/)
//     before the return and summing the contributions of multiple uses.
// Ops off the active path are never asked for a rule, so masks, position
// tables and token counts need none. A load after a tg.store to the same
// variable reads the stored value: its gradient goes to that value (and not
// to the variable, trainable or not).
//
//===----------------------------------------------------------------------===//
#include "passes/gradients/Gradients.h"
#include "passes/Passes.h"

#include "ir/TgOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

namespace tgc {

#define GEN_PASS_DEF_TGAUTODIFF
#include "passes/Passes.h.inc"

using namespace mlir;

namespace {

/// A value that can vary with a parameter: an f32 tensor, or a bf16 one
/// (whose gradient tg-autodiff refuses to take: see sweepBackward).
bool isFloatTensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && (type.getElementType().isF32() ||
                  type.getElementType().isBF16());
}

/// The gradients accumulated so far, one per value.
class GradientMap {
public:
  explicit GradientMap(OpBuilder &b) : b(b) {}

  Value get(Value v) const { return grads.lookup(v); }

  /// Adds `grad` to v's gradient: a value used twice gets the sum.
  void accumulate(Value v, Value grad, Location loc) {
    Value &slot = grads[v];
    slot = slot ? b.create<tg::AddOp>(loc, slot, grad).getResult() : grad;
  }

private:
  OpBuilder &b;
  DenseMap<Value, Value> grads;
};

class Differentiator {
public:
  Differentiator(ModuleOp module, func::FuncOp function)
      : module(module), function(function),
        terminator(function.getBody().front().getTerminator()),
        b(terminator) {}

  LogicalResult run();

private:
  bool isTrainableLoad(Operation *op);
  LogicalResult findActiveValues(Value loss);
  LogicalResult sweepBackward(Value loss);
  void appendGradientResults();

  ModuleOp module;
  func::FuncOp function;
  Operation *terminator;
  OpBuilder b;
  DenseSet<Value> varied, active;
  /// Loads that read what a tg.store of the function wrote: the value
  /// stored, to which their gradient goes.
  DenseMap<Value, Value> storedValueOf;
  /// Gradient of each trainable variable, from all its loads.
  llvm::MapVector<StringRef, Value> variableGrads;
};

bool Differentiator::isTrainableLoad(Operation *op) {
  auto load = dyn_cast<tg::LoadOp>(op);
  if (!load || storedValueOf.contains(load.getResult()))
    return false;
  auto variable = module.lookupSymbol<tg::VariableOp>(load.getVariable());
  return variable && variable.getTrainable();
}

LogicalResult Differentiator::findActiveValues(Value loss) {
  Block &body = function.getBody().front();
  // Per variable, the value its last tg.store wrote, or the tg.store_slice
  // that last wrote part of it.
  DenseMap<StringRef, Value> stored;
  DenseMap<StringRef, Operation *> partlyStored;
  for (Operation &op : body.without_terminator()) {
    if (auto store = dyn_cast<tg::StoreOp>(op)) {
      stored[store.getVariable()] = store.getValue();
      partlyStored.erase(store.getVariable());
    } else if (auto slice = dyn_cast<tg::StoreSliceOp>(op)) {
      partlyStored[slice.getVariable()] = slice;
    } else if (auto load = dyn_cast<tg::LoadOp>(op)) {
      if (Operation *slice = partlyStored.lookup(load.getVariable())) {
        bool trainable = false;
        if (auto variable =
                module.lookupSymbol<tg::VariableOp>(load.getVariable()))
          trainable = variable.getTrainable();
        if (trainable || varied.contains(slice->getOperand(0)) ||
            varied.contains(stored.lookup(load.getVariable()))) {
          InFlightDiagnostic error =
              load.emitError()
              << "tg-autodiff: @" << function.getName() << " loads @"
              << load.getVariable()
              << " after a tg.store_slice wrote part of it, and the "
                 "gradient cannot be split between the slice and the rest: "
                 "differentiate the values, not the variable (load it "
                 "before the write)";
          error.attachNote(slice->getLoc()) << "the partial write";
          return failure();
        }
      } else if (Value value = stored.lookup(load.getVariable())) {
        storedValueOf[load.getResult()] = value;
        if (varied.contains(value))
          varied.insert(load.getResult());
        continue;
      }
    }
    // The result of a BlocksGradient op (tg.stop_gradient, a comparison)
    // is held fixed: nothing behind it is differentiated through it, and no
    // gradient is computed for it.
    bool fromVaried = isTrainableLoad(&op) ||
                      (!op.hasTrait<tg::traits::BlocksGradient>() &&
                       llvm::any_of(op.getOperands(), [&](Value v) {
                         return varied.contains(v);
                       }));
    if (fromVaried)
      for (Value result : op.getResults())
        if (isFloatTensor(result))
          varied.insert(result);
  }
  if (varied.contains(loss))
    active.insert(loss);
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (llvm::none_of(op.getResults(),
                      [&](Value v) { return active.contains(v); }))
      continue;
    for (Value operand : op.getOperands())
      if (varied.contains(operand))
        active.insert(operand);
    // A load of a stored value passes its gradient to that value.
    if (auto load = dyn_cast<tg::LoadOp>(op))
      if (Value value = storedValueOf.lookup(load.getResult());
          value && varied.contains(value))
        active.insert(value);
  }
  return success();
}

LogicalResult Differentiator::sweepBackward(Value loss) {
  Block &body = function.getBody().front();
  auto scalar = RankedTensorType::get({}, b.getF32Type());
  Value one = b.create<tg::ConstantOp>(
      terminator->getLoc(), DenseElementsAttr::get(scalar, 1.0f));
  GradientMap map(b);
  map.accumulate(loss, one, terminator->getLoc());

  for (Operation &op : llvm::reverse(body.without_terminator())) {
    SmallVector<Value> resultGrads;
    for (Value result : op.getResults())
      resultGrads.push_back(active.contains(result) ? map.get(result) : Value());
    if (llvm::all_of(resultGrads, [](Value g) { return !g; }))
      continue;
    if (auto load = dyn_cast<tg::LoadOp>(op)) {
      if (Value value = storedValueOf.lookup(load.getResult())) {
        map.accumulate(value, resultGrads[0], op.getLoc());
        continue;
      }
      Value &sum = variableGrads[load.getVariable()];
      sum = sum ? b.create<tg::AddOp>(op.getLoc(), sum, resultGrads[0])
                      .getResult()
                : resultGrads[0];
      continue;
    }
    GradientRequest request{&op, resultGrads,
                            llvm::SmallBitVector(op.getNumOperands())};
    for (auto [i, operand] : llvm::enumerate(op.getOperands())) {
      if (!active.contains(operand))
        continue;
      // bf16 values exist after tg-mixed-precision, which runs after
      // autodiff; a forward written with them would lose their path's
      // gradient (rounding has no useful derivative).
      if (!cast<RankedTensorType>(operand.getType()).getElementType().isF32())
        return op.emitError()
               << "tg-autodiff: the gradient of @" << function.getName()
               << " reaches operand #" << i << " here, of type "
               << operand.getType()
               << ": gradients are taken in f32 (write the forward in f32; "
                  "--precision=bf16 rounds it after autodiff)";
      request.wanted.set(i);
    }
    FailureOr<SmallVector<Value>> operandGrads = buildOperandGradients(b, request);
    if (failed(operandGrads))
      return failure();
    for (auto [operand, grad] : llvm::zip(op.getOperands(), *operandGrads))
      if (grad)
        map.accumulate(operand, grad, op.getLoc());
  }
  return success();
}

/// One result per trainable variable, in declaration order, tagged with its
/// name; a variable the loss does not reach gets zeros and a warning.
void Differentiator::appendGradientResults() {
  SmallVector<Value> returned(terminator->getOperands());
  for (auto variable : module.getOps<tg::VariableOp>()) {
    if (!variable.getTrainable())
      continue;
    auto type = cast<RankedTensorType>(variable.getType());
    Value grad = variableGrads.lookup(variable.getSymName());
    if (!grad) {
      variable.emitWarning()
          << "trainable variable @" << variable.getSymName() << " does not "
          << "reach the loss of @" << function.getName()
          << "; its gradient is zero";
      grad = b.create<tg::ConstantOp>(variable.getLoc(),
                                      DenseElementsAttr::get(type, 0.0f));
    }
    unsigned index = function.getNumResults();
    function.insertResult(
        index, type,
        b.getDictionaryAttr(b.getNamedAttr(
            kGradientOfAttr, FlatSymbolRefAttr::get(variable.getSymNameAttr()))));
    returned.push_back(grad);
  }
  terminator->setOperands(returned);
}

LogicalResult Differentiator::run() {
  if (function.getNumResults() == 0 ||
      function.getResultTypes()[0] != RankedTensorType::get({}, b.getF32Type()))
    return function.emitError()
           << "the first result of @" << function.getName()
           << " must be the loss, a tensor<f32> scalar";
  for (unsigned i = 0; i < function.getNumResults(); ++i)
    if (function.getResultAttr(i, kGradientOfAttr))
      return function.emitError()
             << "@" << function.getName() << " is already differentiated";
  if (llvm::none_of(module.getOps<tg::VariableOp>(),
                    [](tg::VariableOp v) { return v.getTrainable(); }))
    return function.emitError()
           << "tg-autodiff: @" << function.getName()
           << " has no trainable variable to train (every parameter is "
              "frozen, or there is none)";

  // A call of the function (from itself or another), or a reference to it
  // (func.constant), would no longer match it once gradients are appended
  // to its results.
  if (std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(function, module))
    for (const SymbolTable::SymbolUse &use : *uses)
      return use.getUser()->emitError()
             << "tg-autodiff: @" << function.getName() << " is "
             << (isa<func::CallOp>(use.getUser()) ? "called" : "referenced")
             << " here: the function to differentiate cannot be called or "
                "referenced (by itself or another function)";

  Value loss = terminator->getOperand(0);
  if (failed(findActiveValues(loss)))
    return failure();
  if (failed(sweepBackward(loss)))
    return failure();
  appendGradientResults();
  return success();
}

struct TgAutodiffPass : impl::TgAutodiffBase<TgAutodiffPass> {
  using TgAutodiffBase::TgAutodiffBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto function = module.lookupSymbol<func::FuncOp>(functionName);
    if (!function) {
      module.emitError() << "tg-autodiff: no function @" << functionName
                         << " to differentiate";
      return signalPassFailure();
    }
    if (!function.getBody().hasOneBlock()) {
      function.emitError() << "tg-autodiff: @" << functionName
                           << " must be a function with a body of one block";
      return signalPassFailure();
    }
    if (failed(Differentiator(module, function).run()))
      signalPassFailure();
  }
};

} // namespace
} // namespace tgc
