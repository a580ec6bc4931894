//===- InterpreterTrainer.cpp - the training step on the interpreter ------===//
#include "codegen/InterpreterTrainer.h"

#include "ir/TgOps.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace tgc {

namespace {

FailureOr<WarmupSchedule> readSchedule(ModuleOp module) {
  auto attr = module->getAttrOfType<DictionaryAttr>("tg.schedule");
  auto name = attr ? attr.getAs<StringAttr>("name") : StringAttr();
  auto dModel = attr ? attr.getAs<IntegerAttr>("d_model") : IntegerAttr();
  auto warmup = attr ? attr.getAs<IntegerAttr>("warmup") : IntegerAttr();
  if (!name || name.getValue() != "warmup" || !dModel || !warmup ||
      dModel.getInt() < 1 || warmup.getInt() < 1)
    return module.emitError()
           << "the module declares no usable learning-rate schedule: expected "
              "tg.schedule = {name = \"warmup\", d_model = D, warmup = W} "
              "with D, W >= 1";
  WarmupSchedule schedule{dModel.getInt(), warmup.getInt(), 1.0};
  if (auto factor = attr.getAs<FloatAttr>("factor"))
    schedule.factor = factor.getValueAsDouble();
  return schedule;
}

HostTensor ids(const std::vector<int32_t> &values, int64_t rows, int64_t cols) {
  return HostTensor::i32({rows, cols},
                         std::vector<double>(values.begin(), values.end()));
}

} // namespace

FailureOr<std::unique_ptr<InterpreterTrainer>>
InterpreterTrainer::create(ModuleOp module, Precision precision, uint32_t seed,
                           StringRef stepFunction) {
  auto function = module.lookupSymbol<func::FuncOp>(stepFunction);
  if (!function)
    return module.emitError() << "no training step @" << stepFunction
                              << " (run tg-training-pipeline first)";
  FailureOr<WarmupSchedule> schedule = readSchedule(module);
  if (failed(schedule))
    return failure();

  std::unique_ptr<InterpreterTrainer> trainer(
      new InterpreterTrainer(module, precision, seed));
  trainer->function_ = function;
  trainer->schedule_ = *schedule;
  for (unsigned i = 0; i < function.getNumArguments(); ++i) {
    auto name = function.getArgAttrOfType<StringAttr>(i, "tg.name");
    StringRef n = name ? name.getValue() : "";
    int *slot = llvm::StringSwitch<int *>(n)
                    .Case("source_ids", &trainer->source_)
                    .Case("target_in_ids", &trainer->targetIn_)
                    .Case("target_out_ids", &trainer->targetOut_)
                    .Case("dropout_key", &trainer->key_)
                    .Case("lr", &trainer->lr_)
                    .Case("step", &trainer->step_)
                    .Default(nullptr);
    if (!slot)
      return function.emitError()
             << "argument #" << i << " of @" << stepFunction
             << " is not a training input (source_ids, target_in_ids, "
                "target_out_ids, dropout_key, lr, step)";
    *slot = static_cast<int>(i);
  }
  if (trainer->source_ < 0 || trainer->targetIn_ < 0 ||
      trainer->targetOut_ < 0 || trainer->lr_ < 0 || trainer->step_ < 0)
    return function.emitError()
           << "@" << stepFunction << " must take source_ids, target_in_ids, "
           << "target_out_ids, lr and step";

  auto shapeOf = [&](int arg) {
    return cast<RankedTensorType>(function.getArgument(arg).getType()).getShape();
  };
  ArrayRef<int64_t> source = shapeOf(trainer->source_);
  ArrayRef<int64_t> target = shapeOf(trainer->targetOut_);
  int64_t vocabulary = 0;
  module.walk([&](tg::CrossEntropyOp op) {
    vocabulary = op.getLogits().getType().getShape().back();
  });
  if (source.size() != 2 || target.size() != 2 || source[0] != target[0] ||
      shapeOf(trainer->targetIn_) != target || vocabulary == 0)
    return function.emitError()
           << "@" << stepFunction << " must take [batch, length] token ids "
           << "and compute a cross-entropy loss";
  trainer->shape_ = {source[0], source[1], target[1],
                     static_cast<int32_t>(vocabulary)};
  trainer->interpreter_.initializeVariables(seed);
  return trainer;
}

FailureOr<InterpreterTrainer::StepResult>
InterpreterTrainer::step(const runtime::Batch &batch) {
  int64_t step = stepsDone_ + 1;
  double lr = schedule_.learningRate(step);
  std::vector<HostTensor> args(function_.getNumArguments());
  args[source_] = ids(batch.source, batch.batchSize, batch.sourceLength);
  args[targetIn_] = ids(batch.targetIn, batch.batchSize, batch.targetLength);
  args[targetOut_] = ids(batch.targetOut, batch.batchSize, batch.targetLength);
  if (key_ >= 0)
    args[key_] = HostTensor::i32(
        {2}, {double(static_cast<int32_t>(seed_)), double(step)});
  args[lr_] = HostTensor::scalar(lr);
  args[step_] = HostTensor::scalar(double(step), ElementType::I32);

  auto results = interpreter_.run(function_.getName(), args);
  if (failed(results))
    return failure();
  ++stepsDone_;
  return StepResult{(*results)[0][0],
                    results->size() > 1
                        ? static_cast<int64_t>((*results)[1][0])
                        : batch.targetTokens(),
                    lr};
}

} // namespace tgc
