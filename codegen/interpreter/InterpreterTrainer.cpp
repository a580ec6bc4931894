//===- InterpreterTrainer.cpp - the training step on the interpreter ------===//
#include "codegen/interpreter/InterpreterTrainer.h"

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
  runtime::StepInput input{
      seed_, step, static_cast<float>(signature_.schedule.learningRate(step)),
      step};
  input.weightDecay = signature_.defaultWeightDecay;
  return run(batch, input);
}

bool InterpreterTrainer::runStep(const runtime::Batch &batch,
                                 const runtime::StepInput &input,
                                 runtime::StepOutcome &outcome) {
  FailureOr<StepResult> result = run(batch, input);
  if (failed(result))
    return false;
  outcome = {static_cast<float>(result->loss),
             static_cast<int32_t>(result->tokens),
             static_cast<float>(result->gradNorm)};
  if (result->crossEntropy)
    outcome.crossEntropy = static_cast<float>(*result->crossEntropy);
  return true;
}

FailureOr<Operation *>
InterpreterTrainer::firstNonFinite(const runtime::Batch &batch,
                                   const runtime::StepInput &input) {
  return interpreter_.firstNonFinite(signature_.function.getName(),
                                     arguments(batch, input));
}

std::vector<HostTensor>
InterpreterTrainer::arguments(const runtime::Batch &batch,
                              const runtime::StepInput &input) const {
  const StepSignature &s = signature_;
  mlir::func::FuncOp function = s.function;
  std::vector<HostTensor> args(function.getNumArguments());
  if (s.source >= 0) // a language model has none
    args[s.source] = ids(batch.source, batch.batchSize, batch.sourceLength);
  args[s.targetIn] = ids(batch.targetIn, batch.batchSize, batch.targetLength);
  args[s.targetOut] = ids(batch.targetOut, batch.batchSize, batch.targetLength);
  if (s.key >= 0)
    args[s.key] =
        HostTensor::i32({2}, {double(static_cast<int32_t>(input.seed)),
                              double(input.dropoutStep)});
  args[s.lr] = HostTensor::scalar(input.lr);
  args[s.step] = HostTensor::scalar(double(input.step), ElementType::I32);
  args[s.gradWeight] = HostTensor::scalar(input.gradWeight);
  args[s.updatePhase] =
      HostTensor::scalar(double(input.updatePhase), ElementType::I32);
  args[s.clipNorm] = HostTensor::scalar(input.clipNorm);
  if (s.weightDecay >= 0)
    args[s.weightDecay] = HostTensor::scalar(input.weightDecay);
  // The run-time hyperparameters the step takes, else the model's.
  auto hyper = [&](int at, std::optional<float> given, float model) {
    if (at >= 0)
      args[at] = HostTensor::scalar(given.value_or(model));
  };
  const runtime::StepHyperparameters &h = input.hyper;
  hyper(s.labelSmoothing, h.labelSmoothing, s.defaultLabelSmoothing);
  hyper(s.adamBeta1, h.adamBeta1, s.defaultAdamBeta1);
  hyper(s.adamBeta2, h.adamBeta2, s.defaultAdamBeta2);
  hyper(s.adamEps, h.adamEps, s.defaultAdamEps);
  hyper(s.dropout, h.dropout, s.defaultDropout);
  hyper(s.attentionDropout, h.attentionDropout, s.defaultAttentionDropout);
  return args;
}

FailureOr<InterpreterTrainer::StepResult>
InterpreterTrainer::run(const runtime::Batch &batch,
                        const runtime::StepInput &input) {
  auto results =
      interpreter_.run(signature_.function.getName(), arguments(batch, input));
  if (failed(results))
    return failure();
  stepsDone_ = input.step;
  const StepResults &at = signature_.results;
  auto scalar = [&](int result) { return (*results)[result][0]; };
  StepResult result{scalar(0),
                    at.tokens >= 0 ? static_cast<int64_t>(scalar(at.tokens))
                                   : batch.targetTokens(),
                    input.lr, scalar(at.gradNorm)};
  if (at.crossEntropy >= 0)
    result.crossEntropy = scalar(at.crossEntropy);
  return result;
}

} // namespace tgc
