//===- Divergence.h - a state not worth a checkpoint ------------*- C++ -*-===//
//
// A save never replaces the last or the best checkpoint with a state whose
// training has diverged; the file on disk is kept and the run says so
// (main/RunCheckpoints.cpp). Diverged is, besides a NaN or an infinity
// anywhere in the state:
// - a running training loss (an exponential moving average over about
//   the last 10 updates) above kDivergedLossFactor times the lowest
//   running loss of this run (a resumed run starts its own), and above
//   kDivergedLossFloor nats per token (below it a model that fits its data
//   well moves by large factors without being broken);
// - a trainable parameter beyond +-kParameterBound: parameters start below
//   1 and Adam moves each by about the learning rate per step (1e-3 and
//   less in the paper's schedule), so no healthy run gets near it, while
//   LayerNorm keeps the loss of a state with values of 1e27 finite.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_PROGRAM_DIVERGENCE_H
#define TGC_RUNTIME_PROGRAM_DIVERGENCE_H

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>

namespace tgc::runtime {

inline constexpr double kDivergedLossFactor = 10;
inline constexpr double kDivergedLossFloor = 1.0;
inline constexpr float kParameterBound = 1e6f;

/// The run's smoothed training loss and the lowest it has been.
class RunningLoss {
public:
  /// One update's loss per target token (finite).
  void add(double loss) {
    running = updates++ == 0 ? loss : running + kSmoothing * (loss - running);
    lowest = std::min(lowest, running);
  }

  /// An empty string, or why the run has diverged, for a message.
  std::string divergence() const {
    if (updates == 0 || running <= kDivergedLossFloor ||
        running <= kDivergedLossFactor * lowest)
      return {};
    char text[160];
    std::snprintf(text, sizeof text,
                  "the running training loss %.4g is more than %g times the "
                  "lowest of this run, %.4g",
                  running, kDivergedLossFactor, lowest);
    return text;
  }

private:
  /// The weight of the newest update: about the last 10 count.
  static constexpr double kSmoothing = 0.1;
  double running = 0, lowest = std::numeric_limits<double>::infinity();
  long long updates = 0;
};

} // namespace tgc::runtime

#endif // TGC_RUNTIME_PROGRAM_DIVERGENCE_H
