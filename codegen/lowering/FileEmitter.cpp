//===- FileEmitter.cpp - the file's driver: one function per op ------===//
//
// FileEmitter::emit() lays out the state (ModelTable.cpp), then writes each
// bucket's functions here: one `static void` per op, named after it and
// commented with its location, constants as static arrays, and the entry
// function that calls them in order (the target's, ProgramTarget::
// writeEntry); the model's tables come last. The same walk for both
// targets: what they write differently, the target writes.
//
//===----------------------------------------------------------------------===//
#include "codegen/lowering/FileEmitter.h"
#include "codegen/calls/KernelCallModels.h"
#include "codegen/lowering/DataParallel.h"
#include "codegen/lowering/EmitContext.h"
#include "codegen/lowering/ProgramLowering.h"

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
/// `tg.name`; empty for an argument without a role. The ids, lr and step
/// are where the target's kernels read them; the dropout key and the
/// optimizer's controls are host values on both targets.
std::vector<std::string> argumentExpressions(func::FuncOp function,
                                             const ProgramTarget &target) {
  const StringRef inputs[] = {"source_ids", "target_in_ids", "target_out_ids",
                              "lr", "step"};
  const std::pair<StringRef, StringRef> hostRoles[] = {
      {"dropout_key", "f.dropoutKey"},
      {"grad_weight", "&f.gradWeight"},
      {"update_phase", "&f.updatePhase"},
      {"clip_norm", "&f.clipNorm"},
      {"weight_decay", "&f.weightDecay"},
      {"label_smoothing", "&f.labelSmoothing"},
      {"adam_beta1", "&f.adamBeta1"},
      {"adam_beta2", "&f.adamBeta2"},
      {"adam_eps", "&f.adamEps"},
      {"dropout", "&f.dropout"},
      {"attention_dropout", "&f.attentionDropout"},
      {"position", "&f.position"}};
  std::vector<std::string> expressions;
  for (unsigned i = 0; i < function.getNumArguments(); ++i) {
    auto name = function.getArgAttrOfType<StringAttr>(i, "tg.name");
    std::string expression;
    for (StringRef role : inputs)
      if (name && name.getValue() == role)
        expression = target.inputArgument(role);
    for (auto [role, text] : hostRoles)
      if (name && name.getValue() == role)
        expression = text.str();
    expressions.push_back(expression);
  }
  return expressions;
}

