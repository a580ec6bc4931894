//===- CppEmitter.cpp - the file: header, one function per op, model -----===//
#include "codegen/cpu/CppEmitter.h"
#include "codegen/cpu/EmitContext.h"

#include "ir/TgOps.h"
#include "passes/MemoryPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"

#include <cmath>
#include <cstdio>

using namespace mlir;

namespace tgc {
namespace cpp {

std::string floatLiteral(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.9g", static_cast<float>(value));
  std::string s = text;
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return s + "f";
}

std::string arrayLiteral(ArrayRef<int64_t> values) {
  std::string s = "{";
  for (auto [i, v] : llvm::enumerate(values))
    s += (i ? ", " : "") + std::to_string(v);
  return s + "}";
}

ArrayRef<int64_t> shapeOf(Value value) {
  return llvm::cast<RankedTensorType>(value.getType()).getShape();
}

int64_t numElements(Value value) {
  return llvm::cast<RankedTensorType>(value.getType()).getNumElements();
}

static bool isF32(Value value) {
  return llvm::cast<RankedTensorType>(value.getType()).getElementType().isF32();
}

FailureOr<std::string> EmitContext::pointer(Value value) {
  if (auto arg = llvm::dyn_cast<BlockArgument>(value)) {
    int n = static_cast<int>(arg.getArgNumber());
    const StepSignature &s = signature;
    if (n == s.source)
      return std::string("f.sourceIds");
    if (n == s.targetIn)
      return std::string("f.targetInIds");
    if (n == s.targetOut)
      return std::string("f.targetOutIds");
    if (n == s.key)
      return std::string("f.dropoutKey");
    if (n == s.lr)
      return std::string("&f.lr");
    if (n == s.step)
      return std::string("&f.step");
    return emitError(value.getLoc()) << "argument #" << n << " has no role";
  }
  Operation *def = value.getDefiningOp();
  if (auto load = llvm::dyn_cast<tg::LoadOp>(def))
    return "(f.state + " +
           std::to_string(variableOffset(load.getVariable())) +
           " /* @" + load.getVariable().str() + " */)";
  if (auto reshape = llvm::dyn_cast<tg::ReshapeOp>(def))
    return pointer(reshape.getInput());
  if (auto it = constants.find(value); it != constants.end())
    return it->second;
  auto offsets = def->getAttrOfType<DenseI64ArrayAttr>(kArenaOffsetsAttr);
  unsigned index = llvm::cast<OpResult>(value).getResultNumber();
  if (!offsets || offsets.size() <= static_cast<int64_t>(index) ||
      offsets[index] < 0)
    return def->emitOpError()
           << "has no arena offset for result #" << index
           << " (run tg-plan-memory before emitting C++)";
  return std::string(isF32(value) ? "F(f, " : "I(f, ") +
         std::to_string(offsets[index]) + ")";
}

} // namespace cpp

namespace {

/// "models/Transformer.cpp:120:7", the first of a fused location's parts.
std::string describe(Location loc) {
  if (auto fused = llvm::dyn_cast<FusedLoc>(loc)) {
    if (fused.getLocations().empty())
      return "?";
    std::string first = describe(fused.getLocations().front());
    size_t more = fused.getLocations().size() - 1;
    return more ? first + " (+" + std::to_string(more) + " fused)" : first;
  }
  if (auto file = llvm::dyn_cast<FileLineColLoc>(loc))
    return file.getFilename().str() + ":" + std::to_string(file.getLine()) +
           ":" + std::to_string(file.getColumn());
  if (auto name = llvm::dyn_cast<NameLoc>(loc))
    return describe(name.getChildLoc());
  return "?";
}

/// "attention" for tg.attention: the op functions' names.
std::string shortName(Operation *op) {
  return op->getName().stripDialect().str();
}

class FileEmitter {
public:
  FileEmitter(ModuleOp module, const StepSignature &signature,
              StringRef modelName, raw_ostream &os)
      : module(module), signature(signature), modelName(modelName), os(os),
        context(signature, variableOffsets) {}

