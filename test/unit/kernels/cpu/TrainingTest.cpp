//===- TrainingTest.cpp - CPU loss and Adam against the reference ---------===//
//
// runtime/kernels/cpu/Loss.cpp (cross-entropy and its gradient, with label
// smoothing and ignored targets) and runtime/kernels/cpu/Adam.cpp (the
// multi-tensor Adam update). Helpers and the error measure:
// KernelTestSupport.h.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cpu/KernelTestSupport.h"

using tgc::HostTensor;
namespace cpu = tgc::cpu;
namespace reference = tgc::reference;
using namespace tgc::test;

namespace {

//===--- Loss.cpp ---------------------------------------------------------===//

// 64 rows of 1000 classes (parallel); some targets ignored.
constexpr int64_t kLossRows = 64, kClasses = 1000;
constexpr int32_t kIgnore = 0;

TEST(CpuKernels, CrossEntropy) {
  std::vector<float> logits = uniform(kLossRows * kClasses, 36, -4.0f, 4.0f);
  std::vector<int32_t> targets = randomIds(kLossRows, 37, 0, 7);
  for (int32_t &t : targets) // ignored when 0, else a class anywhere
    t = t == 0 ? kIgnore : t * 111;
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
  std::vector<float> logits = uniform(kLossRows * kClasses, 38, -4.0f, 4.0f);
  std::vector<int32_t> targets = randomIds(kLossRows, 39, 0, 7);
  for (int32_t &t : targets)
    t = t == 0 ? kIgnore : t * 111;
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

// A few float operations per element. Parameters are of the update's own
// size so their comparison measures the update, not the parameter.
TEST(CpuKernels, AdamUpdate) {
  const int64_t sizes[] = {1000, 37, 40000}; // many chunks, a tiny tensor
  const float lr = 1e-2f, beta1 = 0.9f, beta2 = 0.98f, epsilon = 1e-9f;
  for (int32_t step : {1, 7}) {
    std::vector<std::vector<float>> p, m, v, g;
    for (size_t x = 0; x < 3; ++x) {
      uint32_t seed = 40 + 4 * static_cast<uint32_t>(x);
      p.push_back(uniform(sizes[x], seed, -0.02f, 0.02f));
      m.push_back(uniform(sizes[x], seed + 1, -0.1f, 0.1f));
      v.push_back(uniform(sizes[x], seed + 2, 0.0f, 0.01f));
      g.push_back(uniform(sizes[x], seed + 3));
    }
    std::vector<cpu::AdamTensor> tensors;
    std::vector<HostTensor> hp, hm, hv;
    for (size_t x = 0; x < 3; ++x) {
      hp.push_back(host(p[x], {sizes[x]}));
      hm.push_back(host(m[x], {sizes[x]}));
      hv.push_back(host(v[x], {sizes[x]}));
      reference::adamUpdate(hp[x], hm[x], hv[x], host(g[x], {sizes[x]}), lr, step,
                         beta1, beta2, epsilon);
      tensors.push_back({p[x].data(), m[x].data(), v[x].data(), g[x].data(),
                         sizes[x]});
    }
    cpu::adamUpdate(tensors.data(), 3, lr, step, beta1, beta2, epsilon);
    for (size_t x = 0; x < 3; ++x) {
      std::string tag = " step " + std::to_string(step) + " tensor " +
                        std::to_string(x);
      expectClose("adam param" + tag, p[x], hp[x], 1e-5);
      expectClose("adam moment1" + tag, m[x], hm[x], 1e-5);
      expectClose("adam moment2" + tag, v[x], hv[x], 1e-5);
    }
  }
}

} // namespace
