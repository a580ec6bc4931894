//===- Adam.cpp - bias-corrected multi-tensor Adam -------------------===//
//
//   m = b1 m + (1 - b1) g,  v = b2 v + (1 - b2) g^2,
//   p -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
// The corrections fold into two per-step constants computed in double:
// with b2 near 1, 1 - b2^t is a difference of nearly equal numbers.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cpu/Kernels.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace tgc::cpu {

namespace {
/// Elements [begin, end) of tensor `tensor`: the unit of parallel work, so
/// that many small tensors (biases, norms) and a few large ones (weights)
/// balance in one pass.
struct Chunk {
  int tensor;
  int64_t begin, end;
};
constexpr int64_t kChunkElements = 1 << 14;
} // namespace

void adamUpdate(const AdamTensor *tensors, int count, float lr, int32_t step,
                float beta1, float beta2, float epsilon) {
  double t = static_cast<double>(step);
  double correction1 = 1.0 - std::pow(static_cast<double>(beta1), t);
  double correction2 = 1.0 - std::pow(static_cast<double>(beta2), t);
  // sqrt(v / c2) = sqrt(v) / sqrt(c2).
  const float stepSize = static_cast<float>(lr / correction1);
  const float rootScale = static_cast<float>(1.0 / std::sqrt(correction2));
  const float keep1 = beta1, add1 = static_cast<float>(1.0 - beta1);
  const float keep2 = beta2, add2 = static_cast<float>(1.0 - beta2);

  std::vector<Chunk> chunks;
  int64_t total = 0;
  for (int x = 0; x < count; ++x) {
    for (int64_t b = 0; b < tensors[x].size; b += kChunkElements)
      chunks.push_back(
          {x, b, std::min(tensors[x].size, b + kChunkElements)});
    total += tensors[x].size;
  }
  int64_t chunkCount = static_cast<int64_t>(chunks.size());
#pragma omp parallel for schedule(static) if (total >= 2 * kChunkElements)
  for (int64_t c = 0; c < chunkCount; ++c) {
    const AdamTensor &a = tensors[chunks[c].tensor];
    float *p = a.param, *m = a.moment1, *v = a.moment2;
    const float *g = a.grad;
    for (int64_t i = chunks[c].begin; i < chunks[c].end; ++i) {
      m[i] = keep1 * m[i] + add1 * g[i];
      v[i] = keep2 * v[i] + add2 * g[i] * g[i];
      p[i] -= stepSize * m[i] / (std::sqrt(v[i]) * rootScale + epsilon);
    }
  }
}

} // namespace tgc::cpu