  LogicalResult emit();

private:
  LogicalResult layOutVariables();
  void emitConstant(tg::ConstantOp op, int index);
  LogicalResult emitOpFunction(Operation &op, int index);
  LogicalResult emitReturn(func::ReturnOp ret);
  void emitModel(int64_t arenaBytes);

  ModuleOp module;
  const StepSignature &signature;
  StringRef modelName;
  raw_ostream &os;
  llvm::StringMap<int64_t> variableOffsets;
  SmallVector<tg::VariableOp> variables;
  int64_t stateFloats = 0;
  cpp::EmitContext context;
  SmallVector<std::string> calls;
};

LogicalResult FileEmitter::layOutVariables() {
  for (auto variable : module.getOps<tg::VariableOp>()) {
    auto type = llvm::cast<RankedTensorType>(variable.getType());
    if (!type.getElementType().isF32())
      return variable.emitOpError()
             << "is not f32; the C++ backend keeps f32 state only";
    variableOffsets[variable.getSymName()] = stateFloats;
    variables.push_back(variable);
    // 16 floats: each variable starts on a cache line.
    stateFloats += (type.getNumElements() + 15) / 16 * 16;
  }
  return success();
}

void FileEmitter::emitConstant(tg::ConstantOp op, int index) {
  auto dense = llvm::cast<DenseElementsAttr>(op.getValue());
  bool f32 = dense.getElementType().isF32();
  std::string name = "kConstant" + std::to_string(index);
  os << "// tg.constant at " << describe(op.getLoc()) << "\n";
  os << "alignas(64) " << (f32 ? "float " : "int32_t ") << name << "["
     << dense.getNumElements() << "] = {";
  int64_t i = 0;
  if (f32)
    for (const APFloat &x : dense.getValues<APFloat>())
      os << (i++ ? ", " : "") << cpp::floatLiteral(x.convertToFloat());
  else
    for (const APInt &x : dense.getValues<APInt>())
      os << (i++ ? ", " : "") << x.getSExtValue();
  os << "};\n\n";
  context.setConstant(op.getResult(), name);
}

LogicalResult FileEmitter::emitOpFunction(Operation &op, int index) {
  std::string name = "op" + std::to_string(index) + "_" + shortName(&op);
  std::string body;
  llvm::raw_string_ostream bodyStream(body);
  bool elementwise = tg::isElementwiseFusible(&op) ||
                     llvm::isa<tg::FusedElementwiseOp>(op);
  LogicalResult result =
      elementwise ? cpp::emitElementwise(&op, context, bodyStream)
                  : cpp::emitKernelCall(&op, context, bodyStream);
  if (failed(result))
    return failure();
  os << "// " << op.getName() << " at " << describe(op.getLoc()) << "\n";
  os << "static void " << name << "(StepFrame &f) {\n" << body << "}\n\n";
  calls.push_back(name);
  return success();
}

LogicalResult FileEmitter::emitReturn(func::ReturnOp ret) {
  if (ret.getNumOperands() < 1 || ret.getNumOperands() > 2)
    return ret.emitOpError() << "of the step must return (loss[, tokens])";
  auto loss = context.pointer(ret.getOperand(0));
  if (failed(loss))
    return failure();
  std::string body = "  f.loss = *" + *loss + ";\n";
  if (ret.getNumOperands() == 2) {
    auto tokens = context.pointer(ret.getOperand(1));
    if (failed(tokens))
      return failure();
    body += "  f.tokens = *" + *tokens + ";\n";
  }
  os << "// func.return: the step's loss and token count\n"
     << "static void finish(StepFrame &f) {\n" << body << "}\n\n";
  calls.push_back("finish");
  return success();
}

void FileEmitter::emitModel(int64_t arenaBytes) {
  os << "const CompiledVariable kVariables[] = {\n";
  for (tg::VariableOp v : variables) {
    auto type = llvm::cast<RankedTensorType>(v.getType());
    double scale = v.getInitScale() ? v.getInitScale()->convertToDouble() : 0;
    os << "    {\"" << v.getSymName() << "\", " << type.getRank() << ", "
       << cpp::arrayLiteral(type.getShape()) << ", " << type.getNumElements()
       << ", " << variableOffsets.lookup(v.getSymName()) << ", "
       << static_cast<int32_t>(v.getInit()) << ", "
       << llvm::format("%.17g", scale) << ", "
       << (v.getTrainable() ? "true" : "false") << "},\n";
  }
  os << "};\n\n";
  os << "void trainStep(StepFrame &f) {\n";
  for (const std::string &call : calls)
    os << "  " << call << "(f);\n";
  os << "}\n\n} // namespace\n\n";
  const runtime::BatchShape &b = signature.shape;
  const WarmupSchedule &s = signature.schedule;
  os << "const CompiledModel tgc::runtime::kCompiledModel = {\n"
     << "    \"" << modelName << "\",\n"
     << "    /*batchSize=*/" << b.batchSize << ", /*sourceLength=*/"
     << b.sourceLength << ", /*targetLength=*/" << b.targetLength
     << ", /*vocabulary=*/" << b.vocabulary << ",\n"
     << "    /*scheduleDModel=*/" << s.dModel << ", /*scheduleWarmup=*/"
     << s.warmupSteps << ", /*scheduleFactor=*/"
     << llvm::format("%.17g", s.factor) << ",\n"
     << "    kVariables, " << variables.size() << ", /*stateFloats=*/"
     << stateFloats << ",\n"
     << "    /*arenaBytes=*/" << arenaBytes << ",\n"
     << "    &trainStep,\n};\n";
}

LogicalResult FileEmitter::emit() {
  func::FuncOp step = signature.function;
  FailureOr<MemoryReport> memory = readMemoryReport(step);
  if (failed(memory) || failed(layOutVariables()))
    return failure();

  os << "// The training step of " << modelName << ", generated by tgc.\n"
     << "// Each function below is one op of @" << step.getName()
     << ", named after it and\n// commented with its source location; "
        "trainStep() runs them in order.\n"
     << "// Arena: " << memory->arena << " bytes (tg-plan-memory).\n"
     << "#include \"runtime/cpu/Kernels.h\"\n"
     << "#include \"runtime/train/CompiledStep.h\"\n\n"
     << "#include <cmath>\n#include <cstdint>\n#include <cstring>\n\n"
     << "using namespace tgc;\nusing namespace tgc::runtime;\n\n"
     << "namespace {\n\n"
     << "inline float *F(StepFrame &f, int64_t offset) {\n"
     << "  return reinterpret_cast<float *>(f.arena + offset);\n}\n"
     << "inline int32_t *I(StepFrame &f, int64_t offset) {\n"
     << "  return reinterpret_cast<int32_t *>(f.arena + offset);\n}\n\n";

  int index = 0;
  for (Operation &op : step.getBody().front()) {
    ++index;
    if (llvm::isa<tg::LoadOp, tg::ReshapeOp>(op))
      continue; // aliases: the state, the input's bytes
    if (auto constant = llvm::dyn_cast<tg::ConstantOp>(op)) {
      if (!llvm::isa<DenseElementsAttr>(constant.getValue()))
        return constant.emitOpError()
               << "holds a non-dense constant, which the C++ emitter does "
                  "not write";
      emitConstant(constant, index);
      continue;
    }
    if (auto ret = llvm::dyn_cast<func::ReturnOp>(op)) {
      if (failed(emitReturn(ret)))
        return failure();
      continue;
    }
    if (failed(emitOpFunction(op, index)))
      return failure();
  }
  emitModel(memory->arena);
  return success();
}

} // namespace

LogicalResult emitCpp(ModuleOp module, StringRef modelName, raw_ostream &os) {
  FailureOr<StepSignature> signature = readStepSignature(module);
  if (failed(signature))
    return failure();
  return FileEmitter(module, *signature, modelName, os).emit();
}

} // namespace tgc
