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
    unsigned n = arg.getArgNumber();
    if (n < arguments.size() && !arguments[n].empty())
      return arguments[n];
    return emitError(value.getLoc()) << "argument #" << n << " has no role";
  }
  Operation *def = value.getDefiningOp();
  if (auto load = llvm::dyn_cast<tg::LoadOp>(def))
    return "(" + variableAddress(load.getVariable()) + ")";
  if (auto reshape = llvm::dyn_cast<tg::ReshapeOp>(def))
    return pointer(reshape.getInput());
  if (auto it = constants.find(value); it != constants.end())
    return isCuda() ? it->second.device : it->second.host;
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

std::string EmitContext::variableAddress(StringRef name) const {
  auto cache = cacheOffsets.find(name);
  std::string base = cache != cacheOffsets.end()
                         ? cacheBase() + " + " + std::to_string(cache->second)
                         : stateBase() + " + " +
                               std::to_string(variableOffset(name));
  return base + " /* @" + name.str() + " */";
}

FailureOr<std::string> EmitContext::position(Value value) {
  auto arg = llvm::dyn_cast<BlockArgument>(value);
  if (arg && arg.getArgNumber() < arguments.size() &&
      arguments[arg.getArgNumber()] == "&f.position")
    return std::string("f.position");
  return emitError(value.getLoc())
         << "is used as a decoding position but is not the function's "
            "'position' argument";
}

FailureOr<std::string> EmitContext::hostPointer(Value value) {
  if (!isCuda())
    return pointer(value);
  if (auto it = constants.find(value); it != constants.end())
    return it->second.host;
  // The key is a host array in the frame on both targets: kernels get it
  // inside a Dropout by value.
  if (auto arg = llvm::dyn_cast<BlockArgument>(value);
      arg && arg.getArgNumber() < arguments.size() &&
      arguments[arg.getArgNumber()] == "f.dropoutKey")
    return arguments[arg.getArgNumber()];
  return emitError(value.getLoc())
         << "is read on the host (a dropout key or a loss gradient) but "
            "lives on the GPU; only constants and the dropout key can be";
}

