//===- Loss.cpp - label-smoothed cross-entropy and its gradient ----------===//
#include "runtime/kernels/reference/Kernels.h"

#include <algorithm>
#include <cmath>

namespace tgc::reference {

/// log sum_c exp(x_c) of one row.
static double logSumExp(const double *x, int64_t n) {
  double max = *std::max_element(x, x + n);
  double sum = 0.0;
  for (int64_t c = 0; c < n; ++c)
    sum += std::exp(x[c] - max);
  return max + std::log(sum);
}

namespace {
/// Logits seen as rows of V classes, one per target.
struct LossRows {
  const HostTensor &logits;
  int64_t count, classes;
  explicit LossRows(const HostTensor &logits)
      : logits(logits), count(logits.numElements() / logits.shape.back()),
        classes(logits.shape.back()) {}

  /// Calls `visit(r, target, x, lse)` for each row r whose target is not
  /// `ignoreIndex`: x its logits, lse their log-sum-exp.
  template <typename Visit>
  void forEachCounted(const HostTensor &targets, int64_t ignoreIndex,
                      Visit visit) const {
    for (int64_t r = 0; r < count; ++r) {
      int64_t target = static_cast<int64_t>(targets[r]);
      if (target == ignoreIndex)
        continue;
      const double *x = logits.data.data() + r * classes;
      visit(r, target, x, logSumExp(x, classes));
    }
  }
};
} // namespace

/// Positions whose target is not `ignoreIndex`.
static int64_t countTokens(const HostTensor &targets, int64_t ignoreIndex) {
  return std::count_if(targets.data.begin(), targets.data.end(), [&](double t) {
    return static_cast<int64_t>(t) != ignoreIndex;
  });
}

// Per counted position: -sum_c q_c log p_c with
// q = (1 - s) onehot(target) + s / V, i.e.
// -((1 - s) log p_target + (s / V) sum_c log p_c).
CrossEntropyResult crossEntropy(const HostTensor &logits,
                                const HostTensor &targets, double smoothing,
                                int64_t ignoreIndex) {
  LossRows rows(logits);
  double total = 0.0;
  rows.forEachCounted(
      targets, ignoreIndex,
      [&](int64_t, int64_t target, const double *x, double lse) {
        double sumLogP = 0.0;
        for (int64_t c = 0; c < rows.classes; ++c)
          sumLogP += x[c] - lse;
        total -= (1.0 - smoothing) * (x[target] - lse) +
                 smoothing / static_cast<double>(rows.classes) * sumLogP;
      });
  int64_t tokens = countTokens(targets, ignoreIndex);
  double loss = tokens > 0 ? total / static_cast<double>(tokens) : 0.0;
  return {HostTensor::scalar(loss),
          HostTensor::scalar(static_cast<double>(tokens), ElementType::I32)};
}

HostTensor crossEntropyGrad(double lossGrad, const HostTensor &logits,
                            const HostTensor &targets, double smoothing,
                            int64_t ignoreIndex) {
  LossRows rows(logits);
  HostTensor result(logits.shape);
  int64_t tokens = countTokens(targets, ignoreIndex);
  rows.forEachCounted(
      targets, ignoreIndex,
      [&](int64_t r, int64_t target, const double *x, double lse) {
        for (int64_t c = 0; c < rows.classes; ++c) {
          double q = (c == target ? 1.0 - smoothing : 0.0) +
                     smoothing / static_cast<double>(rows.classes);
          result[r * rows.classes + c] = lossGrad * (std::exp(x[c] - lse) - q) /
                                         static_cast<double>(tokens);
        }
      });
  return result;
}

} // namespace tgc::reference
