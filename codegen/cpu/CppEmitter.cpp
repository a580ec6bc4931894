//===- CppEmitter.cpp - the file's driver: one function per op --------===//
//
// FileEmitter::emit() lays out the state (CppModelTable.cpp), then writes
// each bucket's functions here: one `static void` per op, named after it and
// commented with its location, constants as static arrays, and the entry
// function that calls them in order; the model's tables come last.
//
//===----------------------------------------------------------------------===//
#include "codegen/cpu/CppEmitter.h"
#include "codegen/cpu/CppDataParallel.h"
#include "codegen/cpu/EmitContext.h"
#include "codegen/cpu/FileEmitter.h"

#include "ir/TgLocations.h"
#include "ir/TgOps.h"
#include "passes/MemoryPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace tgc {
namespace cpp {

namespace {

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
      // The optimizer's controls: host values on both targets.
      {"grad_weight", "&f.gradWeight"},
      {"update_phase", "&f.updatePhase"},
      {"clip_norm", "&f.clipNorm"},
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

/// What the generated code calls a function of each kind and its parts.
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

} // namespace

void FileEmitter::emitConstant(tg::ConstantOp op, StringRef name,
                               const Bucket &bucket,
                               cpp::EmitContext &context) {
  auto dense = llvm::cast<DenseElementsAttr>(op.getValue());
  bool f32 = dense.getElementType().isF32();
  os << "// tg.constant at " << describeLocation(op.getLoc()) << "\n";
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
    // (loss[, tokens][, grad_norm]): the norm is the result tg-adam named.
    auto function = ret->getParentOfType<func::FuncOp>();
    unsigned count = ret.getNumOperands();
    bool hasNorm = false;
    if (count > 0)
      if (auto name =
              function.getResultAttrOfType<StringAttr>(count - 1, "tg.name"))
        hasNorm = name.getValue() == "grad_norm";
    if (count < 1 || count - hasNorm > 2)
      return ret.emitOpError()
             << "of the step must return (loss[, tokens][, grad_norm])";
    auto pointerOr = [&](unsigned i, bool present) -> FailureOr<std::string> {
      return present ? context.pointer(ret.getOperand(i))
                     : FailureOr<std::string>(std::string("nullptr"));
    };
    auto loss = pointerOr(0, true);
    auto tokens = pointerOr(1, count - hasNorm == 2);
    auto norm = pointerOr(count - 1, hasNorm);
    if (failed(loss) || failed(tokens) || failed(norm))
      return failure();
    if (isCuda())
      body = "  cuda::downloadLoss(" + *loss + ", " + *tokens + ", " + *norm +
             ", f);\n";
    else
      body = "  f.loss = *" + *loss + ";\n" +
             (*tokens == "nullptr" ? "" : "  f.tokens = *" + *tokens + ";\n") +
             (*norm == "nullptr" ? "" : "  f.gradNorm = *" + *norm + ";\n");
    comment = "the step's loss, token count and gradient norm";
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
  llvm::StringMap<FiniteCheck> checks;
  llvm::StringMap<double> pairs; // tg.beside_next: first call -> its share
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
    os << "// " << op.getName() << " at " << describeLocation(op.getLoc()) << "\n"
       << kernels << "static void " << name << "(StepFrame &f) {\n"
       << body << "}\n\n";
    calls.push_back(name);
    // A GPU runs its stream's kernels one after another either way. The
    // partner's call is the next one: nextComputingOp skips exactly the ops
    // this loop writes no call for.
    if (op.hasAttr(tg::kBesideNextAttr) && !isCuda()) {
      double first = tg::multiplyAdds(llvm::cast<tg::MatmulOp>(op));
      double second = tg::multiplyAdds(
          llvm::cast<tg::MatmulOp>(tg::nextComputingOp(&op)));
      pairs[name] = first / (first + second);
    }
    if (kind == FunctionKind::Step && !isCuda() &&
        failed(noteFiniteCheck(op, name, context, checks)))
      return failure();
  }
  if (kind == FunctionKind::Step && !isCuda())
    return emitCheckedStep(function, calls, checks, pairs, context);
  os << "void " << entry << "(StepFrame &f) {\n";
  emitCalls(calls, pairs, [](const std::string &) { return "  "; }, false);
  os << "}\n\n";
  return success();
}

void FileEmitter::emitCalls(
    ArrayRef<std::string> calls, const llvm::StringMap<double> &pairs,
    llvm::function_ref<std::string(const std::string &)> guard, bool lap) {
  for (size_t i = 0; i < calls.size(); ++i) {
    auto pair = pairs.find(calls[i]);
    if (pair == pairs.end() || i + 1 == calls.size()) {
      os << guard(calls[i]) << calls[i] << "(f);\n";
      if (lap)
        os << "  clock.lap(seconds[" << i << "]);\n";
      continue;
    }
    os << "  kernels::sideBySide([&] { " << calls[i] << "(f); }, [&] { "
       << calls[i + 1] << "(f); });\n";
    if (lap)
      os << "  clock.lapShared(seconds[" << i << "], seconds[" << i + 1
         << "], " << pair->second << ");\n";
    ++i;
  }
}