/// What the generated code calls a function of each kind and its parts.
struct FunctionNames {
  /// `upload` hands the function's inputs to the kernels, where the target
  /// needs it (ProgramTarget::inputUpload).
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

bool emitsOp(OperationName name) {
  std::optional<RegisteredOperationName> op = name.getRegisteredInfo();
  if (!op)
    return false;
  // Loops of their own: ElementwiseOps.def, scale, dropout, groups.
  if (op->hasTrait<tg::traits::ElementwiseLoop>())
    return true;
  // No code (tg::writesNoCode's kinds, asked of the class): views, the
  // state; constants the function writer writes as static arrays.
  if (op->hasTrait<tg::traits::ResultIsView>() ||
      op->hasTrait<tg::traits::ResultOutsideArena>())
    return true;
  if (op->hasInterface<tg::KernelCallOpInterface>())
    return true;
  // Written by the function writer (emitFunction) or at module level.
  TypeID id = op->getTypeID();
  return id == TypeID::get<tg::VariableOp>() ||
         id == TypeID::get<tg::YieldOp>() ||
         id == TypeID::get<func::ReturnOp>();
}

void FileEmitter::emitConstant(tg::ConstantOp op, StringRef name,
                               const Bucket &bucket,
                               cpp::EmitContext &context) {
  auto dense = llvm::cast<DenseElementsAttr>(op.getValue());
  bool f32 = dense.getElementType().isF32();
  os << "// tg.constant at " << commentText(describeLocation(op.getLoc()))
     << "\n";
  os << "alignas(64) " << (f32 ? "float " : "int32_t ") << name << "["
     << dense.getNumElements() << "]";
  if (dense.isSplat() && dense.getNumElements() > 1) {
    // Filled before main, not spelled out: a splat may be large. Zeros
    // need no fill (a global starts zeroed).
    bool zero = f32 ? dense.getSplatValue<APFloat>().isPosZero()
                    : dense.getSplatValue<APInt>().isZero();
    std::string value =
        f32 ? cpp::floatLiteral(dense.getSplatValue<APFloat>().convertToFloat())
            : std::to_string(dense.getSplatValue<APInt>().getSExtValue());
    os << ";\n";
    if (!zero)
      os << "[[maybe_unused]] static const bool " << name
         << "_filled = (std::fill_n(" << name << ", "
         << dense.getNumElements() << ", " << value << "), true);\n";
  } else {
    os << " = {";
    int64_t i = 0;
    if (f32)
      for (const APFloat &x : dense.getValues<APFloat>())
        os << (i++ ? ", " : "") << cpp::floatLiteral(x.convertToFloat());
    else
      for (const APInt &x : dense.getValues<APInt>())
        os << (i++ ? ", " : "") << x.getSExtValue();
    os << "};\n";
  }
  // The kernels may read a copy of their own (device memory); the host
  // keeps the array for dropout keys and the loss gradient's seed.
  std::string kernelName =
      target.placeConstant(bucket, name, f32 ? "float" : "int32_t", os);
  os << "\n";
  context.setConstant(op.getResult(), name.str(), kernelName);
}

LogicalResult FileEmitter::emitReturn(func::ReturnOp ret, FunctionKind kind,
                                      cpp::EmitContext &context,
                                      SmallVector<OpCall> &calls) {
  std::string body, comment;
  if (kind == FunctionKind::Encode) {
    // Its results are the caches it stored.
    if (ret.getNumOperands() != 0)
      return ret.emitOpError() << "of @encode must return nothing";
    return success();
  }
  if (kind == FunctionKind::Step) {
    FailureOr<StepResults> results =
        readStepResults(ret->getParentOfType<func::FuncOp>());
    if (failed(results))
      return failure();
    auto pointerOr = [&](int i) -> FailureOr<std::string> {
      return i >= 0 ? context.pointer(ret.getOperand(i))
                    : FailureOr<std::string>(std::string("nullptr"));
    };
    auto loss = pointerOr(0), tokens = pointerOr(results->tokens),
         crossEntropy = pointerOr(results->crossEntropy),
         norm = pointerOr(results->gradNorm);
    if (failed(loss) || failed(tokens) || failed(crossEntropy) || failed(norm))
      return failure();
    body = target.readLoss(*loss, *tokens, *crossEntropy, *norm);
    comment = "the step's loss, token count, cross-entropy and gradient norm";
  } else {
    if (ret.getNumOperands() != 1)
      return ret.emitOpError() << "must return the logits";
    auto logits = context.pointer(ret.getOperand(0));
    if (failed(logits))
      return failure();
    LogitsRead read =
        target.readLogits(*logits, cpp::numElements(ret.getOperand(0)));
    body = read.body;
    comment = read.comment;
  }
  std::string name = namesOf(kind).finish;
  os << "// func.return: " << comment << "\n"
     << "static void " << name << "(StepFrame &f) {\n"
     << body << "}\n\n";
  calls.push_back({name, nullptr});
  return success();
}

LogicalResult FileEmitter::emitFunction(const Bucket &bucket,
                                        FunctionKind kind) {
  func::FuncOp function = bucket.function(kind);
  FunctionNames names = namesOf(kind);
  StringRef prefix = names.opPrefix, entry = names.entry;
  SmallVector<OpCall> calls;
  // The ids (as many as the function's arguments hold), lr and step, where
  // the target hands them over before the first op.
  if (std::optional<std::string> upload =
          target.inputUpload(idsOf(function, "source_ids"),
                             std::max(idsOf(function, "target_in_ids"),
                                      idsOf(function, "target_out_ids")))) {
    std::string name = names.upload;
    os << "static void " << name << "(StepFrame &f) {\n" << *upload << "}\n\n";
    calls.push_back({name, nullptr});
  }
  cpp::EmitContext context(target, argumentExpressions(function, target),
                           variableOffsets, bucket.cacheOffsets);
  std::string constantPrefix = names.constantPrefix;
  int index = 0;
  for (Operation &op : function.getBody().front()) {
    ++index;
    // Constants first: they are outside the arena too (tg::writesNoCode),
    // but written here as static arrays.
    if (auto constant = llvm::dyn_cast<tg::ConstantOp>(op)) {
      if (onlyReadAsLiteral(constant.getResult()))
        continue; // written into the loops that read it
      if (!llvm::isa<DenseElementsAttr>(constant.getValue()))
        return constant.emitOpError()
               << "holds a non-dense constant, which the emitter does not "
                  "write";
      emitConstant(constant, constantPrefix + std::to_string(index), bucket,
                   context);
      continue;
    }
    if (tg::writesNoCode(&op))
      continue; // aliases: the state, the input's bytes
    if (auto ret = llvm::dyn_cast<func::ReturnOp>(op)) {
      if (failed(emitReturn(ret, kind, context, calls)))
        return failure();
      continue;
    }
    std::string name =
        prefix.str() + std::to_string(index) + "_" + shortName(&op);
    std::string body, kernels;
    llvm::raw_string_ostream bodyStream(body), kernelStream(kernels);
    bool elementwise = op.hasTrait<tg::traits::ElementwiseLoop>();
    if (failed(elementwise ? cpp::emitElementwise(&op, name, context,
                                                  bodyStream, kernelStream)
                           : cpp::emitKernelCall(&op, context, bodyStream)))
      return failure();
    os << "// " << op.getName() << " at "
       << commentText(describeLocation(op.getLoc())) << "\n"
       << kernels << "static void " << name << "(StepFrame &f) {\n"
       << body << "}\n\n";
    calls.push_back({name, &op});
  }
  return target.writeEntry({kind, entry.str(), function, std::move(calls)},
                           context, os);
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
      if (failed(checkVariablePlaces(bucket, kind)))
        return failure();
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

LogicalResult FileEmitter::checkVariablePlaces(const Bucket &bucket,
                                               FunctionKind kind) {
  // A decoding cache elsewhere (a model's own `cache` variable in its
  // loss) had no place: its reads and writes went to the state's first
  // bytes, over the first parameter, at every step.
  const bool decoder =
      kind == FunctionKind::Encode || kind == FunctionKind::DecodeStep;
  Operation *refused = nullptr;
  std::string why;
  bucket.function(kind).walk([&](Operation *op) {
    op->getAttrDictionary().walk([&](FlatSymbolRefAttr ref) {
      auto variable =
          SymbolTable::lookupNearestSymbolFrom<tg::VariableOp>(op, ref);
      if (refused || !variable)
        return;
      StringRef name = variable.getSymName();
      if (variable.getCache() && !decoder)
        why = "a decoding cache (`cache`), which only the incremental "
              "decoder's @encode and @decode_step use: keep a model's own "
              "state in a variable without `cache`";
      else if (!variable.getCache() && !variableOffsets.contains(name))
        why = "not in the program's state";
      else if (variable.getCache() && !bucket.cacheOffsets.contains(name))
        why = "not among the decoder's caches";
      else
        return;
      refused = op;
      why = "uses @" + name.str() + ", " + why;
    });
    return refused ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (refused)
    return refused->emitOpError() << why;
  return success();
}

LogicalResult emitProgram(ArrayRef<ModuleOp> modules,
                          const CompiledModelInfo &info, ProgramTarget &target,
                          raw_ostream &os) {
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

} // namespace cpp
} // namespace tgc
