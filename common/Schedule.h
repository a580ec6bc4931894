//===- Schedule.h - the learning-rate schedule -----------------*- C++ -*-===//
//
// The one implementation of the learning-rate schedules: the DSL records the
// model's (frontend/Builder.h: the paper's warmup schedule),
// codegen/StepSignature.h reads it back from a module, a training program's
// flags may choose another shape or peak (--lr-scheduler, --lr, --warmup,
// --min-lr), and the training loop evaluates it each step
// (runtime/program/train/). In common/, so that none of them includes
// another floor's headers for it.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_COMMON_SCHEDULE_H
#define TGC_COMMON_SCHEDULE_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

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

/// The shape of the learning rate after its linear warmup.
enum class LrScheduler {
  InverseSqrt, ///< the paper's: proportional to step^-0.5
  Cosine,      ///< half a cosine from the peak to the minimum at the last step
  Linear,      ///< a straight line from the peak to the minimum at the last step
  Constant,    ///< the peak
};

inline const char *lrSchedulerName(LrScheduler kind) {
  switch (kind) {
  case LrScheduler::InverseSqrt:
    return "inverse_sqrt";
  case LrScheduler::Cosine:
    return "cosine";
  case LrScheduler::Linear:
    return "linear";
  case LrScheduler::Constant:
    return "constant";
  }
  return "?";
}

/// The schedule a model declares (DSL: Builder::setSchedule; IR: the module's
/// `tg.schedule` attribute: the paper's, from dModel, warmupSteps and
/// factor) and what a training program's flags change in it, evaluated each
/// step. Every step's value is a function of these fields and the step
/// alone, so it is the same on every target and after --resume.
struct WarmupSchedule {
  int64_t dModel = 512;
  int64_t warmupSteps = 4000;
  double factor = 1.0;
  LrScheduler kind = LrScheduler::InverseSqrt;
  /// The rate at the end of the warmup; 0: the paper's,
  /// factor * dModel^-0.5 * warmupSteps^-0.5.
  double peak = 0.0;
  /// Cosine and linear: the rate at `lastStep` and after.
  double minimum = 0.0;
  int64_t lastStep = 0;

  double peakRate() const {
    if (peak > 0)
      return peak;
    return factor / std::sqrt(static_cast<double>(dModel)) /
           std::sqrt(static_cast<double>(std::max<int64_t>(warmupSteps, 1)));
  }

  double learningRate(int64_t step) const {
    if (kind == LrScheduler::InverseSqrt && peak <= 0)
      return runtime::noamLearningRate(static_cast<double>(dModel),
                                       static_cast<double>(warmupSteps), step,
                                       factor);
    const double s = static_cast<double>(step),
                 w = static_cast<double>(warmupSteps), top = peakRate();
    if (s < w)
      return top * s / w;
    switch (kind) {
    case LrScheduler::InverseSqrt:
      return top * std::sqrt(std::max(w, 1.0) / s);
    case LrScheduler::Constant:
      return top;
    case LrScheduler::Cosine:
    case LrScheduler::Linear: {
      // From the peak at the warmup's end to the minimum at lastStep; a run
      // that ends by the warmup's end reaches the peak and stops there.
      double span = static_cast<double>(lastStep) - w;
      double done = span > 0 ? std::clamp((s - w) / span, 0.0, 1.0) : 0.0;
      double shape = kind == LrScheduler::Linear
                         ? 1.0 - done
                         : 0.5 * (1.0 + std::cos(M_PI * done));
      return minimum + (top - minimum) * shape;
    }
    }
    return top;
  }

  /// "inverse_sqrt, peak 6.99e-04 at step 4000", "cosine, peak 1.00e-03 at
  /// step 100 to 1.00e-05 at step 5000": what a run's header, its metrics
  /// and its checkpoints record.
  std::string describe() const {
    char text[160];
    int n = std::snprintf(text, sizeof text, "%s, peak %.3g at step %lld",
                          lrSchedulerName(kind), peakRate(),
                          static_cast<long long>(warmupSteps));
    if (kind == LrScheduler::Cosine || kind == LrScheduler::Linear)
      std::snprintf(text + n, sizeof text - n, " to %.3g at step %lld",
                    minimum, static_cast<long long>(lastStep));
    return text;
  }
};

} // namespace tgc

#endif // TGC_COMMON_SCHEDULE_H
