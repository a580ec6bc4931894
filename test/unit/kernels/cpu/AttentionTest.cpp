//===- AttentionTest.cpp - CPU fused attention against the reference ------===//
//
// runtime/kernels/cpu/Attention.cpp: the tiled attention forward (output
// and log-sum-exp) and backward, masked, causal and with dropout, on
// shapes that leave partial tiles. Helpers and the error measure:
// KernelTestSupport.h.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cpu/KernelTestSupport.h"

namespace tgc::test {
namespace {

/// A problem's inputs as the reference takes them, and its configuration.
struct AttentionInputs : AttentionProblem {
  HostTensor hq, hk, hv, hmask, hgrad;
  reference::AttentionConfig interpConfig;

  explicit AttentionInputs(const AttentionCase &c) : AttentionProblem(c) {
    const cpu::AttentionShape &s = shape;
    hq = host(q, {s.batch, s.heads, s.queries, s.keyDim});
    hk = host(k, {s.batch, s.heads, s.keys, s.keyDim});
    hv = host(v, {s.batch, s.heads, s.keys, s.valueDim});
    hgrad = host(grad, {s.batch, s.heads, s.queries, s.valueDim});
    hmask = host(mask, {s.batch, s.keys});
    interpConfig.mask = c.mask ? &hmask : nullptr;
    interpConfig.causal = c.causal;
    interpConfig.scale = scale();
    interpConfig.dropout = testDropout(c.rate);
  }

  reference::AttentionResult referenceForward() const {
    return reference::attention(hq, hk, hv, interpConfig);
  }
};

// Scores, exponentials and the weighted sum of up to 150 values in float.
constexpr double kAttentionTolerance = 1e-5;

TEST(CpuKernels, Attention) {
  for (const AttentionCase &c : kAttentionCases) {
    AttentionInputs in(c);
    reference::AttentionResult expected = in.referenceForward();
    AttentionForward got = cpuAttention(in);
    expectClose(std::string("attention output ") + c.name, got.output,
                expected.output, kAttentionTolerance);
    expectClose(std::string("attention lse ") + c.name, got.lse, expected.lse,
                kAttentionTolerance);
    if (c.rate > 0.0f) {
      // Dropout must actually drop: the same inputs without it differ.
      cpu::AttentionConfig kept = in.cpuConfig;
      kept.dropout.rate = 0.0f;
      AttentionForward plain = cpuAttention(in, kept);
      double diff = 0.0;
      for (size_t i = 0; i < got.output.size(); ++i)
        diff = std::max(diff, static_cast<double>(
                                  std::abs(got.output[i] - plain.output[i])));
      EXPECT_GT(diff, 1e-2) << c.name << ": dropout changed nothing";
      // The normalizer is the undropped sum: lse does not see dropout.
      EXPECT_EQ(got.lse, plain.lse) << c.name;
    }
  }
}

// Each gradient sums up to 150 terms p (dp - D) computed in float; D comes
// from the float output rather than the reference's sum of p dp.
constexpr double kAttentionGradTolerance = 1e-5;

TEST(CpuKernels, AttentionGrad) {
  for (const AttentionCase &c : kAttentionCases) {
    AttentionInputs in(c);
    reference::AttentionResult forward = in.referenceForward();
    reference::AttentionGrads expected = reference::attentionGrad(
        in.hgrad, in.hq, in.hk, in.hv, forward.lse, in.interpConfig);
    // The CPU backward reads the CPU forward's output and lse, as in a
    // generated step.
    AttentionForward cpuForward = cpuAttention(in);
    // Outputs start as garbage: the kernel must write every element.
    std::vector<float> dq(in.q.size(), 7.0f), dk(in.k.size(), 7.0f),
        dv(in.v.size(), 7.0f);
    cpu::attentionGrad(in.grad.data(), in.q.data(), in.k.data(), in.v.data(),
                       cpuForward.output.data(), cpuForward.lse.data(),
                       dq.data(), dk.data(), dv.data(), in.shape, in.cpuConfig);
    expectClose(std::string("attentionGrad query ") + c.name, dq,
                expected.query, kAttentionGradTolerance);
    expectClose(std::string("attentionGrad key ") + c.name, dk, expected.key,
                kAttentionGradTolerance);
    expectClose(std::string("attentionGrad value ") + c.name, dv,
                expected.value, kAttentionGradTolerance);
  }
}

} // namespace
} // namespace tgc::test
