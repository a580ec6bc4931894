//===- TrainingTest.cpp - CPU loss and Adam against the reference ---------===//
//
// runtime/kernels/cpu/Loss.cpp (cross-entropy and its gradient, with label
// smoothing and ignored targets) and runtime/kernels/cpu/Adam.cpp (the
// multi-tensor Adam update). Helpers and the error measure:
// KernelTestSupport.h.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cpu/KernelTestSupport.h"

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

} // namespace
} // namespace tgc::test
