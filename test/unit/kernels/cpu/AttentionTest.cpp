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

// bf16 queries, keys and values (tg-mixed-precision): the kernels widen
// each head's rows and compute in f32, so they give exactly what the f32
// kernels give on the widened values (and the reference's result within
// the f32 tolerances).
TEST(CpuKernels, Bf16AttentionIsTheF32OneOnTheRoundedValues) {
  using runtime::Bf16;
  auto round = [](std::vector<float> &values) {
    std::vector<Bf16> rounded(values.size());
    cpu::toBf16(values.data(), rounded.data(),
                static_cast<int64_t>(values.size()));
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = runtime::widen(rounded[i]);
    return rounded;
  };
  for (const AttentionCase &c : kAttentionCases) {
    AttentionInputs in(c);
    std::vector<Bf16> q = round(in.q), k = round(in.k), v = round(in.v);
    const cpu::AttentionShape &s = in.shape;
    in.hq = host(in.q, {s.batch, s.heads, s.queries, s.keyDim});
    in.hk = host(in.k, {s.batch, s.heads, s.keys, s.keyDim});
    in.hv = host(in.v, {s.batch, s.heads, s.keys, s.valueDim});
    AttentionForward f32 = cpuAttention(in);
    AttentionForward bf16{std::vector<float>(f32.output.size()),
                          std::vector<float>(f32.lse.size())};
    cpu::attention(q.data(), k.data(), v.data(), bf16.output.data(),
                   bf16.lse.data(), s, in.cpuConfig);
    EXPECT_EQ(bf16.output, f32.output) << c.name;
    EXPECT_EQ(bf16.lse, f32.lse) << c.name;
    reference::AttentionResult expected = in.referenceForward();
    expectClose(std::string("bf16 attention output ") + c.name, bf16.output,
                expected.output, kAttentionTolerance);

    std::vector<float> dq(in.q.size()), dk(in.k.size()), dv(in.v.size());
    std::vector<float> dq16(in.q.size(), 7.0f), dk16(in.k.size(), 7.0f),
        dv16(in.v.size(), 7.0f);
    cpu::attentionGrad(in.grad.data(), in.q.data(), in.k.data(), in.v.data(),
                       f32.output.data(), f32.lse.data(), dq.data(), dk.data(),
                       dv.data(), s, in.cpuConfig);
    cpu::attentionGrad(in.grad.data(), q.data(), k.data(), v.data(),
                       f32.output.data(), f32.lse.data(), dq16.data(),
                       dk16.data(), dv16.data(), s, in.cpuConfig);
    EXPECT_EQ(dq16, dq) << c.name;
    EXPECT_EQ(dk16, dk) << c.name;
    EXPECT_EQ(dv16, dv) << c.name;
  }
}

} // namespace
} // namespace tgc::test
