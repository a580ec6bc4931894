//===- Builder.cpp - builds a tg module from the C++ DSL -----------------===//
#include "frontend/Builder.h"
#include "frontend/ModelRegistry.h"

#include "ir/TgOps.h"
#include "ir/TgVerify.h"
#include "runtime/program/ProcessEnd.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <utility>

using namespace mlir;

namespace tgc {

namespace {
/// Thrown by Builder::fail after the diagnostic is out; caught by buildGraph.
/// It only ever unwinds through DSL code, never through MLIR.
struct BuildAbandoned {};

/// The Builder whose body buildGraph is running on this thread (null
/// outside one), for Builder::failBuilding.
thread_local Builder *building = nullptr;
} // namespace

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

llvm::ArrayRef<int64_t> Tensor::shape(std::source_location where) const {
  if (!builder_)
    Builder::failBuilding(where, "an unset Tensor is used");
  return llvm::cast<RankedTensorType>(value_.getType()).getShape();
}

int64_t Tensor::dim(int64_t index, std::source_location where) const {
  llvm::ArrayRef<int64_t> sizes = shape(where);
  const int64_t rank = static_cast<int64_t>(sizes.size());
  if (index < -rank || index >= rank)
    Builder::failBuilding(where, "dim(" + std::to_string(index) +
                                     ") of a tensor of rank " +
                                     std::to_string(rank) + " " +
                                     tg::formatShape(sizes));
  return sizes[index < 0 ? rank + index : index];
}

DType Tensor::dtype(std::source_location where) const {
  if (!builder_)
    Builder::failBuilding(where, "an unset Tensor is used");
  auto element = llvm::cast<RankedTensorType>(value_.getType()).getElementType();
  return element.isF32() ? DType::F32 : DType::I32;
}

//===----------------------------------------------------------------------===//
// Builder
//===----------------------------------------------------------------------===//

Builder::Builder(MLIRContext &context, llvm::StringRef functionName)
    : builder_(&context), modelName_(functionName.str()) {
  static std::atomic<uint64_t> builds{0};
  graph_ = ++builds;
  context.getOrLoadDialect<tg::TGDialect>();
  context.getOrLoadDialect<func::FuncDialect>();
  module_ = ModuleOp::create(builder_.getUnknownLoc());
  builder_.setInsertionPointToEnd(module_->getBody());
  // Errors about the model as a whole point at its registration.
  Location at = builder_.getUnknownLoc();
  if (const ModelDefinition *model = modelBeingBuilt()) {
    modelName_ = model->name;
    llvm::StringRef place = model->registeredAt;
    auto [file, line] = place.rsplit(':');
    unsigned number = 0;
    if (!line.getAsInteger(10, number))
      at = FileLineColLoc::get(&context, file, number, 1);
  }
  function_ = builder_.create<func::FuncOp>(at, functionName,
                                            builder_.getFunctionType({}, {}));
  builder_.setInsertionPointToEnd(function_.addEntryBlock());
}

Builder::Scope::~Scope() {
  if (builder)
    builder->scopes_.pop_back();
}

Builder::Scope Builder::scope(llvm::StringRef name, Where where) {
  if (name.empty())
    fail(where, "a scope needs a name (its parameters are named "
                "'<scope>.<name>')");
  scopes_.push_back(name.str());
  return Scope(this);
}

Builder::CallSite::~CallSite() {
  if (builder)
    builder->callSites_.pop_back();
}

Builder::CallSite Builder::calledFrom(Where where) {
  callSites_.push_back(where);
  return CallSite(this);
}

std::string Builder::qualified(llvm::StringRef name) const {
  std::string result;
  for (const std::string &scope : scopes_)
    result += scope + ".";
  return result + name.str();
}

Location Builder::location(Where where) {
  return FileLineColLoc::get(&context(), where.file_name(), where.line(),
                             where.column());
}

void Builder::fail(Where where, const llvm::Twine &message) {
  InFlightDiagnostic error = emitError(location(where)) << message;
  for (const Where &site : llvm::reverse(callSites_))
    error.attachNote(location(site)) << "called from here";
  error.report();
  abandon();
}

void Builder::abandon() {
  failed_ = true;
  throw BuildAbandoned{};
}

void Builder::failBuilding(Where where, const llvm::Twine &message) {
  if (building)
    building->fail(where, message);
  // Outside buildGraph (an op at a model file's static initialization, or
  // on a Builder made by hand) there is no context to report through and
  // no buildGraph to catch the abandonment (an exception would leave
  // dlopen): the message, the files tgc removes on a signal (the model's
  // compiled object) removed as on one, and the exit status of a failed
  // build.
  llvm::errs() << where.file_name() << ":" << where.line() << ": error: "
               << message << "\n";
  llvm::sys::RunInterruptHandlers();
  // At once: not through tgc's atexit hook, which takes an exit() during a
  // model file's code for the model's own; through main's immediate ender
  // where it installed one (tgc's tells its watching parent that this end
  // is tgc's, ModelCodeWatch.h).
  std::fflush(nullptr);
  if (runtime::immediateProcessEnder.load())
    runtime::endProcessNow(1);
  std::_Exit(1);
}

Builder &Builder::current(Where where) {
  if (!building)
    failBuilding(where, "tensors can only be made while a model is being "
                        "built (inside buildGraph)");
  return *building;
}

RankedTensorType Builder::tensorType(llvm::ArrayRef<int64_t> shape,
                                     DType type) {
  Type element = type == DType::F32 ? Type(builder_.getF32Type())
                                    : Type(builder_.getI32Type());
  return RankedTensorType::get(shape, element);
}

void Builder::addArgument(llvm::StringRef name, Type type, Location loc) {
  function_.front().addArgument(type, loc);
  argumentNames_.push_back(builder_.getDictionaryAttr(
      builder_.getNamedAttr("tg.name", builder_.getStringAttr(name))));
}

std::string Builder::declare(llvm::StringRef what, llvm::StringRef name,
                             llvm::ArrayRef<int64_t> shape, Where where) {
  if (name.empty())
    fail(where, what + " needs a name (it keys the checkpoint's tensors)");
  // Inputs name the step's arguments, which a program fills by name: no
  // scope renames them (target_in_ids in a scope "lm" was "lm.target_in_ids",
  // which no program takes).
  std::string full = what == "input" ? name.str() : qualified(name);
  // Shapes of DSL tensors are static and positive.
  for (int64_t dim : shape)
    if (dim <= 0)
      fail(where, what + " '" + full + "' needs positive dimensions, got " +
                      tg::formatShape(shape));
  if (!names_.insert(full).second)
    fail(where, what + " '" + full + "' is declared twice");
  // The optimizer names its moments "adam.m.<parameter>", "adam.v.<...>".
  if (what == "parameter" && (llvm::StringRef(full).starts_with("adam.m.") ||
                              llvm::StringRef(full).starts_with("adam.v.")))
    fail(where, what + " '" + full +
                    "': names beginning with 'adam.m.' or 'adam.v.' are the "
                    "optimizer's (its moments)");
  return full;
}

Tensor Builder::input(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
                      DType type, Where where) {
  std::string full = declare("input", name, shape, where);
  auto tensorTy = tensorType(shape, type);
  addArgument(full, tensorTy, location(where));
  return wrap(function_.front().getArguments().back());
}

Value Builder::dropoutKey(Where where) {
  if (!dropoutKey_) {
    addArgument("dropout_key", tensorType({2}, DType::I32), location(where));
    dropoutKey_ = function_.front().getArguments().back();
  }
  return dropoutKey_;
}

static tg::InitKind toInitKind(Init::Kind kind) {
  switch (kind) {
  case Init::Kind::Zeros:
    return tg::InitKind::zeros;
  case Init::Kind::Ones:
    return tg::InitKind::ones;
  case Init::Kind::Normal:
    return tg::InitKind::normal;
  case Init::Kind::Uniform:
    return tg::InitKind::uniform;
  case Init::Kind::XavierUniform:
    return tg::InitKind::xavier_uniform;
  }
  llvm_unreachable("unknown Init::Kind");
}

Tensor Builder::param(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
                      Init init, const ParamOptions &options,
                      Where where) {
  std::string full = declare("parameter", name, shape, where);
  if (options.frozen && options.weightDecay)
    fail(where, "parameter '" + full +
                    "': a frozen parameter is not updated, so it takes no "
                    "weight decay setting");
  if (init.kind == Init::Kind::XavierUniform && shape.size() < 2)
    fail(where, "parameter '" + full +
                    "': xavier_uniform needs rank >= 2 (fan-in, fan-out)");
  if (init.scale && !(*init.scale > 0.0))
    fail(where, "parameter '" + full + "': the init scale must be positive");

  auto type = tensorType(shape, DType::F32);
  Location loc = location(where);
  {
    OpBuilder::InsertionGuard guard(builder_);
    builder_.setInsertionPoint(function_);
    builder_.create<tg::VariableOp>(loc, full, type, toInitKind(init.kind),
                                    init.scale, !options.frozen,
                                    options.weightDecay);
  }
  return wrap(builder_.create<tg::LoadOp>(loc, type, full));
}

void Builder::setLoss(Tensor loss, Tensor tokens, Where where) {
  // Another graph's tensors first: their values may be gone.
  if ((loss && loss.graph() != graph_) || (tokens && tokens.graph() != graph_))
    fail(where, "a tensor of another graph is used (kept from an earlier "
                "buildGraph, e.g. an earlier bucket's build)");
  if (!loss || loss.rank() != 0 || loss.dtype() != DType::F32)
    fail(where, "the loss must be an f32 scalar");
  if (!tokens || tokens.rank() != 0 || tokens.dtype() != DType::I32)
    fail(where, "the token count must be an i32 scalar");
  if (loss_)
    fail(where, "the loss is set twice (the first would be dropped without "
                "a word)");
  loss_ = loss;
  tokens_ = tokens;
}

NamedAttribute Builder::optimizerAttribute() {
  auto f32 = [&](float value) { return builder_.getF32FloatAttr(value); };
  return builder_.getNamedAttr(
      "tg.optimizer",
      builder_.getDictionaryAttr({
          builder_.getNamedAttr("name", builder_.getStringAttr("adam")),
          builder_.getNamedAttr("beta1", f32(adam_.beta1)),
          builder_.getNamedAttr("beta2", f32(adam_.beta2)),
          builder_.getNamedAttr("epsilon", f32(adam_.epsilon)),
          builder_.getNamedAttr("weight_decay", f32(adam_.weightDecay)),
      }));
}

NamedAttribute Builder::scheduleAttribute() {
  NamedAttrList schedule;
  schedule.set("name", builder_.getStringAttr("warmup"));
  schedule.set("d_model", builder_.getI64IntegerAttr(schedule_.dModel));
  schedule.set("warmup", builder_.getI64IntegerAttr(schedule_.warmupSteps));
  schedule.set("factor", builder_.getF64FloatAttr(schedule_.factor));
  // Another shape after the warmup, or a peak of the model's own.
  if (schedule_.kind != LrScheduler::InverseSqrt || schedule_.peak > 0 ||
      schedule_.minimum > 0) {
    schedule.set("kind", builder_.getStringAttr(lrSchedulerName(schedule_.kind)));
    schedule.set("peak", builder_.getF64FloatAttr(schedule_.peak));
    schedule.set("minimum", builder_.getF64FloatAttr(schedule_.minimum));
  }
  return builder_.getNamedAttr("tg.schedule",
                               schedule.getDictionary(&context()));
}

void Builder::setOptimizer(const AdamConfig &adam, Where where) {
  adam_ = adam;
  if (failed(tg::verifyStepDeclaration(location(where), optimizerAttribute())))
    abandon();
}

void Builder::setSchedule(const WarmupSchedule &schedule, Where where) {
  schedule_ = schedule;
  scheduleSet_ = true;
  if (failed(tg::verifyStepDeclaration(location(where), scheduleAttribute())))
    abandon();
}

FailureOr<OwningOpRef<ModuleOp>> Builder::finish() {
  // A model that caught the abandonment of an error (catch (...)) has
  // still failed.
  if (failed_)
    return failure();
  if (!loss_) {
    emitError(function_.getLoc())
        << "model '" << modelName_ << "' declares no loss (call "
        << "Builder::setLoss)";
    return failure();
  }
  // The schedule has no default that suits every model: d_model is the
  // model's.
  if (!scheduleSet_) {
    emitError(function_.getLoc())
        << "model '" << modelName_
        << "' declares no learning-rate schedule (call Builder::setSchedule "
           "with its d_model and warmup steps)";
    return failure();
  }
  builder_.create<func::ReturnOp>(loss_.value().getLoc(),
                                  ValueRange{loss_.value(), tokens_.value()});
  function_.setFunctionType(builder_.getFunctionType(
      function_.front().getArgumentTypes(),
      TypeRange{loss_.value().getType(), tokens_.value().getType()}));
  function_.setAllArgAttrs(argumentNames_);

  for (NamedAttribute declaration : {optimizerAttribute(), scheduleAttribute()})
    module_->getOperation()->setAttr(declaration.getName(),
                                     declaration.getValue());
  // The DSL's checks mirror the verifiers; this catches any gap between them.
  if (failed(verify(*module_)))
    return failure();
  return std::move(module_);
}

FailureOr<OwningOpRef<ModuleOp>>
buildGraph(MLIRContext &context, llvm::StringRef functionName,
           const std::function<void(Builder &)> &body,
           std::source_location where) {
  // Its tensors would mix with the outer graph's, and its failure would be
  // blamed on the outer one.
  if (building)
    building->fail(where, "buildGraph inside buildGraph: a model builds one "
                          "graph (use a helper function taking the Builder)");
  Builder builder(context, functionName);
  Builder *outer = std::exchange(building, &builder);
  auto restore = llvm::make_scope_exit([&] { building = outer; });
  try {
    body(builder);
  } catch (const BuildAbandoned &) {
    return failure();
  }
  return builder.finish();
}

} // namespace tgc
