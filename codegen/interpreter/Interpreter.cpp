//===- Interpreter.cpp - state, arguments and the run loop --------------===//
#include "codegen/interpreter/Interpreter.h"
#include "codegen/interpreter/Executor.h"
#include "ir/TgOps.h"
#include "ir/TgVerify.h"
#include "runtime/program/train/Initializers.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"

#include <cmath>
#include <cstdio>
#include <sys/sysinfo.h>

using namespace mlir;

namespace tgc {

// runtime::InitKind mirrors tg::InitKind so that the cast below is exact.
static_assert(static_cast<int>(tg::InitKind::zeros) ==
              static_cast<int>(runtime::InitKind::Zeros));
static_assert(static_cast<int>(tg::InitKind::ones) ==
              static_cast<int>(runtime::InitKind::Ones));
static_assert(static_cast<int>(tg::InitKind::normal) ==
              static_cast<int>(runtime::InitKind::Normal));
static_assert(static_cast<int>(tg::InitKind::uniform) ==
              static_cast<int>(runtime::InitKind::Uniform));
static_assert(static_cast<int>(tg::InitKind::xavier_uniform) ==
              static_cast<int>(runtime::InitKind::XavierUniform));

Interpreter::Interpreter(ModuleOp module, Precision precision)
    : module_(module), precision_(precision) {
  for (auto var : module.getOps<tg::VariableOp>()) {
    auto type = var.getTensorType();
    variables_[var.getSymName()] = HostTensor(
        std::vector<int64_t>(type.getShape().begin(), type.getShape().end()),
        interp::elementTypeOf(type).value_or(ElementType::F32));
  }
}

void Interpreter::initializeVariables(uint32_t seed) {
  for (auto var : module_.getOps<tg::VariableOp>()) {
    HostTensor &t = variables_[var.getSymName()];
    auto kind = static_cast<runtime::InitKind>(var.getInit());
    double scale =
        var.getInitScale() ? var.getInitScale()->convertToDouble() : 0.0;
    std::span<const int64_t> shape(t.shape);
    // The verifier guarantees rank >= 2 for xavier_uniform, so fills succeed.
    if (precision_ == Precision::F32) {
      std::vector<float> values(t.data.size());
      runtime::initializeTensor(values.data(), shape, kind, scale, seed,
                                var.getSymName());
      t.data.assign(values.begin(), values.end());
    } else {
      runtime::initializeTensor(t.data.data(), shape, kind, scale, seed,
                                var.getSymName());
    }
  }
}

HostTensor *Interpreter::variable(llvm::StringRef name) {
  auto it = variables_.find(name);
  return it == variables_.end() ? nullptr : &it->second;
}

static const char *nameOf(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "f32";
  case ElementType::BF16:
    return "bf16";
  case ElementType::I32:
    break;
  }
  return "i32";
}

/// Argument `index` must match the function's argument type exactly.
static LogicalResult checkArgument(func::FuncOp func, unsigned index,
                                   const HostTensor &arg) {
  Type type = func.getArgument(index).getType();
  auto expectedType = interp::elementTypeOf(type);
  auto diag = [&]() {
    return func.emitError()
           << "argument #" << index << " of @" << func.getSymName() << " ";
  };
  if (!expectedType || !llvm::cast<RankedTensorType>(type).hasStaticShape())
    return diag() << "has type " << type
                  << ", which the reference interpreter cannot pass";
  auto shape = llvm::cast<RankedTensorType>(type).getShape();
  if (arg.type != *expectedType || llvm::ArrayRef<int64_t>(arg.shape) != shape)
    return diag() << "must be " << tg::formatShape(shape) << " "
                  << nameOf(*expectedType) << " but the given tensor is "
                  << tg::formatShape(arg.shape) << " " << nameOf(arg.type);
  if (static_cast<int64_t>(arg.data.size()) != arg.numElements())
    return diag() << "has shape " << tg::formatShape(arg.shape) << " ("
                  << arg.numElements() << " elements) but holds "
                  << arg.data.size() << " values";
  if (arg.type == ElementType::I32)
    for (double x : arg.data)
      if (x != std::trunc(x) || x < INT32_MIN || x > INT32_MAX)
        return diag() << "is i32 but holds " << tg::formatNumber(x);
  return success();
}

LogicalResult Interpreter::checkVariables() {
  for (auto var : module_.getOps<tg::VariableOp>()) {
    const HostTensor &t = variables_[var.getSymName()];
    auto shape = var.getTensorType().getShape();
    if (llvm::ArrayRef<int64_t>(t.shape) != shape ||
        static_cast<int64_t>(t.data.size()) != t.numElements())
      return var.emitError() << "variable @" << var.getSymName()
                             << " is declared " << tg::formatShape(shape)
                             << " but holds " << tg::formatShape(t.shape)
                             << " with " << t.data.size() << " values";
  }
  return success();
}

namespace {
/// A run on copies of the state, its arguments bound: a failed run (or one
/// that only looks, firstNonFinite) changes nothing.
struct ScratchRun {
  ScratchRun(const llvm::StringMap<HostTensor> &variables,
             const std::vector<double> &gradientAccumulator,
             Precision precision, func::FuncOp func,
             llvm::ArrayRef<HostTensor> args)
      : state(variables), accumulator(gradientAccumulator),
        executor(state, accumulator, precision) {
    for (auto [index, arg] : llvm::enumerate(args))
      executor.bind(func.getArgument(index), arg);
  }
  llvm::StringMap<HostTensor> state;
  std::vector<double> accumulator;
  interp::Executor executor;
};
} // namespace

