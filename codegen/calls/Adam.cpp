//===- Adam.cpp - the optimizer and the all-reduce as kernel calls --------===//
//
// Adam updates the state in place: one kernels::AdamTensor entry per
// parameter (adamEntry), one call for all (adamCall); with a gradient norm
// it is the optimizer step, which a data-parallel run takes over. The
// all-reduce of a data-parallel run is codegen/lowering/DataParallel.h's.
//
//===----------------------------------------------------------------------===//
#include "codegen/calls/KernelArgs.h"
#include "codegen/calls/KernelCallModels.h"
#include "codegen/lowering/DataParallel.h"

#include "ir/TgOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace tgc::cpp {

namespace {

/// One kernels::AdamTensor initializer: the parameter and its moments in
/// the state buffer, the gradient in the arena.
std::string adamEntry(KernelArgs &p, const llvm::StringMap<int64_t> &offsets,
                      const std::string &stateBase, StringRef param,
                      StringRef m, StringRef v, Value grad,
                      bool decays = false) {
  auto state = [&](StringRef name) {
    return stateBase + " + " + std::to_string(offsets.lookup(name));
  };
  return "      {" + state(param) + ", " + state(m) + ", " + state(v) + ", " +
         p(grad) + ", " + std::to_string(numElements(grad)) +
         (decays ? ", true" : "") + "}, // @" +
         commentText(param) + "\n";
}

/// The plain kernels::adamUpdate call over `entries` (without a gradient
/// norm: no clipping, no accumulation).
std::string adamCall(KernelArgs &p, EmitContext &context, std::string entries,
                     int count, Value lr, Value step, llvm::APFloat beta1,
                     llvm::APFloat beta2, llvm::APFloat epsilon) {
  return "  const kernels::AdamTensor tensors[] = {\n" + entries +
         "  };\n  kernels::adamUpdate(tensors, " + std::to_string(count) +
         ", " + context.target().scalarArgument(p(lr)) + ", " +
         context.target().scalarArgument(p(step)) + ", " +
         floatLiteral(beta1.convertToFloat()) + ", " +
         floatLiteral(beta2.convertToFloat()) + ", " +
         floatLiteral(epsilon.convertToFloat()) + ");\n";
}

FailureOr<std::string> emitAdamUpdate(KernelArgs &p, EmitContext &context,
                                      tg::AdamUpdateOp o) {
  return adamCall(
      p, context,
      adamEntry(p, context.variableOffsets(), context.target().stateBase(),
                o.getParam(), o.getMoment1(), o.getMoment2(), o.getGrad()),
      1, o.getLr(), o.getStep(), o.getBeta1(), o.getBeta2(), o.getEpsilon());
}

FailureOr<std::string> emitMultiAdamUpdate(KernelArgs &p, EmitContext &context,
                                           tg::MultiAdamUpdateOp o) {
  std::string entries;
  auto name = [](Attribute ref) {
    return llvm::cast<FlatSymbolRefAttr>(ref).getValue();
  };
  for (auto [index, entry] : llvm::enumerate(llvm::zip(
           o.getParams(), o.getMoments1(), o.getMoments2(), o.getGrads()))) {
    auto [param, m, v, grad] = entry;
    entries +=
        adamEntry(p, context.variableOffsets(), context.target().stateBase(),
                  name(param), name(m), name(v), grad,
                  o.getDecays() && (*o.getDecays())[index]);
  }
  int count = static_cast<int>(o.getGrads().size());
  if (!o.getGradNorm())
    return adamCall(p, context, entries, count, o.getLr(), o.getStep(),
                    o.getBeta1(), o.getBeta2(), o.getEpsilon());
  // The optimizer step: its controls are host values on both targets, the
  // accumulator is the program's (in the target's state frame).
  const ProgramTarget &target = context.target();
  std::string control = "{*" + p(o.getWeight()) + ", *" + p(o.getPhase()) +
                        ", *" + p(o.getClip()) + ", " + target.stateFrame() +
                        ".gradAccumulator" +
                        (o.getWeightDecay() ? ", *" + p(o.getWeightDecay())
                                            : std::string()) +
                        "}";
  // Run-time betas and epsilon are host inputs too; else the literals.
  auto hyperOf = [&](Value value, const APFloat &literal) {
    return value ? "*" + p(value) : floatLiteral(literal.convertToFloat());
  };
  std::string hyper = hyperOf(o.getBeta1Value(), o.getBeta1()) + ", " +
                      hyperOf(o.getBeta2Value(), o.getBeta2()) + ", " +
                      hyperOf(o.getEpsilonValue(), o.getEpsilon());
  std::string tensors =
      "  const kernels::AdamTensor tensors[] = {\n" + entries + "  };\n";
  std::string norm = p(o.getGradNorm());
  // The step's loss, its function's first result.
  auto function = o->getParentOfType<func::FuncOp>();
  auto ret = llvm::cast<func::ReturnOp>(function.getBody().front().back());
  std::string loss =
      ret.getNumOperands() ? p(ret.getOperand(0)) : std::string("nullptr");
  return tensors + target.optimizerStep(
                       "tensors, " + std::to_string(count) + ", " + control,
                       target.scalarArgument(p(o.getLr())),
                       target.scalarArgument(p(o.getStep())), norm, hyper,
                       loss);
}

FailureOr<std::string> emitAllReduce(KernelArgs &, EmitContext &,
                                     tg::AllReduceOp o) {
  return allReduceCalls(o);
}

} // namespace

void attachAdamCalls(MLIRContext &context) {
  tg::AdamUpdateOp::attachInterface<
      KernelCallModel<tg::AdamUpdateOp, emitAdamUpdate>>(context);
  tg::MultiAdamUpdateOp::attachInterface<
      KernelCallModel<tg::MultiAdamUpdateOp, emitMultiAdamUpdate>>(context);
  tg::AllReduceOp::attachInterface<
      KernelCallModel<tg::AllReduceOp, emitAllReduce>>(context);
}

} // namespace tgc::cpp
