//===- AttentionTest.cpp - CPU fused attention against the reference ------===//
//
// runtime/kernels/cpu/Attention.cpp: the tiled attention forward (output
// and log-sum-exp) and backward, masked, causal and with dropout, on
// shapes that leave partial tiles. Helpers and the error measure:
// KernelTestSupport.h.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cpu/KernelTestSupport.h"

using tgc::HostTensor;
namespace cpu = tgc::cpu;
namespace reference = tgc::reference;
using namespace tgc::test;

namespace {

struct AttentionCase {
  const char *name;
  cpu::AttentionShape shape;
  bool mask, causal;
  float rate;
};

// Queries 37 = 2 full tiles of 16 and a partial one; keys 150 = 2 full
// tiles of 64 and a partial one (the online softmax rescales), or 53 (one
// partial tile). Causal self-attention over 150 skips the tiles above the
// diagonal.
const AttentionCase kAttentionCases[] = {
    {"cross masked", {2, 3, 37, 150, 24, 20}, true, false, 0.0f},
    {"cross masked dropout", {2, 3, 37, 150, 24, 20}, true, false, 0.1f},
    {"self causal masked dropout", {2, 2, 150, 150, 16, 16}, true, true, 0.1f},
    {"causal unmasked", {1, 2, 37, 53, 8, 12}, false, true, 0.0f},
};

/// Random q, k, v, mask and output gradient of one case, and both sides'
/// configurations.
struct AttentionInputs {
  std::vector<float> q, k, v, mask, grad;
  HostTensor hq, hk, hv, hmask, hgrad;
  cpu::AttentionConfig cpuConfig;
  reference::AttentionConfig interpConfig;

  explicit AttentionInputs(const AttentionCase &c) {
    const cpu::AttentionShape &s = c.shape;
    int64_t heads = s.batch * s.heads;
    // Scores of standard deviation 0.75 (up to about +-3): rows far from
    // uniform, so the running max and the rescaling matter.
    q = uniform(heads * s.queries * s.keyDim, 31, -1.5f, 1.5f);
    k = uniform(heads * s.keys * s.keyDim, 32, -1.5f, 1.5f);
    v = uniform(heads * s.keys * s.valueDim, 33);
    grad = uniform(heads * s.queries * s.valueDim, 34);
    // About one key in five padded, never key 0: every row keeps an
    // unmasked key (see Attention.cpp on fully masked rows).
    std::vector<int32_t> pads = randomIds(s.batch * s.keys, 35, 0, 4);
    for (int64_t i = 0; i < s.batch * s.keys; ++i)
      mask.push_back(i % s.keys != 0 && pads[i] == 0 ? cpu::kMaskedScore
                                                      : 0.0f);
    hq = host(q, {s.batch, s.heads, s.queries, s.keyDim});
    hk = host(k, {s.batch, s.heads, s.keys, s.keyDim});
    hv = host(v, {s.batch, s.heads, s.keys, s.valueDim});
    hgrad = host(grad, {s.batch, s.heads, s.queries, s.valueDim});
    hmask = host(mask, {s.batch, s.keys});
    float scale = 1.0f / std::sqrt(static_cast<float>(s.keyDim));
    cpuConfig.mask = c.mask ? mask.data() : nullptr;
    cpuConfig.causal = c.causal;
    cpuConfig.scale = scale;
    cpuConfig.dropout = cpuDropout(c.rate);
    interpConfig.mask = c.mask ? &hmask : nullptr;
    interpConfig.causal = c.causal;
    interpConfig.scale = scale;
    interpConfig.dropout = interpDropout(c.rate);
  }
};

// Scores, exponentials and the weighted sum of up to 150 values in float.
constexpr double kAttentionTolerance = 1e-5;

TEST(CpuKernels, Attention) {
  for (const AttentionCase &c : kAttentionCases) {
    AttentionInputs in(c);
    const cpu::AttentionShape &s = c.shape;
    reference::AttentionResult expected =
        reference::attention(in.hq, in.hk, in.hv, in.interpConfig);
    int64_t heads = s.batch * s.heads;
    std::vector<float> out(heads * s.queries * s.valueDim, 0.0f),
        lse(heads * s.queries, 0.0f);
    cpu::attention(in.q.data(), in.k.data(), in.v.data(), out.data(),
                   lse.data(), s, in.cpuConfig);
    expectClose(std::string("attention output ") + c.name, out,
                expected.output, kAttentionTolerance);
    expectClose(std::string("attention lse ") + c.name, lse, expected.lse,
                kAttentionTolerance);
    if (c.rate > 0.0f) {
      // Dropout must actually drop: the same inputs without it differ.
      cpu::AttentionConfig kept = in.cpuConfig;
      kept.dropout.rate = 0.0f;
      std::vector<float> plain(out.size(), 0.0f), plainLse(lse.size(), 0.0f);
      cpu::attention(in.q.data(), in.k.data(), in.v.data(), plain.data(),
                     plainLse.data(), s, kept);
      double diff = 0.0;
      for (size_t i = 0; i < out.size(); ++i)
        diff = std::max(diff, static_cast<double>(std::abs(out[i] - plain[i])));
      EXPECT_GT(diff, 1e-2) << c.name << ": dropout changed nothing";
      // The normalizer is the undropped sum: lse does not see dropout.
      EXPECT_EQ(lse, plainLse) << c.name;
    }
  }
}

// Each gradient sums up to 150 terms p (dp - D) computed in float; D comes
// from the float output rather than the reference's sum of p dp.
constexpr double kAttentionGradTolerance = 1e-5;

TEST(CpuKernels, AttentionGrad) {
  for (const AttentionCase &c : kAttentionCases) {
    AttentionInputs in(c);
    const cpu::AttentionShape &s = c.shape;
    reference::AttentionResult forward =
        reference::attention(in.hq, in.hk, in.hv, in.interpConfig);
    reference::AttentionGrads expected = reference::attentionGrad(
        in.hgrad, in.hq, in.hk, in.hv, forward.lse, in.interpConfig);
    // The CPU backward reads the CPU forward's output and lse, as in a
    // generated step.
    int64_t heads = s.batch * s.heads;
    std::vector<float> out(heads * s.queries * s.valueDim, 0.0f),
        lse(heads * s.queries, 0.0f);
    cpu::attention(in.q.data(), in.k.data(), in.v.data(), out.data(),
                   lse.data(), s, in.cpuConfig);
    // Outputs start as garbage: the kernel must write every element.
    std::vector<float> dq(in.q.size(), 7.0f), dk(in.k.size(), 7.0f),
        dv(in.v.size(), 7.0f);
    cpu::attentionGrad(in.grad.data(), in.q.data(), in.k.data(), in.v.data(),
                       out.data(), lse.data(), dq.data(), dk.data(), dv.data(),
                       s, in.cpuConfig);
    expectClose(std::string("attentionGrad query ") + c.name, dq,
                expected.query, kAttentionGradTolerance);
    expectClose(std::string("attentionGrad key ") + c.name, dk, expected.key,
                kAttentionGradTolerance);
    expectClose(std::string("attentionGrad value ") + c.name, dv,
                expected.value, kAttentionGradTolerance);
  }
}

} // namespace