FailureOr<std::vector<HostTensor>>
Interpreter::run(llvm::StringRef funcName, llvm::ArrayRef<HostTensor> args) {
  FailureOr<func::FuncOp> func = checkCall(funcName, args);
  if (failed(func))
    return failure();
  ScratchRun scratch(variables_, gradientAccumulator_, precision_, *func, args);
  for (Operation &op : func->getBody().front())
    if (failed(scratch.executor.execute(&op)))
      return failure();
  // Commit element by element: pointers from variable() stay valid.
  for (auto &entry : scratch.state)
    variables_[entry.getKey()].data.swap(entry.getValue().data);
  gradientAccumulator_.swap(scratch.accumulator);
  return std::move(scratch.executor.results);
}

namespace {
/// The ops of `body` that `wanted` depends on, and every op with side
/// effects with what it depends on: the rest cannot change `wanted`.
llvm::DenseSet<Operation *> opsNeededFor(Block &body, Value wanted) {
  llvm::DenseSet<Value> neededValues = {wanted};
  llvm::DenseSet<Operation *> needed;
  for (Operation &op : llvm::reverse(body)) {
    bool producesNeeded = llvm::any_of(op.getResults(), [&](Value result) {
      return neededValues.contains(result);
    });
    if (!producesNeeded && isMemoryEffectFree(&op))
      continue;
    needed.insert(&op);
    // Nested ops may read values of the body (a fused group's region).
    op.walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        neededValues.insert(operand);
    });
  }
  return needed;
}
} // namespace

FailureOr<HostTensor> Interpreter::evaluate(llvm::StringRef funcName,
                                            llvm::ArrayRef<HostTensor> args,
                                            unsigned resultIndex) {
  FailureOr<func::FuncOp> func = checkCall(funcName, args);
  if (failed(func))
    return failure();
  Block &body = func->getBody().front();
  auto ret = llvm::dyn_cast<func::ReturnOp>(body.getTerminator());
  if (!ret || resultIndex >= ret.getNumOperands()) {
    func->emitError() << "@" << funcName << " has no result " << resultIndex;
    return failure();
  }
  Value wanted = ret.getOperand(resultIndex);
  llvm::DenseSet<Operation *> needed = opsNeededFor(body, wanted);
  ScratchRun scratch(variables_, gradientAccumulator_, precision_, *func, args);
  for (Operation &op : body)
    if (&op != ret && needed.contains(&op) &&
        failed(scratch.executor.execute(&op)))
      return failure();
  return scratch.executor.get(wanted);
}

FailureOr<Operation *>
Interpreter::firstNonFinite(llvm::StringRef funcName,
                            llvm::ArrayRef<HostTensor> args) {
  FailureOr<func::FuncOp> func = checkCall(funcName, args);
  if (failed(func))
    return failure();
  ScratchRun scratch(variables_, gradientAccumulator_, precision_, *func, args);
  interp::Executor &executor = scratch.executor;
  for (Operation &op : func->getBody().front()) {
    if (llvm::isa<func::ReturnOp>(op))
      break;
    if (failed(executor.execute(&op)))
      return failure();
    for (Value result : op.getResults()) {
      const HostTensor &value = executor.get(result);
      for (int64_t i = 0; i < value.numElements(); ++i)
        if (!std::isfinite(value[i]))
          return &op;
    }
  }
  return static_cast<Operation *>(nullptr);
}

LogicalResult checkInterpreterMemory(ModuleOp module, Precision precision) {
  const double elementBytes = precision == Precision::F64 ? 8 : 4;
  double bytes = 0;
  auto add = [&](Type type) {
    if (auto shaped = llvm::dyn_cast<ShapedType>(type);
        shaped && shaped.hasStaticShape())
      bytes += static_cast<double>(shaped.getNumElements()) * elementBytes;
  };
  module.walk([&](Operation *op) {
    if (auto variable = llvm::dyn_cast<tg::VariableOp>(op))
      add(variable.getType());
    if (auto function = llvm::dyn_cast<func::FuncOp>(op))
      for (Type type : function.getArgumentTypes())
        add(type);
    for (Type type : op->getResultTypes())
      add(type);
  });
  struct sysinfo machine;
  if (::sysinfo(&machine) != 0)
    return success();
  const double available =
      (static_cast<double>(machine.totalram) + machine.totalswap) *
      machine.mem_unit;
  if (bytes <= available)
    return success();
  auto gib = [](double n) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", n / double(1ull << 30));
    return std::string(text);
  };
  return module.emitError()
         << "the interpreter would hold " << gib(bytes)
         << " GiB of values, more than this machine's " << gib(available)
         << " GiB of memory and swap: it runs small shapes (compile a "
            "program for these)";
}

FailureOr<func::FuncOp> Interpreter::checkCall(llvm::StringRef funcName,
                                               llvm::ArrayRef<HostTensor> args) {
  // Kernels trust verified shapes; verify once, not per run.
  if (!verified_) {
    if (failed(verify(module_)))
      return failure();
    verified_ = true;
  }
  auto func = module_.lookupSymbol<func::FuncOp>(funcName);
  if (!func || func.isExternal()) {
    module_.emitError() << "no function @" << funcName
                        << " with a body to interpret";
    return failure();
  }
  if (!func.getBody().hasOneBlock()) {
    func.emitError() << "@" << funcName
                     << " has several blocks; the interpreter runs one";
    return failure();
  }
  if (args.size() != func.getNumArguments()) {
    func.emitError() << "@" << funcName << " takes " << func.getNumArguments()
                     << " arguments but was given " << args.size();
    return failure();
  }
  for (auto [index, arg] : llvm::enumerate(args))
    if (failed(checkArgument(func, index, arg)))
      return failure();
  if (failed(checkVariables()))
    return failure();
  return func;
}

} // namespace tgc
