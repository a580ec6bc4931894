//===- InterpreterTrainer.cpp - the training step on the interpreter ------===//
#include "codegen/InterpreterTrainer.h"

#include "ir/TgOps.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace tgc {

namespace {

HostTensor ids(const std::vector<int32_t> &values, int64_t rows, int64_t cols) {
  return HostTensor::i32({rows, cols},
                         std::vector<double>(values.begin(), values.end()));
}

} // namespace

FailureOr<std::unique_ptr<InterpreterTrainer>>
InterpreterTrainer::create(ModuleOp module, Precision precision, uint32_t seed,
                           StringRef stepFunction) {
  FailureOr<StepSignature> signature = readStepSignature(module, stepFunction);
  if (failed(signature))
    return failure();
  std::unique_ptr<InterpreterTrainer> trainer(
      new InterpreterTrainer(module, precision, seed));
  trainer->signature_ = *signature;
  trainer->interpreter_.initializeVariables(seed);
  return trainer;
}

FailureOr<InterpreterTrainer::StepResult>
InterpreterTrainer::step(const runtime::Batch &batch) {
  StepSignature &s = signature_;
  int64_t step = stepsDone_ + 1;
  double lr = s.schedule.learningRate(step);
  std::vector<HostTensor> args(s.function.getNumArguments());
  args[s.source] = ids(batch.source, batch.batchSize, batch.sourceLength);
  args[s.targetIn] = ids(batch.targetIn, batch.batchSize, batch.targetLength);
  args[s.targetOut] = ids(batch.targetOut, batch.batchSize, batch.targetLength);
  if (s.key >= 0)
    args[s.key] = HostTensor::i32(
        {2}, {double(static_cast<int32_t>(seed_)), double(step)});
  args[s.lr] = HostTensor::scalar(lr);
  args[s.step] = HostTensor::scalar(double(step), ElementType::I32);

  auto results = interpreter_.run(s.function.getName(), args);
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
