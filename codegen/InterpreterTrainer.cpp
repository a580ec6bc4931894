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
  int64_t step = stepsDone_ + 1;
  return run(batch, seed_, step, signature_.schedule.learningRate(step));
}

bool InterpreterTrainer::runStep(const runtime::Batch &batch,
                                 const runtime::StepInput &input,
                                 runtime::StepOutcome &outcome) {
  FailureOr<StepResult> result = run(batch, input.seed, input.step, input.lr);
  if (failed(result))
    return false;
  outcome = {static_cast<float>(result->loss),
             static_cast<int32_t>(result->tokens)};
  return true;
}

FailureOr<InterpreterTrainer::StepResult>
InterpreterTrainer::run(const runtime::Batch &batch, uint32_t seed,
                        int64_t step, double lr) {
  StepSignature &s = signature_;
  std::vector<HostTensor> args(s.function.getNumArguments());
  args[s.source] = ids(batch.source, batch.batchSize, batch.sourceLength);
  args[s.targetIn] = ids(batch.targetIn, batch.batchSize, batch.targetLength);
  args[s.targetOut] = ids(batch.targetOut, batch.batchSize, batch.targetLength);
  if (s.key >= 0)
    args[s.key] = HostTensor::i32(
        {2}, {double(static_cast<int32_t>(seed)), double(step)});
  args[s.lr] = HostTensor::scalar(lr);
  args[s.step] = HostTensor::scalar(double(step), ElementType::I32);

  auto results = interpreter_.run(s.function.getName(), args);
  if (failed(results))
    return failure();
  stepsDone_ = step;
  return StepResult{(*results)[0][0],
                    results->size() > 1
                        ? static_cast<int64_t>((*results)[1][0])
                        : batch.targetTokens(),
                    lr};
}

} // namespace tgc
