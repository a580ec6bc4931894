//===- CppElementwise.cpp - elementwise ops and groups as one loop -------===//
//
// A single elementwise op and a tg.fused_elementwise group both become one
// loop over the elements: inputs are loaded into locals, each op is one
// scalar expression, results are stored last (so a result may share bytes
// with an input: each element is read before it is written). bf16 inputs
// (tg-mixed-precision's copies) are widened as they load; a bf16 result (a
// tg.to_bf16 in a group, tg-fold-bf16-roundings) is stored rounded. On the CPU the
// loop is `omp parallel for simd` above a size where threads pay off; on
// CUDA it is a kernel of one thread per element. Dropout sites are built on
// the host from the key and passed by value; a CPU loop with dropout runs
// in blocks of 256 elements whose factors are filled first, four lanes per
// Philox call and many calls at once (kernels::dropoutFactors), instead of
// one call per element.
//
//===----------------------------------------------------------------------===//
#include "codegen/cpu/CppDataParallel.h"
#include "codegen/cpu/EmitContext.h"

#include "ir/TgOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace tgc::cpp {

namespace {

/// Element counts below this run on one thread (thread start-up costs
/// more than the loop).
constexpr int64_t kParallelThreshold = 1 << 15;
/// Elements per block of a CPU loop with dropout sites: the factors of a
/// block live on the stack (1 KiB a site).
constexpr int64_t kDropoutBlock = 256;

class LoopWriter {
public:
  LoopWriter(EmitContext &context, raw_ostream &os)
      : context(context), os(os) {}

  bool isCuda() const { return context.isCuda(); }

  /// Declares the pointer `name` to `value` before the loop.
  LogicalResult declareInput(Value value, Value local) {
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
      return success();
    }
    parameters.push_back(std::string("const ") + type + " *" + name);
    arguments.push_back(name);
    loads += "    const float " + local_(local) + " = " +
             (element.isBF16() ? "runtime::widen(" + name + "[i])"
                               : name + "[i]") +
             ";\n";
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
    parameters.push_back(std::string(type) + " *" + name);
    arguments.push_back(name);
    stores += "    " + name + "[i] = " +
              (bf16 ? "runtime::roundToBf16(" + local_(local) + ")"
                    : local_(local)) +
              ";\n";
    return success();
  }

  /// The scalar expression of one elementwise op, as a local: a call of its
  /// formula in runtime/kernels/Elementwise.h.
  LogicalResult addOp(Operation *op) {
    std::vector<std::string> args;
    for (Value operand : op->getOperands())
      if (!llvm::cast<RankedTensorType>(operand.getType())
               .getElementType()
               .isSignlessInteger(32)) // not a dropout key
        args.push_back(local_(operand));
    FailureOr<std::string> expr = formulaCall(op, args);
    if (failed(expr))
      return failure();
    body += "    const float " + local_(op->getResult(0)) + " = " + *expr +
            "; // " + op->getName().getStringRef().str() + "\n";
    return success();
  }

