//===- FusedAttentionTest.cpp - the fused attention kernels ---------------===//
//
// runtime/kernels/cuda/FusedAttention.cu (setFusedAttention(true)): attention
// with bf16 products in one kernel forward and two backward. Against the
// CPU kernels with the same roundings, within expectBf16Products' bounds, in
// both layouts; every call must have run fused (fusedAttentionCalls), and
// the shapes the kernels are not built for must still be computed (by the
// batched GEMMs).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/cuda/FusedAttention.h"
#include "test/unit/kernels/cuda/AttentionTestSupport.h"

namespace tgc::test {
namespace {

// Every tile width the kernels are built for; one key tile (64) and
// several, with a partial last one; queries in a partial tile; causal,
// padded and dropped keys; keys not in whole quads (one Philox draw a
// factor).
const AttentionCase kFusedCases[] = {
    {"one key tile, causal masked dropout, head 64", 2, 4, 64, 64, 64, 64, true,
     true, 0.1f},
    {"3 key tiles, masked dropout, head 32", 2, 3, 37, 150, 32, 32, true, false,
     0.1f},
    {"self causal 150, head 16, dropout", 2, 2, 150, 150, 16, 16, true, true,
     0.1f},
    {"head 128, causal dropout", 1, 2, 70, 70, 128, 128, true, true, 0.1f},
    {"53 keys (no whole quads), head 64, dropout", 1, 2, 37, 53, 64, 64, false,
     false, 0.1f},
    {"200 keys, no dropout, head 64", 2, 2, 65, 200, 64, 64, true, false, 0.0f},
    // Narrower heads, padded with zeros to the tile width (the tiny models'
    // 8).
    {"head 8 in a tile of 16, causal dropout", 2, 4, 70, 70, 8, 8, true, true,
     0.1f},
    {"head 24 in a tile of 32, masked dropout", 2, 2, 37, 150, 24, 24, true,
     false, 0.1f},
    // A padding row of a partial batch: its lse rounds to -1e9, and the
    // backward weighs its keys as the forward did (one and three key
    // tiles).
    {"one key tile, batch 1 padding, head 64", 2, 2, 37, 64, 64, 64, true,
     false, 0.1f, 0, ScoreBias::None, true},
    {"3 key tiles, causal, batch 1 padding, head 32", 2, 2, 150, 150, 32, 32,
     true, true, 0.1f, 0, ScoreBias::None, true},
};

// The decoder's step over a key cache: forward only.
const AttentionCase kFusedDecodingCases[] = {
    {"decoding 3 queries at 61 of 64", 1, 2, 3, 64, 16, 16, false, true, 0.0f,
     61},
    {"decoding one query at 100 of 128", 2, 2, 1, 128, 32, 32, true, true, 0.0f,
     100},
};

/// Turns the fused kernels on for a test and off after it.
class FusedAttention : public CudaKernels {
protected:
  void SetUp() override {
    CudaKernels::SetUp();
    cuda::setFusedAttention(true);
  }
  void TearDown() override {
    cuda::setFusedAttention(false);
    CudaKernels::TearDown();
  }
};

/// Runs `call` and expects it to have run the fused kernels `expected`
/// times.
template <typename Call>
void expectFused(const std::string &what, int64_t expected, Call call) {
  const int64_t before = cuda::fusedAttentionCalls();
  call();
  EXPECT_EQ(cuda::fusedAttentionCalls() - before, expected) << what;
}

TEST_F(FusedAttention, MatchesTheCpuInBothLayouts) {
  using runtime::Bf16;
  for (const AttentionCase &c : kFusedCases) {
    for (bool sequenceMajor : {false, true}) {
      AttentionInputs in(c);
      const std::string name =
          std::string(c.name) + (sequenceMajor ? " (sequence-major)" : "");
      cuda::AttentionShape shape = in.shape;
      shape.sequenceMajor = sequenceMajor;
      // Host tensors in the call's layout, and back to head-major.
      auto toLayout = [&](const auto &x, int64_t rows, int64_t width) {
        return sequenceMajor ? swapMiddle(x, c.batch, c.heads, rows, width) : x;
      };
      auto toHeads = [&](const std::vector<float> &x, int64_t rows,
                         int64_t width) {
        return sequenceMajor ? swapMiddle(x, c.batch, rows, c.heads, width) : x;
      };
      const Bf16ProductsExpectation expected(in);
      const std::vector<Bf16> &q = expected.q, &k = expected.k, &v = expected.v;
      const Bf16AttentionResults &want = expected.want, &plain = expected.plain;

      DeviceArray<Bf16> qd(toLayout(q, c.queries, c.keyDim)),
          kd(toLayout(k, c.keys, c.keyDim)),
          vd(toLayout(v, c.keys, c.valueDim));
      DeviceArray<float> grad(toLayout(in.grad, c.queries, c.valueDim));
      cuda::AttentionConfig config = in.cudaConfig;
      config.bf16Products = true;
      // Outputs start as garbage: the kernels must write every element.
      DeviceArray<float> out(want.forward.output.size(), 7.0f),
          lse(want.forward.lse.size(), 7.0f), dq(q.size(), 7.0f),
          dk(k.size(), 7.0f), dv(v.size(), 7.0f);
      expectFused(name, 1, [&] {
        cuda::attention(qd.get(), kd.get(), vd.get(), out.get(), lse.get(),
                        shape, config);
      });
      std::vector<float> f32Out = out.read();
      expectBf16Products("fused output " + name,
                         toHeads(f32Out, c.queries, c.valueDim),
                         want.forward.output, plain.forward.output);
      expectClose("fused lse " + name, toHeads(lse.read(), c.queries, 1),
                  want.forward.lse, 1e-4);
      expectFused(name, 1, [&] {
        cuda::attentionGrad(grad.get(), qd.get(), kd.get(), vd.get(), out.get(),
                            lse.get(), dq.get(), dk.get(), dv.get(), shape,
                            config);
      });
      std::vector<float> f32q = dq.read(), f32k = dk.read(), f32v = dv.read();
      expectBf16Products("fused query grad " + name,
                         toHeads(f32q, c.queries, c.keyDim), want.dq, plain.dq);
      expectBf16Products("fused key grad " + name,
                         toHeads(f32k, c.keys, c.keyDim), want.dk, plain.dk);
      expectBf16Products("fused value grad " + name,
                         toHeads(f32v, c.keys, c.valueDim), want.dv, plain.dv);

      // The same inputs give the same bits (no atomics).
      DeviceArray<float> again(q.size(), 7.0f), againK(k.size(), 7.0f),
          againV(v.size(), 7.0f);
      cuda::attentionGrad(grad.get(), qd.get(), kd.get(), vd.get(), out.get(),
                          lse.get(), again.get(), againK.get(), againV.get(),
                          shape, config);
      EXPECT_EQ(again.read(), f32q) << name;
      EXPECT_EQ(againK.read(), f32k) << name;
      EXPECT_EQ(againV.read(), f32v) << name;

      // tg-fold-bf16-roundings' bf16 output and gradients: the f32 values
      // rounded once as they are written.
      expectBf16ResultsRoundedOnce("fused " + name, qd.get(), kd.get(),
                                   vd.get(), grad.get(), lse.get(), shape,
                                   config, f32Out, f32q, f32k, f32v);
    }
  }
}

// Dropout drops the same probabilities as on the CPU: with v the identity
// (keys = value width, 64 keys: one tile) out_ij = p_ij f_ij / l_i, zero
// exactly where probability (i, j) was dropped.
TEST_F(FusedAttention, DropsTheCpusProbabilities) {
  using runtime::Bf16;
  const AttentionCase c{
      "identity values", 2, 3, 37, 64, 64, 64, false, false, 0.3f};
  AttentionInputs in(c);
  for (int64_t bh = 0; bh < c.batch * c.heads; ++bh)
    for (int64_t j = 0; j < c.keys; ++j)
      for (int64_t col = 0; col < c.valueDim; ++col)
        in.v[(bh * c.keys + j) * c.valueDim + col] = j == col ? 1.0f : 0.0f;
  std::vector<Bf16> q = roundedToBf16(in.q), k = roundedToBf16(in.k),
                    v = roundedToBf16(in.v);
  const cpu::AttentionConfig roundedConfig =
      Bf16ProductsExpectation::withBf16Products(in.cpuConfig);
  std::vector<float> cpuOut(in.rows() * c.valueDim), cpuLse(in.rows());
  cpu::attention(q.data(), k.data(), v.data(), cpuOut.data(), cpuLse.data(),
                 in.shape, roundedConfig);
  DeviceArray<Bf16> qd(q), kd(k), vd(v);
  DeviceArray<float> out(cpuOut.size()), lse(cpuLse.size());
  cuda::AttentionConfig config = in.cudaConfig;
  config.bf16Products = true;
  expectFused(c.name, 1, [&] {
    cuda::attention(qd.get(), kd.get(), vd.get(), out.get(), lse.get(),
                    in.shape, config);
  });
  std::vector<float> probabilities = out.read();
  expectSameZeros("fused attention dropout mask", probabilities, cpuOut);
  expectClose("fused dropped probabilities", probabilities, cpuOut, 1e-2);
}

TEST_F(FusedAttention, DecodingOverAKeyCache) {
  using runtime::Bf16;
  for (const AttentionCase &c : kFusedDecodingCases) {
    AttentionInputs in(c);
    std::vector<Bf16> q = roundedToBf16(in.q), k = roundedToBf16(in.k),
                      v = roundedToBf16(in.v);
    const cpu::AttentionConfig roundedConfig =
        Bf16ProductsExpectation::withBf16Products(in.cpuConfig);
    std::vector<float> cpuOut(in.rows() * c.valueDim), cpuLse(in.rows()),
        plainOut(cpuOut.size()), plainLse(cpuLse.size());
    cpu::attention(q.data(), k.data(), v.data(), cpuOut.data(), cpuLse.data(),
                   in.shape, roundedConfig);
    cpu::attention(q.data(), k.data(), v.data(), plainOut.data(),
                   plainLse.data(), in.shape, in.cpuConfig);
    DeviceArray<Bf16> qd(q), kd(k), vd(v);
    DeviceArray<float> out(cpuOut.size(), 7.0f), lse(cpuLse.size(), 7.0f);
    cuda::AttentionConfig config = in.cudaConfig;
    config.bf16Products = true;
    expectFused(c.name, 1, [&] {
      cuda::attention(qd.get(), kd.get(), vd.get(), out.get(), lse.get(),
                      in.shape, config);
    });
    expectBf16Products(std::string("fused decoding output ") + c.name,
                       out.read(), cpuOut, plainOut);
    expectClose(std::string("fused decoding lse ") + c.name, lse.read(), cpuLse,
                1e-4);
  }
}

// What the kernels are not built for goes to the batched GEMMs, with the
// fused kernels on: a score bias, keys and values of different widths, f32
// products.
TEST_F(FusedAttention, OtherShapesRunOnTheGemms) {
  using runtime::Bf16;
  for (const AttentionCase &c : kAttentionCases) {
    AttentionInputs in(c);
    cuda::AttentionConfig config = in.cudaConfig;
    config.bf16Products = true;
    if (cuda::fusedAttentionFits(in.shape, config))
      continue;
    const Bf16ProductsExpectation expected(in);
    const Bf16AttentionResults &want = expected.want, &plain = expected.plain;
    DeviceArray<Bf16> qd(expected.q), kd(expected.k), vd(expected.v);
    DeviceArray<float> out(want.forward.output.size()),
        lse(want.forward.lse.size());
    expectFused(c.name, 0, [&] {
      cuda::attention(qd.get(), kd.get(), vd.get(), out.get(), lse.get(),
                      in.shape, config);
    });
    expectBf16Products(std::string("unfused output ") + c.name, out.read(),
                       want.forward.output, plain.forward.output);
  }
  // f32 products are not the fused kernels' either.
  const AttentionCase &c = kFusedCases[0];
  AttentionInputs in(c);
  AttentionForward want = cpuAttention(in);
  DeviceArray<float> out(want.output.size()), lse(want.lse.size());
  expectFused("f32 products", 0, [&] {
    cuda::attention(in.qDevice.get(), in.kDevice.get(), in.vDevice.get(),
                    out.get(), lse.get(), in.shape, in.cudaConfig);
  });
  expectClose("f32 output with the fused kernels asked for", out.read(),
              want.output, 1e-4);
}

// The rule for which calls run fused, and the causal tile bounds: host
// code, run without a GPU.
TEST(FusedAttentionRule, WhichCallsRunFused) {
  const cuda::AttentionShape base{384, 8, 64, 64, 64, 64, true};
  cuda::AttentionConfig config;
  config.bf16Products = true;
  EXPECT_TRUE(cuda::fusedAttentionFits(base, config));
  for (int64_t width : {8, 16, 24, 32, 128}) {
    cuda::AttentionShape other = base;
    other.keyDim = other.valueDim = width;
    EXPECT_TRUE(cuda::fusedAttentionFits(other, config)) << width;
  }
  cuda::AttentionShape odd = base;
  odd.keyDim = odd.valueDim = 20;
  EXPECT_STREQ(cuda::fusedAttentionMisfit(odd, config),
               "its head width is not a multiple of 8 up to 128");
  cuda::AttentionShape mixed = base;
  mixed.valueDim = 32;
  EXPECT_STREQ(cuda::fusedAttentionMisfit(mixed, config),
               "its values are not as wide as its keys");
  cuda::AttentionShape noKeys = base;
  noKeys.keys = 0;
  EXPECT_STREQ(cuda::fusedAttentionMisfit(noKeys, config), "it has no keys");
  cuda::AttentionConfig f32 = config;
  f32.bf16Products = false;
  EXPECT_STREQ(cuda::fusedAttentionMisfit(base, f32), "its products are f32");
  const float bias = 0.0f;
  cuda::AttentionConfig biased = config;
  biased.bias = &bias;
  EXPECT_STREQ(cuda::fusedAttentionMisfit(base, biased),
               "it adds a score bias");

  // Narrower heads go in the next tile width, padded with zeros.
  EXPECT_EQ(cuda::fusedTileWidth(8), 16);
  EXPECT_EQ(cuda::fusedTileWidth(24), 32);
  EXPECT_EQ(cuda::fusedTileWidth(64), 64);
  EXPECT_EQ(cuda::fusedTileWidth(72), 128);

  cuda::AttentionConfig causal = config;
  causal.causal = true;
  EXPECT_EQ(cuda::firstVisibleQueryTile(config, 128), 0);
  EXPECT_EQ(cuda::firstVisibleQueryTile(causal, 0), 0);
  EXPECT_EQ(cuda::firstVisibleQueryTile(causal, 128), 128);
  const cuda::AttentionShape self{2, 2, 150, 150, 16, 16};
  EXPECT_EQ(cuda::visibleKeyEnd(self, config, 64), 150);
  EXPECT_EQ(cuda::visibleKeyEnd(self, causal, 64), 128);
  EXPECT_EQ(cuda::visibleKeyEnd(self, causal, 128), 150);
  // The decoder's step: 3 queries at positions 61 .. 63 of the cache.
  causal.causalOffset = 61;
  EXPECT_EQ(cuda::firstVisibleQueryTile(causal, 64), 0);
  EXPECT_EQ(cuda::firstVisibleQueryTile(causal, 200), 128);
  const cuda::AttentionShape cache{1, 2, 3, 64, 16, 16};
  EXPECT_EQ(cuda::visibleKeyEnd(cache, causal, 0), 64);
  // One query at position 100 of 200 cached keys reads 101 of them, as the
  // CPU kernel does (not a whole tile's worth of later keys).
  causal.causalOffset = 100;
  EXPECT_EQ(cuda::visibleKeyEnd(cuda::AttentionShape{1, 2, 1, 200, 16, 16},
                                causal, 0),
            101);
  // A negative offset would leave first rows with no key: the GEMMs take it.
  causal.causalOffset = -1;
  EXPECT_NE(cuda::fusedAttentionMisfit(self, causal), nullptr);
}

} // namespace
} // namespace tgc::test
