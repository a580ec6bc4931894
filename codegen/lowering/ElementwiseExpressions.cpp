//===- ElementwiseExpressions.cpp - elementwise ops as one pass ----------===//
//
// A single elementwise op and a tg.fused_elementwise group both become one
// pass over the elements: inputs are loaded into locals, each op is one
// scalar expression, results are stored last (so a result may share bytes
// with an input: each element is read before it is written; the target
// writes the loads and stores). Splat
// constants are literals. bf16 inputs
// (tg-mixed-precision's copies) are widened as they load; a bf16 result (a
// tg.to_bf16 in a group, tg-fold-bf16-roundings) is stored rounded. Dropout
// sites are built on the host from the key (and a run-time rate, a host
// scalar of the step's frame) and passed by value. The target
// writes the pass (ProgramTarget::writeElementwise): an OpenMP loop on the
// CPU, a kernel and its launch on CUDA.
//
//===----------------------------------------------------------------------===//
#include "codegen/lowering/DataParallel.h"
#include "codegen/lowering/EmitContext.h"
#include "codegen/lowering/FileEmitter.h"

#include "ir/TgOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace tgc::cpp {

namespace {

class LoopWriter {
public:
  LoopWriter(EmitContext &context, raw_ostream &os)
      : context(context), os(os) {}

  /// Declares the pointer `name` to `value` before the loop; `isRate`: a
  /// dropout's run-time rate, read on the host like a key.
  LogicalResult declareInput(Value value, Value local, bool isRate = false) {
    if (isRate) {
      auto ptr = context.hostPointer(value);
      if (failed(ptr))
        return failure();
      std::string name = "in" + std::to_string(inputs++);
      os << "  const float *" << name << " = " << *ptr << ";\n";
      rates[local] = name;
      return success();
    }
    if (std::optional<float> splat = splatLiteral(value)) {
      loop.constants += "    const float " + local_(local) + " = " +
                        floatLiteral(*splat) + ";\n";
      return success();
    }
    Type element = llvm::cast<RankedTensorType>(value.getType()).getElementType();
    bool isKey = element.isSignlessInteger(32);
    // A key is read on the host, to build the Dropout sites.
    auto ptr = isKey ? context.hostPointer(value) : context.pointer(value);
    if (failed(ptr))
      return failure();
    std::string name = "in" + std::to_string(inputs++);
    // bf16 inputs (tg-mixed-precision's copies) are widened as they load.
    const char *type = isKey ? "int32_t" : element.isBF16() ? "Bf16" : "float";
    os << "  const " << type << " *" << name << " = " << *ptr << ";\n";
    if (isKey) {
      keys[local] = name;
      if (isStepDropoutKey(value))
        stepKeys.insert(local);
      return success();
    }
    loop.parameters.push_back(std::string("const ") + type + " *" + name);
    loop.arguments.push_back(name);
    loop.inputs.push_back({name, local_(local), element.isBF16()});
    return success();
  }

  LogicalResult declareOutput(Value value, Value local) {
    auto ptr = context.pointer(value);
    if (failed(ptr))
      return failure();
    std::string name = "out" + std::to_string(outputs++);
    // A bf16 result is a tg.to_bf16 in a group: its local holds the
    // rounded value, which converts back exactly.
    bool bf16 = llvm::cast<RankedTensorType>(value.getType())
                    .getElementType()
                    .isBF16();
    const char *type = bf16 ? "Bf16" : "float";
    os << "  " << type << " *" << name << " = " << *ptr << ";\n";
    loop.parameters.push_back(std::string(type) + " *" + name);
    loop.arguments.push_back(name);
    loop.outputs.push_back({name, local_(local), bf16});
    return success();
  }

  /// The scalar expression of one elementwise op, as a local: a call of its
  /// formula in runtime/kernels/Elementwise.h.
  LogicalResult addOp(Operation *op) {
    std::vector<std::string> args;
    for (Value operand : op->getOperands())
      if (!llvm::cast<RankedTensorType>(operand.getType())
               .getElementType()
               .isSignlessInteger(32) && // not a dropout key
          !rates.count(operand))         // nor its run-time rate
        args.push_back(local_(operand));
    FailureOr<std::string> expr = formulaCall(op, args);
    if (failed(expr))
      return failure();
    loop.body += "    const float " + local_(op->getResult(0)) + " = " + *expr +
                 "; // " + op->getName().getStringRef().str() + "\n";
    return success();
  }

