//===- TrainingTest.cpp - CPU loss and Adam against the reference ---------===//
//
// runtime/kernels/cpu/Loss.cpp (cross-entropy and its gradient, with label
// smoothing and ignored targets, and tg.output_loss in chunks, on f32 and
// bf16 operands) and runtime/kernels/cpu/Adam.cpp (the
// multi-tensor Adam update, and the optimizer step: weighting, accumulation,
// global norm and clipping). Helpers and the error measure:
// KernelTestSupport.h.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cpu/KernelTestSupport.h"

#include <cmath>
#include <optional>
#include <type_traits>

namespace tgc::test {
namespace {

//===--- Loss.cpp ---------------------------------------------------------===//

// The loss cases (KernelTestCases.h): 64 rows of 1000 classes (parallel).
TEST(CpuKernels, CrossEntropy) {
  std::vector<float> logits = lossLogits(36);
  std::vector<int32_t> targets = lossTargets(37);
  HostTensor hl = host(logits, {kLossRows, kClasses});
  HostTensor ht = hostIds(targets, {kLossRows});
  for (float smoothing : {0.0f, 0.1f}) {
    reference::CrossEntropyResult expected =
        reference::crossEntropy(hl, ht, smoothing, kIgnore);
    float loss = 0.0f;
    int32_t tokens = -1;
    cpu::crossEntropy(logits.data(), targets.data(), &loss, &tokens, kLossRows,
                      kClasses, smoothing, kIgnore);
    EXPECT_EQ(tokens, static_cast<int32_t>(expected.tokens[0]));
    EXPECT_LT(tokens, kLossRows);
    // Double row sums and total: one float rounding of the result.
    expectClose("crossEntropy smoothing " + std::to_string(smoothing), {loss},
                expected.loss, 1e-6);
  }
  // Every target ignored: zero loss over zero tokens.
  std::vector<int32_t> ignored(kLossRows, kIgnore);
  float loss = 1.0f;
  int32_t tokens = -1;
  cpu::crossEntropy(logits.data(), ignored.data(), &loss, &tokens, kLossRows,
                    kClasses, 0.1f, kIgnore);
  EXPECT_EQ(loss, 0.0f);
  EXPECT_EQ(tokens, 0);
}

// tg.output_loss against the unfused ops of the reference on the whole
// batch: 64 rows in chunks of 24 (the last one short), hidden 48 wide, the
// loss cases' 1000 classes and targets (some ignored); weightGrad starts as
// garbage, which the first chunk must overwrite.
/// What one element of the kernel's operands is in the reference: an f32
/// value, or a bf16 one widened.
double valueOf(float x) { return x; }
double valueOf(runtime::Bf16 x) { return runtime::widen(x); }

/// cpu::outputLoss on `hidden` [64, 48] and `weight` [1000, 48] (f32, or
/// bf16) against the unfused reference ops on the same values. For bf16
/// operands the kernel rounds each chunk's logit gradient to bf16 before its
/// two GEMMs; so does the reference here.
template <typename T>
void expectOutputLossEqualsTheUnfusedOps(const std::vector<T> &hidden,
                                         const std::vector<T> &weight,
                                         double gradientTolerance) {
  constexpr int64_t kWidth = 48, kChunk = 24;
  constexpr bool bf16 = std::is_same_v<T, runtime::Bf16>;
  auto values = [](const std::vector<T> &v, std::vector<int64_t> shape) {
    std::vector<double> out;
    for (T x : v)
      out.push_back(valueOf(x));
    return HostTensor::f32(std::move(shape), std::move(out));
  };
  std::vector<int32_t> targets = lossTargets(42);
  HostTensor hh = values(hidden, {kLossRows, kWidth});
  HostTensor hw = values(weight, {kClasses, kWidth});
  HostTensor ht = hostIds(targets, {kLossRows});
  const float lossGrad = 1.7f, smoothing = 0.1f;
  HostTensor logits = reference::matmul(hh, hw, false, true);
  reference::CrossEntropyResult expected =
      reference::crossEntropy(logits, ht, smoothing, kIgnore);
  HostTensor grad =
      reference::crossEntropyGrad(lossGrad, logits, ht, smoothing, kIgnore);
  if (bf16)
    for (double &g : grad.data)
      g = runtime::widen(runtime::roundToBf16(static_cast<float>(g)));
  float loss = 0.0f;
  int32_t tokens = -1;
  std::vector<float> hiddenGrad(hidden.size(), 5.0f), weightGrad(weight.size(), 5.0f);
  std::vector<float> workspace(kChunk * kClasses);
  cpu::outputLoss(hidden.data(), weight.data(), targets.data(), lossGrad, &loss,
                  &tokens, hiddenGrad.data(), weightGrad.data(),
                  workspace.data(), kLossRows, kWidth, kClasses, kChunk,
                  smoothing, kIgnore);
  std::string what = bf16 ? "bf16 outputLoss" : "outputLoss";
  EXPECT_EQ(tokens, static_cast<int32_t>(expected.tokens[0]));
  expectClose(what + " loss", {loss}, expected.loss, 1e-6);
  expectClose(what + " hidden gradient", hiddenGrad,
              reference::matmul(grad, hw, false, false), gradientTolerance);
  expectClose(what + " weight gradient", weightGrad,
              reference::matmul(grad, hh, true, false), gradientTolerance);
}

TEST(CpuKernels, OutputLossInChunksEqualsTheUnfusedOps) {
  expectOutputLossEqualsTheUnfusedOps(
      uniform(kLossRows * 48, 40, -1.0f, 1.0f),
      uniform(kClasses * 48, 41, -1.0f, 1.0f), 1e-5);
}

// A logit gradient computed in f32 may round to the other bf16 neighbour
// than the double one: one bf16 step (2^-8 relative) in a few products
// (measured worst: 6e-5).
TEST(CpuKernels, Bf16OutputLossEqualsTheUnfusedOpsOnRoundedValues) {
  auto rounded = [](const std::vector<float> &values) {
    std::vector<runtime::Bf16> out(values.size());
    cpu::toBf16(values.data(), out.data(), static_cast<int64_t>(values.size()));
    return out;
  };
  expectOutputLossEqualsTheUnfusedOps(
      rounded(uniform(kLossRows * 48, 40, -1.0f, 1.0f)),
      rounded(uniform(kClasses * 48, 41, -1.0f, 1.0f)), 2e-4);
}

// softmax_c - q_c in float from a double log-sum-exp.
TEST(CpuKernels, CrossEntropyGrad) {
  std::vector<float> logits = lossLogits(38);
  std::vector<int32_t> targets = lossTargets(39);
  HostTensor hl = host(logits, {kLossRows, kClasses});
  HostTensor ht = hostIds(targets, {kLossRows});
  const float lossGrad = 1.7f;
  for (float smoothing : {0.0f, 0.1f}) {
    HostTensor expected =
        reference::crossEntropyGrad(lossGrad, hl, ht, smoothing, kIgnore);
    std::vector<float> out(logits.size(), 5.0f); // ignored rows must be 0
    cpu::crossEntropyGrad(lossGrad, logits.data(), targets.data(), out.data(),
                          kLossRows, kClasses, smoothing, kIgnore);
    expectClose("crossEntropyGrad smoothing " + std::to_string(smoothing), out,
                expected, 1e-5);
  }
  std::vector<int32_t> ignored(kLossRows, kIgnore);
  std::vector<float> out(logits.size(), 5.0f);
  cpu::crossEntropyGrad(lossGrad, logits.data(), ignored.data(), out.data(),
                        kLossRows, kClasses, 0.1f, kIgnore);
  EXPECT_TRUE(std::all_of(out.begin(), out.end(),
                          [](float x) { return x == 0.0f; }));
}

//===--- Adam.cpp ---------------------------------------------------------===//

// A few float operations per element; AdamProblem's parameters are of the
// update's own size.
TEST(CpuKernels, AdamUpdate) {
  const int64_t *sizes = AdamProblem::sizes;
  for (int32_t step : {1, 7}) {
    AdamProblem adam;
    std::vector<HostTensor> hp, hm, hv;
    for (size_t x = 0; x < 3; ++x) {
      hp.push_back(host(adam.p[x], {sizes[x]}));
      hm.push_back(host(adam.m[x], {sizes[x]}));
      hv.push_back(host(adam.v[x], {sizes[x]}));
      reference::adamUpdate(hp[x], hm[x], hv[x], host(adam.g[x], {sizes[x]}),
                            adam.lr, step, adam.beta1, adam.beta2,
                            adam.epsilon);
    }
    std::vector<cpu::AdamTensor> tensors = adam.cpuTensors();
    cpu::adamUpdate(tensors.data(), 3, adam.lr, step, adam.beta1, adam.beta2,
                    adam.epsilon);
    for (size_t x = 0; x < 3; ++x) {
      std::string tag =
          " step " + std::to_string(step) + " tensor " + std::to_string(x);
      expectClose("adam param" + tag, adam.p[x], hp[x], 1e-5);
      expectClose("adam moment1" + tag, adam.m[x], hm[x], 1e-5);
      expectClose("adam moment2" + tag, adam.v[x], hv[x], 1e-5);
    }
  }
}

/// AdamProblem's parameters after the reference Adam step on gradient
/// `scale * g` (g: one vector per tensor).
struct ReferenceUpdate {
  std::vector<HostTensor> p, m, v;
  ReferenceUpdate(const AdamProblem &adam,
                  const std::vector<std::vector<double>> &g, double scale,
                  int32_t step) {
    for (size_t x = 0; x < 3; ++x) {
      int64_t n = AdamProblem::sizes[x];
      p.push_back(host(adam.p[x], {n}));
      m.push_back(host(adam.m[x], {n}));
      v.push_back(host(adam.v[x], {n}));
      HostTensor grad = HostTensor::f32({n}, g[x]);
      for (int64_t i = 0; i < n; ++i)
        grad[i] *= scale;
      reference::adamUpdate(p[x], m[x], v[x], grad, adam.lr, step, adam.beta1,
                            adam.beta2, adam.epsilon);
    }
  }
  void expectMatches(const AdamProblem &adam, const std::string &tag) const {
    for (size_t x = 0; x < 3; ++x) {
      std::string where = tag + " tensor " + std::to_string(x);
      expectClose("param " + where, adam.p[x], p[x], 1e-5);
      expectClose("moment1 " + where, adam.m[x], m[x], 1e-5);
      expectClose("moment2 " + where, adam.v[x], v[x], 1e-5);
    }
  }
};

double normOf(const std::vector<std::vector<double>> &g) {
  double sum = 0;
  for (const auto &tensor : g)
    for (double x : tensor)
      sum += x * x;
  return std::sqrt(sum);
}

std::vector<std::vector<double>> weighted(const AdamProblem &adam, double w) {
  std::vector<std::vector<double>> g;
  for (const auto &tensor : adam.g) {
    g.emplace_back();
    for (float x : tensor)
      g.back().push_back(w * x);
  }
  return g;
}

// The optimizer step without accumulation: the weighted gradient's global
// norm, then Adam on it, clipped to `clip` when above.
TEST(CpuKernels, OptimizerStepClipsToTheGlobalNorm) {
  const double weight = 0.5;
  double norm = normOf(weighted(AdamProblem(), weight));
  for (double clip : {0.0, norm / 4, 2 * norm}) {
    AdamProblem adam;
    ReferenceUpdate expected(adam, weighted(adam, weight),
                             clip > 0 && norm > clip ? clip / norm : 1.0, 3);
    std::vector<cpu::AdamTensor> tensors = adam.cpuTensors();
    float got =
        cpu::optimizerStep(tensors.data(), 3,
                           {static_cast<float>(weight), runtime::kUpdate,
                            static_cast<float>(clip)},
                           adam.lr, 3, adam.beta1, adam.beta2, adam.epsilon);
    EXPECT_NEAR(got, norm, 1e-5 * norm);
    expected.expectMatches(adam, "clip " + std::to_string(clip));
  }
}

// Three batches accumulated (phases 1, 2, 3, weights summing to 1) update
// as the weighted sum of their gradients would in one step; the first two
// leave the parameters alone and report the accumulation's norm.
TEST(CpuKernels, OptimizerStepAccumulates) {
  AdamProblem adam;
  const double weights[3] = {0.2, 0.5, 0.3};
  // The three batches' gradients: AdamProblem's, times 1, -2 and 3.
  const double factors[3] = {1.0, -2.0, 3.0};
  std::vector<std::vector<double>> sum = weighted(adam, 0.0);
  std::vector<float> accumulator(1000 + 37 + 40000, 7.0f);
  std::vector<std::vector<float>> original = adam.g;
  std::vector<std::vector<float>> before = adam.p;
  const int32_t phases[3] = {runtime::kAccumulateFirst, runtime::kAccumulate,
                             runtime::kAccumulateUpdate};
  // Taken before the last batch's update, from the parameters it starts at.
  std::optional<ReferenceUpdate> expected;
  for (int k = 0; k < 3; ++k) {
    for (size_t x = 0; x < 3; ++x)
      for (size_t i = 0; i < original[x].size(); ++i) {
        adam.g[x][i] = static_cast<float>(factors[k] * original[x][i]);
        sum[x][i] += weights[k] * adam.g[x][i];
      }
    if (k == 2)
      expected.emplace(adam, sum, 1.0, 5);
    std::vector<cpu::AdamTensor> tensors = adam.cpuTensors();
    float norm = cpu::optimizerStep(
        tensors.data(), 3,
        {static_cast<float>(weights[k]), phases[k], 0.0f, accumulator.data()},
        adam.lr, 5, adam.beta1, adam.beta2, adam.epsilon);
    EXPECT_NEAR(norm, normOf(sum), 1e-5 * normOf(sum)) << "batch " << k;
    if (k < 2) {
      EXPECT_EQ(adam.p, before) << "batch " << k << " only accumulates";
    }
  }
  expected->expectMatches(adam, "accumulated");
}

// AdamW: the tensors that decay (0 and 2, not 1) lose lr * wd of their
// value besides the Adam step, as the reference in double; weight decay 0
// is the plain step bit for bit.
TEST(CpuKernels, OptimizerStepDecaysTheFlaggedTensors) {
  const float weightDecay = 0.5f;
  const bool decays[3] = {true, false, true};
  AdamProblem adam, plain;
  std::vector<HostTensor> p, m, v;
  for (size_t x = 0; x < 3; ++x) {
    int64_t n = AdamProblem::sizes[x];
    p.push_back(host(adam.p[x], {n}));
    m.push_back(host(adam.m[x], {n}));
    v.push_back(host(adam.v[x], {n}));
    reference::adamUpdate(p[x], m[x], v[x], host(adam.g[x], {n}), adam.lr, 2,
                          adam.beta1, adam.beta2, adam.epsilon,
                          decays[x] ? weightDecay : 0.0);
  }
  std::vector<cpu::AdamTensor> tensors = adam.cpuTensors();
  for (size_t x = 0; x < 3; ++x)
    tensors[x].decays = decays[x];
  cpu::OptimizerControl control;
  control.weightDecay = weightDecay;
  cpu::optimizerStep(tensors.data(), 3, control, adam.lr, 2, adam.beta1,
                     adam.beta2, adam.epsilon);
  std::vector<cpu::AdamTensor> plainTensors = plain.cpuTensors();
  cpu::optimizerStep(plainTensors.data(), 3, {}, plain.lr, 2, plain.beta1,
                     plain.beta2, plain.epsilon);
  for (size_t x = 0; x < 3; ++x) {
    std::string where = " tensor " + std::to_string(x);
    expectClose("adamw param" + where, adam.p[x], p[x], 1e-6);
    expectClose("adamw moment1" + where, adam.m[x], m[x], 1e-6);
    // The decay, lr * wd * |p| up to 1e-4, is well above the tolerance.
    EXPECT_EQ(adam.p[x] == plain.p[x], !decays[x]) << where;
  }

  AdamProblem zero;
  std::vector<cpu::AdamTensor> zeroTensors = zero.cpuTensors();
  for (cpu::AdamTensor &t : zeroTensors)
    t.decays = true;
  cpu::optimizerStep(zeroTensors.data(), 3, {}, zero.lr, 2, zero.beta1,
                     zero.beta2, zero.epsilon);
  EXPECT_EQ(zero.p, plain.p) << "weight decay 0 is Adam, bit for bit";
}

// A NaN in the gradient: the norm says so and nothing is updated.
TEST(CpuKernels, OptimizerStepSkipsANonFiniteGradient) {
  AdamProblem adam;
  adam.g[1][5] = std::nanf("");
  std::vector<std::vector<float>> p = adam.p, m = adam.m, v = adam.v;
  std::vector<cpu::AdamTensor> tensors = adam.cpuTensors();
  float norm =
      cpu::optimizerStep(tensors.data(), 3, {1.0f, runtime::kUpdate, 1.0f},
                         adam.lr, 1, adam.beta1, adam.beta2, adam.epsilon);
  EXPECT_TRUE(std::isnan(norm));
  EXPECT_EQ(adam.p, p);
  EXPECT_EQ(adam.m, m);
  EXPECT_EQ(adam.v, v);
}

// A finite gradient whose square overflows f32 (an element of 1e20 and a
// norm past runtime::largestAdamNorm) would make that moment infinite and
// freeze its parameter: no update is made, and the norm is the true one.
// Clipped below the bound, the same gradient updates, every moment finite.
TEST(CpuKernels, OptimizerStepSkipsANormPastWhatAdamTakes) {
  for (float clip : {0.0f, 1.0f}) {
    AdamProblem adam;
    adam.g[2][7] = 1e20f;
    std::vector<std::vector<float>> p = adam.p, m = adam.m, v = adam.v;
    std::vector<cpu::AdamTensor> tensors = adam.cpuTensors();
    float norm =
        cpu::optimizerStep(tensors.data(), 3, {1.0f, runtime::kUpdate, clip},
                           adam.lr, 1, adam.beta1, adam.beta2, adam.epsilon);
    EXPECT_NEAR(norm, 1e20f, 1e14f) << "clip " << clip;
    EXPECT_EQ(runtime::adamTakes(norm, clip), clip > 0.0f);
    if (clip == 0.0f) {
      EXPECT_EQ(adam.p, p);
      EXPECT_EQ(adam.m, m);
      EXPECT_EQ(adam.v, v);
    } else {
      EXPECT_NE(adam.p, p);
      for (const std::vector<float> &moment : adam.v)
        for (float x : moment)
          ASSERT_TRUE(std::isfinite(x));
    }
  }
}

} // namespace
} // namespace tgc::test
