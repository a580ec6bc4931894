//===- Builder.h - builds a tg module from the C++ DSL -----------*- C++ -*-===//
//
// A model is a C++ function over a `Builder`: it declares inputs and
// parameters, combines tensors with the ops of frontend/Ops.h and declares
// its loss, optimizer and learning-rate schedule. `buildGraph` runs it and
// returns the verified module, or failure after a diagnostic that names the
// model source's file:line (a shape error stops the build at once).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_FRONTEND_BUILDER_H
#define TGC_FRONTEND_BUILDER_H

#include "common/Schedule.h"
#include "frontend/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tgc {

/// Adam's hyperparameters (the paper's values by default).
struct AdamConfig {
  float beta1 = 0.9f;
  float beta2 = 0.98f;
  float epsilon = 1e-9f;
  /// AdamW's decoupled weight decay (0: plain Adam); `--weight-decay`
  /// overrides it at run time.
  float weightDecay = 0.0f;
};

/// How the optimizer treats one parameter (Builder::param).
struct ParamOptions {
  /// Whether AdamW decays it; unset: not rank-0 or rank-1 parameters
  /// (scalars, biases, norms' gains) nor embedding tables, every other
  /// parameter.
  std::optional<bool> weightDecay;
  /// Not trained: no gradient, no optimizer state, no update; initialized
  /// and checkpointed like the others.
  bool frozen = false;
};

class Builder {
public:
  using Where = std::source_location;

  Builder(mlir::MLIRContext &context, llvm::StringRef functionName);

  /// Parameter names are prefixed by the open scopes: inside
  /// `auto s = b.scope("encoder")`, `param("w")` is named "encoder.w".
  /// Input names are not (they name the step's arguments).
  class Scope {
  public:
    Scope(Scope &&other) : builder(other.builder) { other.builder = nullptr; }
    ~Scope();

  private:
    friend class Builder;
    explicit Scope(Builder *builder) : builder(builder) {}
    Builder *builder;
  };
  [[nodiscard]] Scope scope(llvm::StringRef name,
                            Where where = Where::current());

  /// A model's helper function marks where it was called from, so that an
  /// error inside it also names the chain of calls that led there:
  ///   Tensor block(Builder &b, Tensor x, Where where = Where::current()) {
  ///     auto site = b.calledFrom(where);
  ///     ...
  /// The error is at the failing line, with a note "called from here" at
  /// each open call site, innermost first.
  class CallSite {
  public:
    CallSite(CallSite &&other) : builder(other.builder) {
      other.builder = nullptr;
    }
    ~CallSite();

  private:
    friend class Builder;
    explicit CallSite(Builder *builder) : builder(builder) {}
    Builder *builder;
  };
  [[nodiscard]] CallSite calledFrom(Where where);

  /// A run-time input of the step (an argument of the generated function).
  Tensor input(llvm::StringRef name, llvm::ArrayRef<int64_t> shape, DType type,
               Where where = Where::current());
  /// A trainable parameter: a module-level tg.variable, read once here.
  Tensor param(llvm::StringRef name, llvm::ArrayRef<int64_t> shape, Init init,
               Where where = Where::current()) {
    return param(name, shape, init, ParamOptions{}, where);
  }
  /// The same, trained as `options` say.
  Tensor param(llvm::StringRef name, llvm::ArrayRef<int64_t> shape, Init init,
               const ParamOptions &options, Where where = Where::current());

  /// Declares the scalar loss and its token count; the step returns both.
  void setLoss(Tensor loss, Tensor tokens, Where where = Where::current());
  /// The optimizer's and the schedule's settings, checked here (an error
  /// at `where`: betas in [0, 1), positive sizes, finite numbers, ...).
  void setOptimizer(const AdamConfig &adam, Where where = Where::current());
  void setSchedule(const WarmupSchedule &schedule,
                   Where where = Where::current());

  /// Reports a graph-building error at `where` and abandons the build.
  [[noreturn]] void fail(Where where, const llvm::Twine &message);
  /// The same where no Builder is at hand (an op given an unset Tensor):
  /// through the Builder whose body buildGraph is running on this thread.
  /// Ops are only used inside buildGraph's body.
  [[noreturn]] static void failBuilding(Where where,
                                        const llvm::Twine &message);
  /// The Builder whose body buildGraph is running on this thread, for ops
  /// with no tensor operand (constant, iota); an error at `where` outside
  /// one.
  static Builder &current(Where where);

  // --- used by the ops of frontend/Ops.h ---------------------------------
  mlir::OpBuilder &ops() { return builder_; }
  mlir::MLIRContext &context() { return *builder_.getContext(); }
  mlir::Location location(Where where);
  Tensor wrap(mlir::Value value) { return Tensor(this, value, graph_); }
  /// This build's number, unique in the process (Tensor::graph).
  uint64_t graph() const { return graph_; }
  mlir::RankedTensorType tensorType(llvm::ArrayRef<int64_t> shape, DType type);
  /// The step's dropout key (seed, step): an input created on first use.
  mlir::Value dropoutKey(Where where);
  /// A fresh op id for the next dropout site.
  int64_t nextDropoutId() { return nextDropoutId_++; }

  /// Finishes the function and returns the module (after verifying it).
  mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>> finish();

private:
  std::string qualified(llvm::StringRef name) const;
  /// Abandons the build after a diagnostic already emitted.
  [[noreturn]] void abandon();
  /// The module's tg.optimizer and tg.schedule dictionaries.
  mlir::NamedAttribute optimizerAttribute();
  mlir::NamedAttribute scheduleAttribute();
  /// The qualified name of a new input or parameter (`what`), after
  /// checking its shape and that the name is new.
  std::string declare(llvm::StringRef what, llvm::StringRef name,
                      llvm::ArrayRef<int64_t> shape, Where where);
  void addArgument(llvm::StringRef name, mlir::Type type, mlir::Location loc);

  mlir::OpBuilder builder_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  mlir::func::FuncOp function_;
  std::vector<std::string> scopes_;
  std::vector<Where> callSites_; ///< open calledFrom()s, outermost first
  llvm::StringSet<> names_;
  std::vector<mlir::Attribute> argumentNames_;
  mlir::Value dropoutKey_;
  int64_t nextDropoutId_ = 0;
  Tensor loss_, tokens_;
  AdamConfig adam_;
  WarmupSchedule schedule_;
  bool scheduleSet_ = false;
  /// An error was reported (a model that catches the abandonment still
  /// fails to build).
  bool failed_ = false;
  /// The registered model's name in errors (the function's without one).
  std::string modelName_;
  uint64_t graph_;
};

/// Runs `body` on a fresh Builder whose function is `functionName` and returns
/// the module, or failure once a diagnostic has been emitted. Inside another
/// buildGraph's body it is an error at `where` (one graph a model).
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
buildGraph(mlir::MLIRContext &context, llvm::StringRef functionName,
           const std::function<void(Builder &)> &body,
           std::source_location where = std::source_location::current());

} // namespace tgc

#endif // TGC_FRONTEND_BUILDER_H
