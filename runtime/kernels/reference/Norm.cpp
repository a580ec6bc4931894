//===- Norm.cpp - softmax, dropout, LayerNorm, RMSNorm and their fusion ===//
#include "runtime/kernels/reference/Indexing.h"
#include "runtime/kernels/reference/Kernels.h"

#include <algorithm>
#include <cmath>

namespace tgc::reference {

HostTensor softmax(const HostTensor &input, int64_t axis) {
  AxisView view(input.shape, axis);
  HostTensor result(input.shape);
  for (int64_t o = 0; o < view.outer; ++o)
    for (int64_t in = 0; in < view.inner; ++in) {
      double max = input[view.at(o, in, 0)];
      for (int64_t j = 1; j < view.size; ++j)
        max = std::max(max, input[view.at(o, in, j)]);
      double sum = 0.0;
      for (int64_t j = 0; j < view.size; ++j)
        sum += std::exp(input[view.at(o, in, j)] - max);
      for (int64_t j = 0; j < view.size; ++j)
        result[view.at(o, in, j)] =
            std::exp(input[view.at(o, in, j)] - max) / sum;
    }
  return result;
}

HostTensor softmaxGrad(const HostTensor &output, const HostTensor &grad,
                       int64_t axis) {
  AxisView view(output.shape, axis);
  HostTensor result(output.shape);
  for (int64_t o = 0; o < view.outer; ++o)
    for (int64_t in = 0; in < view.inner; ++in) {
      double dot = 0.0;
      for (int64_t j = 0; j < view.size; ++j)
        dot += grad[view.at(o, in, j)] * output[view.at(o, in, j)];
      for (int64_t j = 0; j < view.size; ++j) {
        int64_t i = view.at(o, in, j);
        result[i] = output[i] * (grad[i] - dot);
      }
    }
  return result;
}

HostTensor dropout(const HostTensor &input, const Dropout &dropout) {
  HostTensor result(input.shape);
  for (int64_t i = 0; i < input.numElements(); ++i)
    result[i] = input[i] * dropoutFactor(dropout, static_cast<uint64_t>(i));
  return result;
}

/// The shape of per-row statistics: `h`'s shape without the last dimension.
static std::vector<int64_t> rowShape(const HostTensor &h) {
  return std::vector<int64_t>(h.shape.begin(), h.shape.end() - 1);
}

/// Normalizes `h` over its last dimension, with the per-row statistics:
/// LayerNorm (`beta` given) centres each row on its mean, divides by
/// sqrt(biased variance + epsilon) and adds beta; RMSNorm (`beta` null)
/// divides by sqrt(mean of squares + epsilon) alone and has no mean. The
/// plain and the fused ops share it.
static ResidualNormResult normalize(const HostTensor &h,
                                    const HostTensor &gamma,
                                    const HostTensor *beta, double epsilon) {
  int64_t width = h.shape.back(), count = h.numElements() / width;
  ResidualNormResult out{HostTensor(h.shape),
                         beta ? HostTensor(rowShape(h)) : HostTensor(),
                         HostTensor(rowShape(h)), HostTensor()};
  for (int64_t r = 0; r < count; ++r) {
    const double *x = h.data.data() + r * width;
    double mean = 0.0, var = 0.0;
    if (beta) {
      for (int64_t d = 0; d < width; ++d)
        mean += x[d];
      mean /= static_cast<double>(width);
      out.mean[r] = mean;
    }
    for (int64_t d = 0; d < width; ++d)
      var += (x[d] - mean) * (x[d] - mean);
    var /= static_cast<double>(width);
    double rstd = 1.0 / std::sqrt(var + epsilon);
    out.rstd[r] = rstd;
    for (int64_t d = 0; d < width; ++d)
      out.result[r * width + d] =
          gamma[d] * (x[d] - mean) * rstd + (beta ? (*beta)[d] : 0.0);
  }
  return out;
}

/// With the normalized rows xhat and g = grad * gamma:
///   dh = rstd (g - mean(g) - xhat mean(g xhat)),
///   dgamma = sum_rows grad xhat, dbeta = sum_rows grad
/// for LayerNorm (`centred`); RMSNorm's dh has no mean(g) and it has no
/// dbeta (left empty).
static NormGrads normalizeGrad(const HostTensor &grad, const HostTensor &xhat,
                               const HostTensor &gamma, const HostTensor &rstd,
                               bool centred) {
  int64_t width = xhat.shape.back(), count = xhat.numElements() / width;
  NormGrads out{HostTensor(xhat.shape), HostTensor(gamma.shape),
                centred ? HostTensor(gamma.shape) : HostTensor()};
  std::vector<double> g(width);
  for (int64_t r = 0; r < count; ++r) {
    double meanG = 0.0, meanGX = 0.0;
    for (int64_t d = 0; d < width; ++d) {
      int64_t i = r * width + d;
      g[d] = grad[i] * gamma[d];
      meanGX += g[d] * xhat[i] / static_cast<double>(width);
      out.gamma[d] += grad[i] * xhat[i];
      if (centred) {
        meanG += g[d] / static_cast<double>(width);
        out.beta[d] += grad[i];
      }
    }
    for (int64_t d = 0; d < width; ++d)
      out.input[r * width + d] =
          rstd[r] * (g[d] - meanG - xhat[r * width + d] * meanGX);
  }
  return out;
}

/// The gradients of a plain norm (beta null: RMSNorm) from its input.
static NormGrads normGrad(const HostTensor &grad, const HostTensor &input,
                          const HostTensor &gamma, const HostTensor *beta,
                          double epsilon) {
  // The statistics do not depend on gamma or beta's values.
  ResidualNormResult stats = normalize(input, gamma, beta, epsilon);
  int64_t width = input.shape.back();
  HostTensor xhat(input.shape);
  for (int64_t i = 0; i < input.numElements(); ++i)
    xhat[i] = (input[i] - (beta ? stats.mean[i / width] : 0.0)) *
              stats.rstd[i / width];
  return normalizeGrad(grad, xhat, gamma, stats.rstd, beta != nullptr);
}

HostTensor layerNorm(const HostTensor &input, const HostTensor &gamma,
                     const HostTensor &beta, double epsilon) {
  return normalize(input, gamma, &beta, epsilon).result;
}

NormGrads layerNormGrad(const HostTensor &grad, const HostTensor &input,
                        const HostTensor &gamma, double epsilon) {
  // Zeros stand in for beta, which the gradients do not depend on.
  HostTensor beta(gamma.shape);
  return normGrad(grad, input, gamma, &beta, epsilon);
}

HostTensor rmsNorm(const HostTensor &input, const HostTensor &gamma,
                   double epsilon) {
  return normalize(input, gamma, nullptr, epsilon).result;
}

NormGrads rmsNormGrad(const HostTensor &grad, const HostTensor &input,
                      const HostTensor &gamma, double epsilon) {
  return normGrad(grad, input, gamma, nullptr, epsilon);
}

/// h = residual + dropout(sublayer).
static HostTensor residualSum(const HostTensor &residual,
                              const HostTensor &sublayer,
                              const Dropout &dropout) {
  HostTensor h(residual.shape);
  for (int64_t i = 0; i < h.numElements(); ++i)
    h[i] = residual[i] +
           sublayer[i] * dropoutFactor(dropout, static_cast<uint64_t>(i));
  return h;
}

ResidualNormResult residualNorm(const HostTensor &residual,
                                const HostTensor &sublayer,
                                const HostTensor &gamma,
                                const HostTensor *beta, const Dropout &dropout,
                                double epsilon) {
  HostTensor h = residualSum(residual, sublayer, dropout);
  ResidualNormResult out = normalize(h, gamma, beta, epsilon);
  out.sum = std::move(h);
  return out;
}

ResidualNormGrads residualNormGrad(const HostTensor &grad,
                                   const HostTensor &result,
                                   const HostTensor &gamma,
                                   const HostTensor *beta,
                                   const HostTensor &rstd,
                                   const Dropout &dropout,
                                   const HostTensor *sumGrad) {
  int64_t width = result.shape.back();
  HostTensor xhat(result.shape);
  for (int64_t i = 0; i < result.numElements(); ++i)
    xhat[i] = (result[i] - (beta ? (*beta)[i % width] : 0.0)) /
              gamma[i % width];
  NormGrads g = normalizeGrad(grad, xhat, gamma, rstd, beta != nullptr);
  if (sumGrad)
    for (int64_t i = 0; i < g.input.numElements(); ++i)
      g.input[i] += (*sumGrad)[i];
  HostTensor dSublayer = reference::dropout(g.input, dropout);
  return {std::move(g.input), std::move(dSublayer), std::move(g.gamma),
          std::move(g.beta)};
}

} // namespace tgc::reference
