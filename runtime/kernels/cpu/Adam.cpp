//===- Adam.cpp - bias-corrected multi-tensor Adam -------------------===//
//
//   m = b1 m + (1 - b1) g,  v = b2 v + (1 - b2) g^2,
//   p -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
// and with AdamW's decoupled weight decay wd, on the tensors that decay,
//   p = p (1 - lr wd) - lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps),
// which is the plain step, bit for bit, when wd = 0.
// The corrections fold into two per-step constants computed in double:
// with b2 near 1, 1 - b2^t is a difference of nearly equal numbers.
// optimizerStep adds the gradient's weight, accumulation, global norm and
// clipping in front of it (runtime/kernels/KernelTypes.h).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cpu/Kernels.h"
#include "runtime/kernels/cpu/ReusedBuffer.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace tgc::cpu {

namespace {
/// Elements [begin, end) of tensor `tensor`: the unit of parallel work, so
/// that many small tensors (biases, norms) and a few large ones (weights)
/// balance in one pass. `flat` is `begin`'s index in the concatenation of
/// every tensor (the gradient accumulator's layout).
struct Chunk {
  int tensor;
  int64_t begin, end, flat;
};
constexpr int64_t kChunkElements = 1 << 14;

/// The tensors' chunks, in a buffer kept across calls.
std::vector<Chunk> &chunksOf(const AdamTensor *tensors, int count,
                             int64_t &total) {
  struct Chunks;
  std::vector<Chunk> &chunks = reusedBuffer<Chunks>(0, Chunk{});
  total = 0;
  for (int x = 0; x < count; ++x) {
    for (int64_t b = 0; b < tensors[x].size; b += kChunkElements)
      chunks.push_back(
          {x, b, std::min(tensors[x].size, b + kChunkElements), total + b});
    total += tensors[x].size;
  }
  return chunks;
}

/// The per-step constants of one Adam update.
struct AdamStep {
  float stepSize, rootScale, keep1, add1, keep2, add2, epsilon;
  float decayKeep; ///< what a decaying parameter keeps: 1 - lr wd

  AdamStep(float lr, int32_t step, float beta1, float beta2, float eps,
           float weightDecay) {
    double t = static_cast<double>(step);
    double correction1 = 1.0 - std::pow(static_cast<double>(beta1), t);
    double correction2 = 1.0 - std::pow(static_cast<double>(beta2), t);
    stepSize = static_cast<float>(lr / correction1);
    // sqrt(v / c2) = sqrt(v) / sqrt(c2).
    rootScale = static_cast<float>(1.0 / std::sqrt(correction2));
    keep1 = beta1;
    add1 = static_cast<float>(1.0 - beta1);
    keep2 = beta2;
    add2 = static_cast<float>(1.0 - beta2);
    epsilon = eps;
    decayKeep = static_cast<float>(1.0 - static_cast<double>(lr) * weightDecay);
  }

  /// `keep` is decayKeep for a tensor that decays, else 1.
  void apply(float g, float &p, float &m, float &v, float keep) const {
    m = keep1 * m + add1 * g;
    v = keep2 * v + add2 * g * g;
    p = p * keep - stepSize * m / (std::sqrt(v) * rootScale + epsilon);
  }
};
} // namespace

void adamUpdate(const AdamTensor *tensors, int count, float lr, int32_t step,
                float beta1, float beta2, float epsilon) {
  const AdamStep adam(lr, step, beta1, beta2, epsilon, 0.0f);
  int64_t total;
  const std::vector<Chunk> &chunks = chunksOf(tensors, count, total);
  int64_t chunkCount = static_cast<int64_t>(chunks.size());
#pragma omp parallel for schedule(static) if (total >= 2 * kChunkElements)
  for (int64_t c = 0; c < chunkCount; ++c) {
    const AdamTensor &a = tensors[chunks[c].tensor];
    for (int64_t i = chunks[c].begin; i < chunks[c].end; ++i)
      adam.apply(a.grad[i], a.param[i], a.moment1[i], a.moment2[i], 1.0f);
  }
}

float optimizerStep(const AdamTensor *tensors, int count,
                    const OptimizerControl &control, float lr, int32_t step,
                    float beta1, float beta2, float epsilon) {
  int64_t total;
  const std::vector<Chunk> &chunks = chunksOf(tensors, count, total);
  int64_t chunkCount = static_cast<int64_t>(chunks.size());
  const int32_t phase = control.phase;
  const float weight = control.weight;
  float *accumulator = control.accumulator;
  // Pass 1: accumulate, and each chunk's sum of squares (summed in chunk
  // order below, so the norm does not depend on the thread count). Each
  // chunk's sum is a vector reduction in double: as a scalar chain of double
  // adds (4 cycles each) it took longer than Adam's own pass (63M
  // parameters, 2 threads: 69 ms against 52, bench/optimizer_step).
  struct Squares;
  std::vector<double> &squares = reusedBuffer<Squares>(chunks.size(), 0.0);
#pragma omp parallel for schedule(static) if (total >= 2 * kChunkElements)
  for (int64_t c = 0; c < chunkCount; ++c) {
    const Chunk &chunk = chunks[c];
    const float *g = tensors[chunk.tensor].grad;
    float *acc = accumulator ? accumulator + chunk.flat - chunk.begin : nullptr;
    double sum = 0;
    if (phase == runtime::kUpdate) {
#pragma omp simd reduction(+ : sum)
      for (int64_t i = chunk.begin; i < chunk.end; ++i) {
        float x = weight * g[i];
        sum += static_cast<double>(x) * x;
      }
    } else if (phase == runtime::kAccumulateFirst) {
#pragma omp simd reduction(+ : sum)
      for (int64_t i = chunk.begin; i < chunk.end; ++i) {
        float x = weight * g[i];
        acc[i] = x;
        sum += static_cast<double>(x) * x;
      }
    } else {
#pragma omp simd reduction(+ : sum)
      for (int64_t i = chunk.begin; i < chunk.end; ++i) {
        float x = acc[i] + weight * g[i];
        acc[i] = x;
        sum += static_cast<double>(x) * x;
      }
    }
    squares[c] = sum;
  }
  double sum = 0;
  for (double s : squares)
    sum += s;
  const double norm = std::sqrt(sum);
  if ((phase != runtime::kUpdate && phase != runtime::kAccumulateUpdate) ||
      !runtime::adamTakes(norm, control.clip))
    return static_cast<float>(norm);

  // Pass 2: Adam on the (clipped) gradient.
  const float factor =
      static_cast<float>(runtime::clipFactor(norm, control.clip));
  const AdamStep adam(lr, step, beta1, beta2, epsilon, control.weightDecay);
#pragma omp parallel for schedule(static) if (total >= 2 * kChunkElements)
  for (int64_t c = 0; c < chunkCount; ++c) {
    const Chunk &chunk = chunks[c];
    const AdamTensor &a = tensors[chunk.tensor];
    const float *g = phase == runtime::kUpdate
                         ? a.grad
                         : accumulator + chunk.flat - chunk.begin;
    const float scale = phase == runtime::kUpdate ? weight * factor : factor;
    const float keep = a.decays ? adam.decayKeep : 1.0f;
    for (int64_t i = chunk.begin; i < chunk.end; ++i)
      adam.apply(scale * g[i], a.param[i], a.moment1[i], a.moment2[i], keep);
  }
  return static_cast<float>(norm);
}

} // namespace tgc::cpu