std::string EmitContext::copy(const std::string &target,
                              const std::string &source, int64_t bytes) const {
  if (isCuda())
    return "  TGC_CUDA_CHECK(cudaMemcpyAsync(" + target + ", " + source + ", " +
           std::to_string(bytes) +
           ", cudaMemcpyDeviceToDevice, kernels::stream()));";
  return "  std::memcpy(" + target + ", " + source + ", " +
         std::to_string(bytes) + ");";
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

/// The expression of each argument of a step or predict function, by its
/// `tg.name`; empty for an argument without a role. On CUDA the batch, lr
/// and step are the device copies in `g`; the dropout key stays on the host.
std::vector<std::string> argumentExpressions(func::FuncOp function,
                                             cpp::Target target) {
  bool cuda = target == cpp::Target::Cuda;
  const std::pair<StringRef, StringRef> roles[] = {
      {"source_ids", cuda ? "g.sourceIds" : "f.sourceIds"},
      {"target_in_ids", cuda ? "g.targetInIds" : "f.targetInIds"},
      {"target_out_ids", cuda ? "g.targetOutIds" : "f.targetOutIds"},
      {"dropout_key", "f.dropoutKey"},
      {"lr", cuda ? "g.lr" : "&f.lr"},
      {"step", cuda ? "g.step" : "&f.step"},
      {"position", "&f.position"}};
  std::vector<std::string> expressions;
  for (unsigned i = 0; i < function.getNumArguments(); ++i) {
    auto name = function.getArgAttrOfType<StringAttr>(i, "tg.name");
    std::string expression;
    for (auto [role, text] : roles)
      if (name && name.getValue() == role)
        expression = text.str();
    expressions.push_back(expression);
  }
  return expressions;
}

/// The functions a bucket may have, and what the generated code calls them.
enum class FunctionKind { Step, Predict, Encode, DecodeStep };

struct FunctionNames {
  /// CUDA only: `upload` copies the function's inputs to the device.
  const char *entry, *opPrefix, *constantPrefix, *finish, *upload;
};

FunctionNames namesOf(FunctionKind kind) {
  switch (kind) {
  case FunctionKind::Step:
    return {"trainStep", "op", "kConstant", "finish", "upload_inputs"};
  case FunctionKind::Predict:
    return {"predict", "predict_op", "kPredictConstant", "predict_finish",
            "predict_upload_inputs"};
  case FunctionKind::Encode:
    return {"encode", "encode_op", "kEncodeConstant", "encode_finish",
            "encode_upload_inputs"};
  case FunctionKind::DecodeStep:
    return {"decodeStep", "decode_op", "kDecodeConstant", "decode_finish",
            "decode_upload_inputs"};
  }
  return {};
}

/// One compiled shape: its module (planned @train_step, maybe @predict and
/// the incremental decoder @encode, @decode_step with its caches).
struct Bucket {
  ModuleOp module;
  StepSignature signature;
  func::FuncOp predict, encode, decodeStep;
  /// "bucket_32x16x16": the C++ namespace of its functions; empty when the
  /// model has a single shape.
  std::string scope;
  /// The decoding caches, packed in StepFrame::cache.
  SmallVector<tg::VariableOp> caches;
  llvm::StringMap<int64_t> cacheOffsets;
  int64_t cacheFloats = 0;

  func::FuncOp function(FunctionKind kind) const {
    switch (kind) {
    case FunctionKind::Step:
      return signature.function;
    case FunctionKind::Predict:
      return predict;
    case FunctionKind::Encode:
      return encode;
    case FunctionKind::DecodeStep:
      return decodeStep;
    }
    return {};
  }
};

constexpr FunctionKind kFunctionKinds[] = {
    FunctionKind::Step, FunctionKind::Predict, FunctionKind::Encode,
    FunctionKind::DecodeStep};

/// How many ids the argument of `function` named `role` holds; 0 without
/// one.
int64_t idsOf(func::FuncOp function, StringRef role) {
  for (unsigned i = 0; i < function.getNumArguments(); ++i)
    if (auto name = function.getArgAttrOfType<StringAttr>(i, "tg.name");
        name && name.getValue() == role)
      return llvm::cast<RankedTensorType>(function.getArgument(i).getType())
          .getNumElements();
  return 0;
}

/// `scope::name`, or `name` at file level.
std::string qualified(const Bucket &bucket, StringRef name) {
  return bucket.scope.empty() ? name.str() : bucket.scope + "::" + name.str();
}

class FileEmitter {
public:
  FileEmitter(std::vector<Bucket> buckets, const CompiledModelInfo &info,
              cpp::Target target, raw_ostream &os)
      : buckets(std::move(buckets)), info(info), target(target), os(os) {}

  LogicalResult emit();

private:
  bool isCuda() const { return target == cpp::Target::Cuda; }
  LogicalResult layOutVariables();
  /// Packs the bucket's decoding caches (each cache-line aligned).
  LogicalResult layOutCaches(Bucket &bucket);
  /// Every bucket declares the same variables (their shapes never depend
  /// on the batch), so they share one state buffer.
  LogicalResult checkSameVariables(ModuleOp other);
  void emitHeader(int64_t arena);
  /// The ops of `function` as functions named `<prefix><N>_<op>`, then
  /// `entry`, which calls them in order.
  LogicalResult emitFunction(const Bucket &bucket, FunctionKind kind);
  void emitCaches(const Bucket &bucket);
  void emitConstant(tg::ConstantOp op, StringRef name, const Bucket &bucket,
                    cpp::EmitContext &context);
  LogicalResult emitReturn(func::ReturnOp ret, FunctionKind kind,
                           cpp::EmitContext &context,
                           SmallVector<std::string> &calls);
  void emitDeviceHooks(int64_t arenaBytes);
  void emitModel(int64_t arenaBytes);

  std::vector<Bucket> buckets;
  const CompiledModelInfo &info;
  cpp::Target target;
  raw_ostream &os;
  llvm::StringMap<int64_t> variableOffsets;
  SmallVector<tg::VariableOp> variables;
  int64_t stateFloats = 0;
  /// CUDA: the constants to copy to the device, "dConstantN = ...(kConstantN)".
  SmallVector<std::string> constantUploads;
};

/// The variables that make up the model's state: all but decoding caches.
SmallVector<tg::VariableOp> stateVariables(ModuleOp module) {
  SmallVector<tg::VariableOp> state;
  for (auto variable : module.getOps<tg::VariableOp>())
    if (!variable.getCache())
      state.push_back(variable);
  return state;
}

LogicalResult FileEmitter::checkSameVariables(ModuleOp other) {
  SmallVector<tg::VariableOp> theirs = stateVariables(other);
  if (theirs.size() != variables.size())
    return other.emitError() << "declares " << theirs.size()
                             << " variables, the first bucket "
                             << variables.size()
                             << "; buckets must share their state";
  for (auto [mine, their] : llvm::zip(variables, theirs))
    if (mine.getSymName() != their.getSymName() ||
        mine.getType() != their.getType() ||
        mine.getInit() != their.getInit() ||
        mine.getTrainable() != their.getTrainable())
      return their.emitOpError()
             << "differs from the first bucket's @" << mine.getSymName()
             << " (" << mine.getType() << "); buckets must share their state";
  return success();
}

LogicalResult FileEmitter::layOutVariables() {
  for (tg::VariableOp variable : stateVariables(buckets.front().module)) {
    auto type = llvm::cast<RankedTensorType>(variable.getType());
    if (!type.getElementType().isF32())
      return variable.emitOpError()
             << "is not f32; the generated programs keep f32 state only";
    variableOffsets[variable.getSymName()] = stateFloats;
    variables.push_back(variable);
    // 16 floats: each variable starts on a cache line.
    stateFloats += (type.getNumElements() + 15) / 16 * 16;
  }
  return success();
}

LogicalResult FileEmitter::layOutCaches(Bucket &bucket) {
  for (auto variable : bucket.module.getOps<tg::VariableOp>()) {
    if (!variable.getCache())
      continue;
    RankedTensorType type = variable.getTensorType();
    if (!type.getElementType().isF32())
      return variable.emitOpError()
             << "is not f32; the generated programs keep f32 caches only";
    bucket.cacheOffsets[variable.getSymName()] = bucket.cacheFloats;
    bucket.caches.push_back(variable);
    bucket.cacheFloats += (type.getNumElements() + 15) / 16 * 16;
  }
  return success();
}

void FileEmitter::emitHeader(int64_t arena) {
  bool predict = static_cast<bool>(buckets.front().predict);
  os << "// The training step of " << info.name << ", generated by tgc"
     << (isCuda() ? " for CUDA" : "") << ".\n"
     << "// Each function below is one op of @train_step"
     << (predict ? " or @predict" : "")
     << ", named after it and\n// commented with its source location; "
        "trainStep() runs the step's in order"
     << (predict ? ",\n// predict() those of @predict (op functions "
                   "prefixed predict_)"
                 : "")
     << ".\n";
  if (buckets.front().decodeStep)
    os << "// encode() and decodeStep() are the incremental decoder "
          "(tg-derive-decoder):\n// op functions prefixed encode_ and "
          "decode_; their caches are in "
       << (isCuda() ? "g.cache" : "f.cache") << ".\n";
  if (buckets.size() > 1)
    os << "// One namespace per bucket (batch x source x target length); "
          "all share the\n// state and the arena.\n";
  os << "// Arena: " << arena << " bytes (tg-plan-memory).\n";
  if (isCuda())
    os << "// Everything lives on the GPU (runtime/program/cuda/DeviceStep.h: g); "
          "elementwise ops\n// and groups are kernels of their own, the rest "
          "calls runtime/kernels/cuda/Kernels.h.\n"
       << "#include \"runtime/program/cuda/DeviceStep.h\"\n"
       << "#include \"runtime/kernels/cuda/Kernels.h\"\n";
  else
    os << "#include \"runtime/kernels/cpu/Kernels.h\"\n";
  os << "#include \"runtime/kernels/Elementwise.h\"\n"
     << "#include \"runtime/program/CompiledStep.h\"\n\n"
     << "#include <cmath>\n#include <cstdint>\n#include <cstring>\n\n"
     << "using namespace tgc;\nusing namespace tgc::runtime;\n"
     << "namespace kernels = tgc::" << (isCuda() ? "cuda" : "cpu") << ";\n\n"
     << "namespace {\n\n";
  if (isCuda())
    os << "cuda::DeviceFrame &g = cuda::deviceFrame();\n\n"
       << "inline float *F(StepFrame &, int64_t offset) {\n"
       << "  return reinterpret_cast<float *>(g.arena + offset);\n}\n"
       << "inline int32_t *I(StepFrame &, int64_t offset) {\n"
       << "  return reinterpret_cast<int32_t *>(g.arena + offset);\n}\n\n";
  else
    os << "inline float *F(StepFrame &f, int64_t offset) {\n"
       << "  return reinterpret_cast<float *>(f.arena + offset);\n}\n"
       << "inline int32_t *I(StepFrame &f, int64_t offset) {\n"
       << "  return reinterpret_cast<int32_t *>(f.arena + offset);\n}\n\n";
}

void FileEmitter::emitConstant(tg::ConstantOp op, StringRef name,
                               const Bucket &bucket,
                               cpp::EmitContext &context) {
  auto dense = llvm::cast<DenseElementsAttr>(op.getValue());
  bool f32 = dense.getElementType().isF32();
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
  os << "};\n";
  std::string device;
  if (isCuda()) {
    // The kernels read it from device memory; the host keeps its copy for
    // dropout keys and the loss gradient's seed.
    device = "d" + name.drop_front().str();
    std::string type = f32 ? "float" : "int32_t";
    os << type << " *" << device << "; // on the device (openDevice)\n";
    std::string host = qualified(bucket, name);
    constantUploads.push_back(qualified(bucket, device) +
                              " = reinterpret_cast<" + type +
                              " *>(cuda::uploadConstant(" + host +
                              ", sizeof " + host + "));");
  }
  os << "\n";
  context.setConstant(op.getResult(), name.str(), device);
}

LogicalResult FileEmitter::emitReturn(func::ReturnOp ret, FunctionKind kind,
                                      cpp::EmitContext &context,
                                      SmallVector<std::string> &calls) {
  std::string body, comment;
  if (kind == FunctionKind::Encode) {
    // Its results are the caches it stored.
    if (ret.getNumOperands() != 0)
      return ret.emitOpError() << "of @encode must return nothing";
    return success();
  }
  if (kind == FunctionKind::Step) {
    if (ret.getNumOperands() < 1 || ret.getNumOperands() > 2)
      return ret.emitOpError() << "of the step must return (loss[, tokens])";
    auto loss = context.pointer(ret.getOperand(0));
    if (failed(loss))
      return failure();
    std::string tokens = "nullptr";
    if (ret.getNumOperands() == 2) {
      auto found = context.pointer(ret.getOperand(1));
      if (failed(found))
        return failure();
      tokens = *found;
    }
    if (isCuda())
      body = "  cuda::downloadLoss(" + *loss + ", " + tokens + ", f);\n";
    else
      body = "  f.loss = *" + *loss + ";\n" +
             (tokens == "nullptr" ? "" : "  f.tokens = *" + tokens + ";\n");
    comment = "the step's loss and token count";
  } else {
    if (ret.getNumOperands() != 1)
      return ret.emitOpError() << "must return the logits";
    auto logits = context.pointer(ret.getOperand(0));
    if (failed(logits))
      return failure();
    if (isCuda()) {
      body = "  f.logits = cuda::downloadLogits(" + *logits + ", " +
             std::to_string(cpp::numElements(ret.getOperand(0))) + ");\n";
      comment = "the logits, copied to the host";
    } else {
      body = "  f.logits = " + *logits + ";\n";
      comment = "where the logits are, in the arena";
    }
  }
  std::string name = namesOf(kind).finish;
  os << "// func.return: " << comment << "\n"
     << "static void " << name << "(StepFrame &f) {\n" << body << "}\n\n";
  calls.push_back(name);
  return success();
}

LogicalResult FileEmitter::emitFunction(const Bucket &bucket,
                                        FunctionKind kind) {
  func::FuncOp function = bucket.function(kind);
  FunctionNames names = namesOf(kind);
  StringRef prefix = names.opPrefix, entry = names.entry;
  SmallVector<std::string> calls;
  if (isCuda()) {
    // The ids (as many as the function's arguments hold), lr and step go
    // to the device before the first op.
    std::string name = names.upload;
    os << "static void " << name << "(StepFrame &f) {\n"
       << "  cuda::uploadInputs(f, " << idsOf(function, "source_ids") << ", "
       << std::max(idsOf(function, "target_in_ids"),
                   idsOf(function, "target_out_ids"))
       << ");\n}\n\n";
    calls.push_back(name);
  }
  cpp::EmitContext context(target, argumentExpressions(function, target),
                           variableOffsets, bucket.cacheOffsets);
  std::string constantPrefix = names.constantPrefix;
  int index = 0;
  for (Operation &op : function.getBody().front()) {
    ++index;
    if (llvm::isa<tg::LoadOp, tg::ReshapeOp>(op))
      continue; // aliases: the state, the input's bytes
    if (auto constant = llvm::dyn_cast<tg::ConstantOp>(op)) {
      if (!llvm::isa<DenseElementsAttr>(constant.getValue()))
        return constant.emitOpError()
               << "holds a non-dense constant, which the emitter does not "
                  "write";
      emitConstant(constant, constantPrefix + std::to_string(index), bucket,
                   context);
      continue;
    }
    if (auto ret = llvm::dyn_cast<func::ReturnOp>(op)) {
      if (failed(emitReturn(ret, kind, context, calls)))
        return failure();
      continue;
    }
    std::string name =
        prefix.str() + std::to_string(index) + "_" + shortName(&op);
    std::string body, kernels;
    llvm::raw_string_ostream bodyStream(body), kernelStream(kernels);
    bool elementwise = tg::isElementwiseFusible(&op) ||
                       llvm::isa<tg::FusedElementwiseOp>(op);
    if (failed(elementwise ? cpp::emitElementwise(&op, name, context,
                                                  bodyStream, kernelStream)
                           : cpp::emitKernelCall(&op, context, bodyStream)))
      return failure();
    os << "// " << op.getName() << " at " << describe(op.getLoc()) << "\n"
       << kernels << "static void " << name << "(StepFrame &f) {\n"
       << body << "}\n\n";
    calls.push_back(name);
  }
  os << "void " << entry << "(StepFrame &f) {\n";
  for (const std::string &call : calls)
    os << "  " << call << "(f);\n";
  os << "}\n\n";
  return success();
}

void FileEmitter::emitDeviceHooks(int64_t arenaBytes) {
  // The device's input buffers hold the largest bucket's.
  int64_t sourceIds = 0, targetIds = 0, logits = 0, cacheFloats = 0;
  for (const Bucket &bucket : buckets) {
    const runtime::BatchShape &b = bucket.signature.shape;
    sourceIds = std::max(sourceIds, b.batchSize * b.sourceLength);
    targetIds = std::max(targetIds, b.batchSize * b.targetLength);
    logits = std::max(logits, b.batchSize * b.targetLength *
                                  int64_t{b.vocabulary});
    cacheFloats = std::max(cacheFloats, bucket.cacheFloats);
  }
  os << "bool openDevice(std::string &why) {\n"
     << "  const cuda::DeviceSizes sizes{/*stateFloats=*/" << stateFloats
     << ", /*arenaBytes=*/" << arenaBytes << ",\n"
     << "      /*sourceIds=*/" << sourceIds << ", /*targetIds=*/" << targetIds
     << ", /*logitsFloats=*/" << logits << ",\n      /*cacheFloats=*/"
     << cacheFloats << "};\n"
     << "  if (!cuda::openDevice(sizes, why))\n    return false;\n";
  for (const std::string &upload : constantUploads)
    os << "  " << upload << "\n";
  os << "  return true;\n}\n\n"
     << "void uploadState(const float *state) { cuda::uploadState(state, "
     << stateFloats << "); }\n"
     << "void downloadState(float *state) { cuda::downloadState(state, "
     << stateFloats << "); }\n\n"
     << "const DeviceHooks kDevice = {&openDevice, &uploadState, "
        "&downloadState,\n                              "
        "&cuda::reorderCaches};\n\n";
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
  os << "// batch, source length, target length, train step, predict, "
        "encode, decode step,\n// caches, their count and floats\n"
     << "const CompiledBucket kBuckets[] = {\n";
  auto address = [&](const Bucket &bucket, func::FuncOp function,
                     StringRef name) {
    return function ? "&" + qualified(bucket, name) : std::string("nullptr");
  };
  for (const Bucket &bucket : buckets) {
    const runtime::BatchShape &b = bucket.signature.shape;
    bool caches = bucket.decodeStep && !bucket.caches.empty();
    os << "    {" << b.batchSize << ", " << b.sourceLength << ", "
       << b.targetLength << ", &" << qualified(bucket, "trainStep") << ", "
       << address(bucket, bucket.predict, "predict") << ",\n     "
       << address(bucket, bucket.encode, "encode") << ", "
       << address(bucket, bucket.decodeStep, "decodeStep") << ", "
       << (caches ? qualified(bucket, "kCaches") : "nullptr") << ", "
       << bucket.caches.size() << ", " << bucket.cacheFloats << "},\n";
  }
  os << "};\n\n";
  if (isCuda())
    emitDeviceHooks(arenaBytes);
  os << "} // namespace\n\n";
  const WarmupSchedule &s = buckets.front().signature.schedule;
  os << "const CompiledModel tgc::runtime::kCompiledModel = {\n"
     << "    \"" << info.name << "\",\n"
     << "    /*vocabulary=*/" << buckets.front().signature.shape.vocabulary
     << ", /*vocabularyHash=*/" << llvm::format("0x%016llx", static_cast<unsigned long long>(info.vocabularyHash))
     << "ull,\n"
     << "    /*scheduleDModel=*/" << s.dModel << ", /*scheduleWarmup=*/"
     << s.warmupSteps << ", /*scheduleFactor=*/"
     << llvm::format("%.17g", s.factor) << ",\n"
     << "    kVariables, " << variables.size() << ", /*stateFloats=*/"
     << stateFloats << ",\n"
     << "    /*arenaBytes=*/" << arenaBytes << ",\n"
     << "    kBuckets, " << buckets.size() << ",\n"
     << "    /*device=*/" << (isCuda() ? "&kDevice" : "nullptr") << ",\n};\n";
}

void FileEmitter::emitCaches(const Bucket &bucket) {
  os << "// The decoding caches in " << (isCuda() ? "g.cache" : "f.cache")
     << ": name, offset, size, per hypothesis.\n"
     << "const CompiledCache kCaches[] = {\n";
  for (tg::VariableOp cache : bucket.caches) {
    bool appended = false;
    func::FuncOp decodeStep = bucket.decodeStep;
    decodeStep.walk([&](tg::StoreSliceOp store) {
      appended |= store.getVariable() == cache.getSymName();
    });
    os << "    {\"" << cache.getSymName() << "\", "
       << bucket.cacheOffsets.lookup(cache.getSymName()) << ", "
       << cache.getTensorType().getNumElements() << ", "
       << (appended ? "true" : "false") << "},\n";
  }
  os << "};\n\n";
}

LogicalResult FileEmitter::emit() {
  if (failed(layOutVariables()))
    return failure();
  // The functions of every bucket never run at once: they share one arena,
  // the largest. What @encode leaves for @decode_step is in the caches.
  int64_t arena = 0;
  for (Bucket &bucket : buckets) {
    if (bucket.module != buckets.front().module &&
        failed(checkSameVariables(bucket.module)))
      return failure();
    if (bucket.decodeStep && failed(layOutCaches(bucket)))
      return failure();
    for (FunctionKind kind : kFunctionKinds) {
      func::FuncOp function = bucket.function(kind);
      if (!function)
        continue;
      FailureOr<MemoryReport> memory = readMemoryReport(function);
      if (failed(memory))
        return failure();
      arena = std::max(arena, memory->arena);
    }
  }
  emitHeader(arena);
  for (const Bucket &bucket : buckets) {
    if (!bucket.scope.empty())
      os << "namespace " << bucket.scope << " {\n\n";
    for (FunctionKind kind : kFunctionKinds)
      if (bucket.function(kind) && failed(emitFunction(bucket, kind)))
        return failure();
    if (!bucket.caches.empty())
      emitCaches(bucket);
    if (!bucket.scope.empty())
      os << "} // namespace " << bucket.scope << "\n\n";
  }
  emitModel(arena);
  return success();
}

LogicalResult emitFile(ArrayRef<ModuleOp> modules, const CompiledModelInfo &info,
                       cpp::Target target, raw_ostream &os) {
  std::vector<Bucket> buckets;
  for (ModuleOp module : modules) {
    FailureOr<StepSignature> signature = readStepSignature(module);
    if (failed(signature))
      return failure();
    const runtime::BatchShape &b = signature->shape;
    std::string scope;
    if (modules.size() > 1)
      scope = "bucket_" + std::to_string(b.batchSize) + "x" +
              std::to_string(b.sourceLength) + "x" +
              std::to_string(b.targetLength);
    Bucket bucket{module, *signature,
                  module.lookupSymbol<func::FuncOp>("predict")};
    bucket.scope = scope;
    bucket.encode = module.lookupSymbol<func::FuncOp>("encode");
    bucket.decodeStep = module.lookupSymbol<func::FuncOp>("decode_step");
    if (static_cast<bool>(bucket.encode) !=
        static_cast<bool>(bucket.decodeStep))
      return module.emitError() << "has only one of @encode and @decode_step";
    buckets.push_back(std::move(bucket));
  }
  return FileEmitter(std::move(buckets), info, target, os).emit();
}

} // namespace

LogicalResult emitCpp(ArrayRef<ModuleOp> buckets, const CompiledModelInfo &info,
                      raw_ostream &os) {
  return emitFile(buckets, info, cpp::Target::Cpu, os);
}

LogicalResult emitCuda(ArrayRef<ModuleOp> buckets,
                       const CompiledModelInfo &info, raw_ostream &os) {
  return emitFile(buckets, info, cpp::Target::Cuda, os);
}

} // namespace tgc
