//===- Adam.cpp - one bias-corrected Adam step ------------------------------===//
#include "runtime/kernels/reference/Kernels.h"

#include <cmath>

namespace tgc::reference {

void adamUpdate(HostTensor &param, HostTensor &moment1, HostTensor &moment2,
                const HostTensor &grad, double lr, int64_t step, double beta1,
                double beta2, double epsilon, double weightDecay) {
  double t = static_cast<double>(step);
  double correction1 = 1.0 - std::pow(beta1, t);
  double correction2 = 1.0 - std::pow(beta2, t);
  for (int64_t i = 0; i < grad.numElements(); ++i) {
    double g = grad[i];
    moment1[i] = beta1 * moment1[i] + (1.0 - beta1) * g;
    moment2[i] = beta2 * moment2[i] + (1.0 - beta2) * g * g;
    param[i] -= lr * ((moment1[i] / correction1) /
                          (std::sqrt(moment2[i] / correction2) + epsilon) +
                      weightDecay * param[i]);
  }
}

} // namespace tgc::reference
