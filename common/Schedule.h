//===- Schedule.h - the learning-rate schedule -----------------*- C++ -*-===//
//
// The one implementation of the warmup schedule: the DSL records it
// (frontend/Builder.h), codegen/StepSignature.h reads it back from a module,
// and the training loop evaluates it each step (runtime/program/train/). In
// common/, so that none of them includes another floor's headers for it.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_COMMON_SCHEDULE_H
#define TGC_COMMON_SCHEDULE_H

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace tgc::runtime {

/// The paper's schedule (section 5.3): linear warmup, then decay with the
/// inverse square root of the step.
///   lr = factor * dModel^-0.5 * min(step^-0.5, step * warmup^-1.5), step >= 1.
inline double noamLearningRate(double dModel, double warmup, int64_t step,
                               double factor = 1.0) {
  double s = static_cast<double>(step);
  return factor / std::sqrt(dModel) *
         std::min(1.0 / std::sqrt(s), s / (warmup * std::sqrt(warmup)));
}

} // namespace tgc::runtime

namespace tgc {

/// The schedule a model declares (DSL: Builder::setSchedule; IR: the module's
/// `tg.schedule` attribute) and the runtime evaluates each step.
struct WarmupSchedule {
  int64_t dModel = 512;
  int64_t warmupSteps = 4000;
  double factor = 1.0;

  double learningRate(int64_t step) const {
    return runtime::noamLearningRate(static_cast<double>(dModel),
                                     static_cast<double>(warmupSteps), step,
                                     factor);
  }
};

} // namespace tgc

#endif // TGC_COMMON_SCHEDULE_H