  /// Writes the pass over `count` elements: the target's loop, or its
  /// kernel to `kernels` and the launch.
  void finish(int64_t count, StringRef name, raw_ostream &kernels) {
    os << "  const int64_t n = " << count << ";\n";
    loop.count = count;
    context.target().writeElementwise(loop, name, os, kernels);
  }

private:
  /// The factor expression of a dropout site, declaring the site (built on
  /// the host from its key) before the loop.
  FailureOr<std::string> dropoutFactor(Operation *op, Value key,
                                       llvm::APFloat rate, Value runTime,
                                       uint64_t opId) {
    auto it = keys.find(key);
    if (it == keys.end())
      return failure();
    std::string given = floatLiteral(rate.convertToFloat());
    if (runTime) {
      auto rateIt = rates.find(runTime);
      if (rateIt == rates.end())
        return op->emitOpError() << "reads a run-time rate that is not a "
                                    "host input of its loop";
      given = "*" + rateIt->second;
    }
    std::string name = "drop" + std::to_string(drops++);
    os << "  const kernels::Dropout " << name
       << context.target().dropoutSite(
              it->second, stepKeys.contains(key), opId, given,
              dropoutIndexOffset(op, numElements(op->getResult(0))))
       << ";\n";
    loop.parameters.push_back("kernels::Dropout " + name);
    loop.arguments.push_back(name);
    loop.dropoutSites.push_back(name);
    return context.target().dropoutFactor(name);
  }

  /// "tgc::elementwise::<formula>(args...)" for `op`.
  FailureOr<std::string> formulaCall(Operation *op,
                                     ArrayRef<std::string> args) {
    auto call = [&](StringRef formula, ArrayRef<std::string> values) {
      return "tgc::elementwise::" + formula.str() + "(" +
             llvm::join(values, ", ") + ")";
    };
#define TGC_ELEMENTWISE(OpClass, formula, arity)                               \
  if (llvm::isa<tg::OpClass>(op))                                              \
    return call(#formula, args);
#include "codegen/ElementwiseOps.def"
    if (llvm::isa<tg::ToBf16Op>(op)) // the rounded value, as a float
      return "runtime::widen(runtime::roundToBf16(" + args[0] + "))";
    if (auto scale = llvm::dyn_cast<tg::ScaleOp>(op))
      return call("scale",
                  {args[0], floatLiteral(scale.getFactor().convertToFloat())});
    if (auto pow = llvm::dyn_cast<tg::PowOp>(op))
      return call("pow",
                  {args[0], floatLiteral(pow.getExponent().convertToFloat())});
    FailureOr<std::string> factor = failure();
    if (auto drop = llvm::dyn_cast<tg::DropoutOp>(op))
      factor = dropoutFactor(op, drop.getKey(), drop.getRate(),
                             drop.getRateValue(), drop.getOpId());
    else if (auto drop = llvm::dyn_cast<tg::DropoutGradOp>(op))
      factor = dropoutFactor(op, drop.getKey(), drop.getRate(),
                             drop.getRateValue(), drop.getOpId());
    else
      return op->emitOpError() << "has no elementwise C++ form";
    if (failed(factor))
      return failure();
    return call("dropout", {args[0], *factor});
  }

  std::string local_(Value value) {
    auto it = locals.find(value);
    if (it == locals.end()) {
      std::string name = "v";
      name += std::to_string(locals.size());
      it = locals.try_emplace(value, std::move(name)).first;
    }
    return it->second;
  }

  EmitContext &context;
  raw_ostream &os;
  llvm::DenseMap<Value, std::string> locals, keys, rates;
  /// The keys (inside the group) that are the step's dropout_key.
  llvm::DenseSet<Value> stepKeys;
  ElementwiseLoop loop;
  int inputs = 0, outputs = 0, drops = 0;
};

} // namespace

std::string indented(StringRef text, int spaces) {
  std::string out;
  for (StringRef line : llvm::split(text, '\n')) {
    if (line.empty())
      continue;
    out.append(spaces, ' ');
    out.append(line.begin(), line.end());
    out.push_back('\n');
  }
  return out;
}

LogicalResult emitElementwise(Operation *op, StringRef name,
                              EmitContext &context, raw_ostream &os,
                              raw_ostream &kernels) {
  LoopWriter loop(context, os);
  if (auto group = llvm::dyn_cast<tg::FusedElementwiseOp>(op)) {
    Block &body = group.getBody().front();
    for (auto [input, arg] : llvm::zip(group.getInputs(), body.getArguments()))
      if (failed(loop.declareInput(input, arg, tg::isDropoutRateInput(arg))))
        return failure();
    for (auto [result, yielded] :
         llvm::zip(group.getResults(), group.getYield().getValues()))
      if (failed(loop.declareOutput(result, yielded)))
        return failure();
    for (Operation &inner : body.without_terminator())
      if (failed(loop.addOp(&inner)))
        return failure();
    loop.finish(numElements(group.getResult(0)), name, kernels);
    return success();
  }
  // A single op: its operands are the loop's inputs (a value used twice is
  // loaded once).
  llvm::SmallDenseSet<Value, 4> seen;
  Value rate;
  if (auto drop = llvm::dyn_cast<tg::DropoutOp>(op))
    rate = drop.getRateValue();
  else if (auto drop = llvm::dyn_cast<tg::DropoutGradOp>(op))
    rate = drop.getRateValue();
  for (Value operand : op->getOperands())
    if (seen.insert(operand).second &&
        failed(loop.declareInput(operand, operand, rate && operand == rate)))
      return failure();
  if (failed(loop.declareOutput(op->getResult(0), op->getResult(0))) ||
      failed(loop.addOp(op)))
    return failure();
  loop.finish(numElements(op->getResult(0)), name, kernels);
  return success();
}

} // namespace tgc::cpp