  /// Writes the loop (CPU) or the kernel to `kernels` and its launch (CUDA).
  void finish(int64_t count, StringRef name, raw_ostream &kernels) {
    os << "  const int64_t n = " << count << ";\n";
    if (!isCuda() && !cpuDropSites.empty()) {
      // Blocks of kDropoutBlock elements: each block's factors first.
      os << "#pragma omp parallel for if (n >= " << kParallelThreshold
         << ")\n"
         << "  for (int64_t start = 0; start < n; start += " << kDropoutBlock
         << ") {\n"
         << "    const int64_t end = n - start < " << kDropoutBlock
         << " ? n : start + " << kDropoutBlock << ";\n";
      for (const std::string &site : cpuDropSites)
        os << "    float factors_" << site << "[" << kDropoutBlock << "];\n"
           << "    kernels::dropoutFactors(" << site
           << ", uint64_t(start), end - start, factors_" << site << ");\n";
      // The loop body two spaces deeper.
      std::string inner = loads + body + stores;
      for (size_t at = 0; at < inner.size(); at = inner.find('\n', at) + 1)
        inner.insert(at, "  ");
      os << "#pragma omp simd\n"
         << "    for (int64_t i = start; i < end; ++i) {\n"
         << inner << "    }\n  }\n";
      return;
    }
    if (!isCuda()) {
      os << "#pragma omp parallel for simd if (n >= " << kParallelThreshold
         << ")\n";
      os << "  for (int64_t i = 0; i < n; ++i) {\n"
         << loads << body << stores << "  }\n";
      return;
    }
    parameters.push_back("int64_t n");
    arguments.push_back("n");
    kernels << "__global__ void " << name << "_kernel("
            << llvm::join(parameters, ", ") << ") {\n"
            << "  const int64_t i = blockIdx.x * int64_t(blockDim.x) + "
               "threadIdx.x;\n"
            << "  if (i < n) {\n"
            << loads << body << stores << "  }\n}\n\n";
    os << "  " << name << "_kernel<<<(n + 255) / 256, 256, 0, "
       << "kernels::stream()>>>(" << llvm::join(arguments, ", ") << ");\n"
       << "  TGC_CUDA_CHECK(cudaGetLastError());\n";
  }

private:
  /// The factor expression of a dropout site, declaring the site (built on
  /// the host from its key) before the loop.
  FailureOr<std::string> dropoutFactor(Operation *op, Value key,
                                       llvm::APFloat rate, uint64_t opId) {
    auto it = keys.find(key);
    if (it == keys.end())
      return failure();
    std::string name = "drop" + std::to_string(drops++);
    os << "  const kernels::Dropout " << name << "{uint32_t(" << it->second
       << "[0]), uint32_t(" << it->second << "[1]), " << opId << "u, "
       << floatLiteral(rate.convertToFloat()) << ", "
       << dropoutIndexOffset(op, numElements(op->getResult(0))) << "};\n";
    parameters.push_back("kernels::Dropout " + name);
    arguments.push_back(name);
    if (isCuda())
      return name + ".factor(uint64_t(i))";
    // The CPU loop fills each block's factors first (vectorized Philox).
    cpuDropSites.push_back(name);
    return "factors_" + name + "[i - start]";
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
    FailureOr<std::string> factor = failure();
    if (auto drop = llvm::dyn_cast<tg::DropoutOp>(op))
      factor = dropoutFactor(op, drop.getKey(), drop.getRate(), drop.getOpId());
    else if (auto drop = llvm::dyn_cast<tg::DropoutGradOp>(op))
      factor = dropoutFactor(op, drop.getKey(), drop.getRate(), drop.getOpId());
    else
      return op->emitOpError() << "has no elementwise C++ form";
    if (failed(factor))
      return failure();
    return call("dropout", {args[0], *factor});
  }

  std::string local_(Value value) {
    auto [it, inserted] =
        locals.try_emplace(value, "v" + std::to_string(locals.size()));
    return it->second;
  }

  EmitContext &context;
  raw_ostream &os;
  llvm::DenseMap<Value, std::string> locals, keys;
  std::string loads, body, stores;
  /// The CUDA kernel's parameters and the launch's arguments.
  SmallVector<std::string> parameters, arguments;
  int inputs = 0, outputs = 0, drops = 0;
  /// The CPU loop's dropout sites (their factors are filled per block).
  std::vector<std::string> cpuDropSites;
};

} // namespace

bool emitsOp(OperationName name) {
  std::optional<RegisteredOperationName> op = name.getRegisteredInfo();
  if (!op)
    return false;
  TypeID id = op->getTypeID();
  // Written by the function writer (CppEmitter.cpp) or at module level.
  if (id == TypeID::get<tg::LoadOp>() || id == TypeID::get<tg::ReshapeOp>() ||
      id == TypeID::get<tg::ConstantOp>() ||
      id == TypeID::get<tg::VariableOp>() || id == TypeID::get<tg::YieldOp>() ||
      id == TypeID::get<func::ReturnOp>())
    return true;
  // Loops of their own: ElementwiseOps.def, scale, dropout, groups.
#define TGC_ELEMENTWISE(OpClass, formula, arity)                               \
  if (id == TypeID::get<tg::OpClass>())                                        \
    return true;
#include "codegen/ElementwiseOps.def"
  if (id == TypeID::get<tg::ScaleOp>() || id == TypeID::get<tg::DropoutOp>() ||
      id == TypeID::get<tg::DropoutGradOp>() ||
      id == TypeID::get<tg::FusedElementwiseOp>())
    return true;
  return hasKernelCall(id);
}

LogicalResult emitElementwise(Operation *op, StringRef name,
                              EmitContext &context, raw_ostream &os,
                              raw_ostream &kernels) {
  LoopWriter loop(context, os);
  if (auto group = llvm::dyn_cast<tg::FusedElementwiseOp>(op)) {
    Block &body = group.getBody().front();
    for (auto [input, arg] : llvm::zip(group.getInputs(), body.getArguments()))
      if (failed(loop.declareInput(input, arg)))
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
  for (Value operand : op->getOperands())
    if (seen.insert(operand).second &&
        failed(loop.declareInput(operand, operand)))
      return failure();
  if (failed(loop.declareOutput(op->getResult(0), op->getResult(0))) ||
      failed(loop.addOp(op)))
    return failure();
  loop.finish(numElements(op->getResult(0)), name, kernels);
  return success();
}

} // namespace tgc::cpp
