//===- TrainingKernels.cpp - masks, positions, loss and Adam ------------===//
#include "codegen/interpreter/Kernels.h"

#include <algorithm>
#include <cmath>

namespace tgc::interp {

HostTensor causalMask(int64_t size) {
  HostTensor result({size, size});
  for (int64_t i = 0; i < size; ++i)
    for (int64_t j = i + 1; j < size; ++j)
      result[i * size + j] = kMaskedScore;
  return result;
}

HostTensor paddingMask(const HostTensor &ids, int64_t padId) {
  HostTensor result(ids.shape);
  for (int64_t i = 0; i < ids.numElements(); ++i)
    result[i] = static_cast<int64_t>(ids[i]) == padId ? kMaskedScore : 0.0;
  return result;
}

HostTensor positionalEncoding(int64_t positions, int64_t width,
                              int64_t first) {
  HostTensor result({positions, width});
  for (int64_t pos = 0; pos < positions; ++pos)
    for (int64_t i = 0; 2 * i < width; ++i) {
      double angle = static_cast<double>(first + pos) /
                     std::pow(10000.0, static_cast<double>(2 * i) /
                                           static_cast<double>(width));
      result[pos * width + 2 * i] = std::sin(angle);
      result[pos * width + 2 * i + 1] = std::cos(angle);
    }
  return result;
}

namespace {
/// Logits seen as rows of V classes, one per target.
struct LossRows {
  int64_t count, classes;
  explicit LossRows(const HostTensor &logits)
      : count(logits.numElements() / logits.shape.back()),
        classes(logits.shape.back()) {}
};
} // namespace

/// log sum_c exp(x_c) of one row.
static double logSumExp(const double *x, int64_t n) {
  double max = *std::max_element(x, x + n);
  double sum = 0.0;
  for (int64_t c = 0; c < n; ++c)
    sum += std::exp(x[c] - max);
  return max + std::log(sum);
}

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
  for (int64_t r = 0; r < rows.count; ++r) {
    int64_t target = static_cast<int64_t>(targets[r]);
    if (target == ignoreIndex)
      continue;
    const double *x = logits.data.data() + r * rows.classes;
    double lse = logSumExp(x, rows.classes);
    double sumLogP = 0.0;
    for (int64_t c = 0; c < rows.classes; ++c)
      sumLogP += x[c] - lse;
    total -= (1.0 - smoothing) * (x[target] - lse) +
             smoothing / static_cast<double>(rows.classes) * sumLogP;
  }
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
  for (int64_t r = 0; r < rows.count; ++r) {
    int64_t target = static_cast<int64_t>(targets[r]);
    if (target == ignoreIndex)
      continue;
    const double *x = logits.data.data() + r * rows.classes;
    double lse = logSumExp(x, rows.classes);
    for (int64_t c = 0; c < rows.classes; ++c) {
      double q = (c == target ? 1.0 - smoothing : 0.0) +
                 smoothing / static_cast<double>(rows.classes);
      result[r * rows.classes + c] =
          lossGrad * (std::exp(x[c] - lse) - q) / static_cast<double>(tokens);
    }
  }
  return result;
}

void adamUpdate(HostTensor &param, HostTensor &moment1, HostTensor &moment2,
                const HostTensor &grad, double lr, int64_t step, double beta1,
                double beta2, double epsilon) {
  double t = static_cast<double>(step);
  double correction1 = 1.0 - std::pow(beta1, t);
  double correction2 = 1.0 - std::pow(beta2, t);
  for (int64_t i = 0; i < grad.numElements(); ++i) {
    double g = grad[i];
    moment1[i] = beta1 * moment1[i] + (1.0 - beta1) * g;
    moment2[i] = beta2 * moment2[i] + (1.0 - beta2) * g * g;
    param[i] -= lr * (moment1[i] / correction1) /
                (std::sqrt(moment2[i] / correction2) + epsilon);
  }
}

} // namespace tgc::interp