LogicalResult FileEmitter::noteFiniteCheck(Operation &op, StringRef call,
                                           cpp::EmitContext &context,
                                           llvm::StringMap<FiniteCheck> &checks) {
  FiniteCheck check;
  check.updatesState = llvm::isa<tg::AdamUpdateOp, tg::MultiAdamUpdateOp>(op);
  for (Value result : op.getResults()) {
    auto type = llvm::dyn_cast<RankedTensorType>(result.getType());
    if (!type || !type.getElementType().isF32())
      continue;
    FailureOr<std::string> pointer = context.pointer(result);
    if (failed(pointer))
      return failure();
    check.condition += (check.condition.empty() ? "" : " ||\n      ") +
                       std::string("!allFinite(") + *pointer + ", " +
                       std::to_string(type.getNumElements()) + ")";
  }
  // A fused group names the ops it computes: one of them is the culprit.
  check.what = cpp::stringLiteral(describeOp(&op));
  check.kind = cpp::stringLiteral(op.getName().getStringRef());
  checks[call] = std::move(check);
  return success();
}

LogicalResult FileEmitter::emitCheckedStep(func::FuncOp function,
                                           ArrayRef<std::string> calls,
                                           const llvm::StringMap<FiniteCheck> &checks,
                                           const llvm::StringMap<double> &pairs,
                                           cpp::EmitContext &context) {
  auto ret = llvm::cast<func::ReturnOp>(function.getBody().front().back());
  FailureOr<std::string> loss = context.pointer(ret.getOperand(0));
  if (failed(loss))
    return failure();
  // Adam runs only from a finite loss: a diverged step leaves the state as
  // it was, so that checkTrainStep can re-run it on the same batch.
  auto guard = [&](const std::string &call) {
    auto check = checks.find(call);
    bool guarded = check != checks.end() && check->second.updatesState;
    return guarded ? "  if (std::isfinite(*" + *loss + ")) " : std::string("  ");
  };
  os << "void trainStep(StepFrame &f) {\n";
  emitCalls(calls, pairs, guard, false);
  os << "}\n\n";
  // --profile: the same calls, each followed by a lap of the clock.
  os << "// trainStep's ops in order, for --profile: kind, what.\n"
     << "const StepOp kTrainStepOps[] = {\n";
  for (const std::string &call : calls) {
    auto check = checks.find(call);
    os << "    {"
       << (check == checks.end() ? "\"func.return\", \"the step's results\""
                                 : check->second.kind + ", " + check->second.what)
       << "},\n";
  }
  os << "};\n\n"
     << "// trainStep, adding each op's time to seconds[i] (kTrainStepOps[i]).\n"
     << "void profileTrainStep(StepFrame &f, double *seconds) {\n"
     << "  OpClock clock;\n";
  emitCalls(calls, pairs, guard, true);
  os << "}\n\n";
  // One op at a time, a pair's too: the same values, and the first
  // non-finite one is found.
  os << "// trainStep's ops without Adam, each result checked: the first op "
        "that\n// produces a NaN or an infinity, or nullptr.\n"
     << "const char *checkTrainStep(StepFrame &f) {\n";
  for (const std::string &call : calls) {
    auto check = checks.find(call);
    if (check == checks.end()) {
      os << "  " << call << "(f);\n";
      continue;
    }
    if (check->second.updatesState)
      continue;
    os << "  " << call << "(f);\n";
    if (!check->second.condition.empty())
      os << "  if (" << check->second.condition << ")\n    return "
         << check->second.what << ";\n";
  }
  os << "  return nullptr;\n}\n\n";
  return success();
}

LogicalResult FileEmitter::emit() {
  if (failed(layOutVariables()))
    return failure();
  // The functions of every bucket never run at once: they share one arena,
  // the largest. What @encode leaves for @decode_step is in the caches.
  int64_t arena = 0;
  for (Bucket &bucket : buckets) {
    if (bucket.module != buckets.front().module &&
        (failed(checkSameVariables(bucket.module)) ||
         failed(checkSameGradientLayout(buckets.front().signature.function,
                                        bucket.signature.function))))
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

namespace {

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

} // namespace cpp

LogicalResult emitCpp(ArrayRef<ModuleOp> buckets, const CompiledModelInfo &info,
                      raw_ostream &os) {
  return cpp::emitFile(buckets, info, cpp::Target::Cpu, os);
}

LogicalResult emitCuda(ArrayRef<ModuleOp> buckets,
                       const CompiledModelInfo &info, raw_ostream &os) {
  return cpp::emitFile(buckets, info, cpp::Target::Cuda, os);
}

} // namespace tgc
