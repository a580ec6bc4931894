//===- AttentionTest.cpp - CPU fused attention against the reference ------===//
//
// runtime/kernels/cpu/Attention.cpp: the tiled attention forward (output
// and log-sum-exp) and backward, masked, causal and with dropout, on
// shapes that leave partial tiles. Helpers and the error measure:
// KernelTestSupport.h.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cpu/KernelTestSupport.h"

#include <cmath>
#include <limits>

namespace tgc::test {
namespace {

/// A problem's inputs as the reference takes them, and its configuration.
struct AttentionInputs : AttentionProblem {
  HostTensor hq, hk, hv, hmask, hbias, hgrad;
  reference::AttentionConfig interpConfig;

  explicit AttentionInputs(const AttentionCase &c) : AttentionProblem(c) {
    const cpu::AttentionShape &s = shape;
    hq = host(q, {s.batch, s.heads, s.queries, s.keyDim});
    hk = host(k, {s.batch, s.heads, s.keys, s.keyDim});
    hv = host(v, {s.batch, s.heads, s.keys, s.valueDim});
    hgrad = host(grad, {s.batch, s.heads, s.queries, s.valueDim});
    hmask = host(mask, {s.batch, s.keys});
    interpConfig.mask = c.mask ? &hmask : nullptr;
    if (!bias.empty()) {
      hbias = host(bias, biasShape);
      interpConfig.bias = &hbias;
      interpConfig.biasGrad = true;
    }
    interpConfig.causal = c.causal;
    interpConfig.causalOffset = c.causalOffset;
    interpConfig.scale = scale();
    interpConfig.dropout = testDropout(c.rate);
  }

  reference::AttentionResult referenceForward() const {
    return reference::attention(hq, hk, hv, interpConfig);
  }

  /// q, k and v rounded to bf16 (tg-mixed-precision's copies); the f32
  /// and host inputs become the rounded values, widened.
  struct Rounded {
    std::vector<runtime::Bf16> q, k, v;
  };
  Rounded roundToBf16() {
    auto round = [](std::vector<float> &values) {
      std::vector<runtime::Bf16> rounded(values.size());
      cpu::toBf16(values.data(), rounded.data(),
                  static_cast<int64_t>(values.size()));
      for (size_t i = 0; i < values.size(); ++i)
        values[i] = runtime::widen(rounded[i]);
      return rounded;
    };
    Rounded r{round(q), round(k), round(v)};
    const cpu::AttentionShape &s = shape;
    hq = host(q, {s.batch, s.heads, s.queries, s.keyDim});
    hk = host(k, {s.batch, s.heads, s.keys, s.keyDim});
    hv = host(v, {s.batch, s.heads, s.keys, s.valueDim});
    return r;
  }
};

// Scores, exponentials and the weighted sum of up to 150 values in float.
constexpr double kAttentionTolerance = 1e-5;

// Shapes the CPU kernels take other paths for than kAttentionCases' (head
// widths 8 to 24): heads of 32 and 64, where bf16 products read q in place
// in AMX tiles of 16 rows by 32 values (Bf16Tile.cpp); a decoder step, whose
// queries sit at key positions past 0 (forward only: the incremental
// decoder's attention over its cache, whose later keys are stale); a single
// key.
constexpr AttentionCase kTileCases[] = {
    {"heads of 64, self causal masked dropout", 2, 2, 70, 70, 64, 64, true,
     true, 0.1f},
    {"heads of 32, cross masked", 1, 3, 37, 90, 32, 32, true, false, 0.0f},
    {"one key", 1, 2, 5, 1, 32, 32, false, false, 0.0f},
    {"decoder step: one query at 40 of 53", 2, 2, 1, 53, 64, 64, true, true,
     0.0f, 40},
    {"decoder step: 3 queries at 50 of 53", 1, 2, 3, 53, 32, 32, false, true,
     0.0f, 50},
};

/// kAttentionCases, then kTileCases.
std::vector<AttentionCase> allCases() {
  std::vector<AttentionCase> cases(std::begin(kAttentionCases),
                                   std::end(kAttentionCases));
  cases.insert(cases.end(), std::begin(kTileCases), std::end(kTileCases));
  return cases;
}

TEST(CpuKernels, Attention) {
  for (const AttentionCase &c : allCases()) {
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

// A NaN in one key (a diverged projection) reaches every row that sees the
// key, in the output, the lse and the gradients, as in the reference: a
// probability of 0 for it would hide the NaN from the loss. Rows of other
// heads stay finite.
TEST(CpuKernels, AttentionSpreadsANaNKey) {
  const AttentionCase c = kAttentionCases[0]; // cross, masked: keys 0.. seen
  AttentionInputs in(c);
  const cpu::AttentionShape &s = in.shape;
  in.k[3 * s.keyDim] = std::numeric_limits<float>::quiet_NaN(); // b0 h0 key 3
  in.mask[3] = 0.0f; // key 3 of batch 0 unmasked
  AttentionForward got = cpuAttention(in);
  auto rowIsNaN = [&](const std::vector<float> &x, int64_t row, int64_t width) {
    for (int64_t d = 0; d < width; ++d)
      if (!std::isnan(x[row * width + d]))
        return false;
    return true;
  };
  for (int64_t row = 0; row < in.rows(); ++row) {
    bool seesNaN = row < s.queries; // batch 0, head 0
    EXPECT_EQ(rowIsNaN(got.output, row, s.valueDim), seesNaN) << "row " << row;
    EXPECT_EQ(std::isnan(got.lse[row]), seesNaN) << "row " << row;
  }
  std::vector<float> dq(in.q.size()), dk(in.k.size()), dv(in.v.size());
  cpu::attentionGrad(in.grad.data(), in.q.data(), in.k.data(), in.v.data(),
                     got.output.data(), got.lse.data(), dq.data(), dk.data(),
                     dv.data(), s, in.cpuConfig);
  EXPECT_TRUE(rowIsNaN(dq, 0, s.keyDim));
  EXPECT_TRUE(rowIsNaN(dv, 0, s.valueDim)); // b0 h0 key 0
  EXPECT_FALSE(std::isnan(dq[s.queries * s.keyDim])); // b0 h1 query 0
}

// Each gradient sums up to 150 terms p (dp - D) computed in float; D comes
// from the float output rather than the reference's sum of p dp.
constexpr double kAttentionGradTolerance = 1e-5;

TEST(CpuKernels, AttentionGrad) {
  for (const AttentionCase &c : allCases()) {
    if (c.causalOffset != 0)
      continue; // a decoder step has no backward
    AttentionInputs in(c);
    reference::AttentionResult forward = in.referenceForward();
    reference::AttentionGrads expected = reference::attentionGrad(
        in.hgrad, in.hq, in.hk, in.hv, forward.lse, in.interpConfig);
    // The CPU backward reads the CPU forward's output and lse, as in a
    // generated step.
    AttentionForward cpuForward = cpuAttention(in);
    // Outputs start as garbage: the kernel must write every element. So
    // zeros may pass: with one key every probability is 1 and the query's
    // and key's gradients are exactly zero, which some builds compute
    // exactly and others to a rounding residue (both within tolerance).
    std::vector<float> dq(in.q.size(), 7.0f), dk(in.k.size(), 7.0f),
        dv(in.v.size(), 7.0f), dbias(in.bias.size(), 7.0f);
    cpu::AttentionConfig config = in.cpuConfig;
    config.biasGrad = dbias.empty() ? nullptr : dbias.data();
    cpu::attentionGrad(in.grad.data(), in.q.data(), in.k.data(), in.v.data(),
                       cpuForward.output.data(), cpuForward.lse.data(),
                       dq.data(), dk.data(), dv.data(), in.shape, config);
    if (!dbias.empty())
      expectClose(std::string("attentionGrad bias ") + c.name, dbias,
                  expected.bias, kAttentionGradTolerance, AllZeros::Allowed);
    expectClose(std::string("attentionGrad query ") + c.name, dq,
                expected.query, kAttentionGradTolerance, AllZeros::Allowed);
    expectClose(std::string("attentionGrad key ") + c.name, dk, expected.key,
                kAttentionGradTolerance, AllZeros::Allowed);
    expectClose(std::string("attentionGrad value ") + c.name, dv,
                expected.value, kAttentionGradTolerance, AllZeros::Allowed);
  }
}

// A batch row whose every key is masked (a padding row of a batch): the
// forward weighs its keys alike (in float, -1e9 + s rounds s away), and so
// must the backward. Its lse, -1e9 + log(sum), rounds to -1e9 in f32, and
// exp(s - lse) weighed each key 1: the gradients were Sk times too large,
// on the CPU and in the reference given the f32 lse (the interpreter's).
TEST(CpuKernels, AttentionGradOfARowWhoseEveryKeyIsMasked) {
  for (AttentionCase c :
       {kAttentionCases[1], kAttentionCases[2]}) { // cross; self causal
    c.batch1Padded = true;
    AttentionInputs in(c);
    const cpu::AttentionShape &s = in.shape;
    in.interpConfig.floatMaskedScores = true; // as the kernels (and the f32 interpreter)
    reference::AttentionResult forward = in.referenceForward();
    reference::AttentionGrads expected = reference::attentionGrad(
        in.hgrad, in.hq, in.hk, in.hv, forward.lse, in.interpConfig);
    // The reference from the lse in f32, as the interpreter holds it (the
    // other rows' lse rounded too: a few 1e-7 apart).
    HostTensor f32Lse = forward.lse;
    for (double &x : f32Lse.data)
      x = static_cast<float>(x);
    reference::AttentionGrads fromF32 = reference::attentionGrad(
        in.hgrad, in.hq, in.hk, in.hv, f32Lse, in.interpConfig);
    AttentionForward cpuForward = cpuAttention(in);
    std::vector<float> dq(in.q.size(), 7.0f), dk(in.k.size(), 7.0f),
        dv(in.v.size(), 7.0f);
    cpu::attentionGrad(in.grad.data(), in.q.data(), in.k.data(), in.v.data(),
                       cpuForward.output.data(), cpuForward.lse.data(),
                       dq.data(), dk.data(), dv.data(), s, in.cpuConfig);
    const std::string name = std::string(" with a fully masked batch row, ") +
                             c.name;
    expectClose("attentionGrad query" + name, dq, expected.query,
                kAttentionGradTolerance);
    expectClose("attentionGrad key" + name, dk, expected.key,
                kAttentionGradTolerance);
    expectClose("attentionGrad value" + name, dv, expected.value,
                kAttentionGradTolerance);
    expectClose("reference attentionGrad value from the f32 lse" + name,
                std::vector<float>(fromF32.value.data.begin(),
                                   fromF32.value.data.end()),
                expected.value, kAttentionGradTolerance);
  }
}

// bf16 queries, keys and values (tg-mixed-precision): the kernels widen
// each head's rows and compute in f32, so they give exactly what the f32
// kernels give on the widened values (and the reference's result within
// the f32 tolerances).
TEST(CpuKernels, Bf16AttentionIsTheF32OneOnTheRoundedValues) {
  for (const AttentionCase &c : kAttentionCases) {
    AttentionInputs in(c);
    auto [q, k, v] = in.roundToBf16();
    const cpu::AttentionShape &s = in.shape;
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

// bf16_products: the kernels multiply in bf16 what the reference rounds
// (the probabilities; dO, p f and the score gradients in the backward):
// expectBf16Products (test/unit/kernels/KernelTestSupport.h) says how close.
TEST(CpuKernels, Bf16ProductsAttentionMatchesTheReferenceWithItsRoundings) {
  for (const AttentionCase &c : allCases()) {
    if (c.keys == 1)
      continue; // a probability of exactly 1 and no score gradient: nothing
                // for the roundings to change (the f32 tests take it)
    AttentionInputs in(c);
    auto [q, k, v] = in.roundToBf16();
    const cpu::AttentionShape &s = in.shape;
    reference::AttentionConfig plain = in.interpConfig, rounded = plain;
    rounded.bf16Products = true;
    cpu::AttentionConfig config = in.cpuConfig;
    config.bf16Products = true;

    AttentionForward got{std::vector<float>(in.grad.size()),
                         std::vector<float>(s.batch * s.heads * s.queries)};
    cpu::attention(q.data(), k.data(), v.data(), got.output.data(),
                   got.lse.data(), s, config);
    reference::AttentionResult expected =
        reference::attention(in.hq, in.hk, in.hv, rounded);
    std::string name(c.name);
    expectBf16Products(
        "bf16-products output " + name, got.output, expected.output.data,
        reference::attention(in.hq, in.hk, in.hv, plain).output.data);
    expectClose("bf16-products lse " + name, got.lse, expected.lse,
                kAttentionTolerance);
    if (c.causalOffset != 0)
      continue; // a decoder step has no backward

    std::vector<float> dq(in.q.size(), 7.0f), dk(in.k.size(), 7.0f),
        dv(in.v.size(), 7.0f);
    cpu::attentionGrad(in.grad.data(), q.data(), k.data(), v.data(),
                       got.output.data(), got.lse.data(), dq.data(), dk.data(),
                       dv.data(), s, config);
    auto gradients = [&](const reference::AttentionConfig &config) {
      return reference::attentionGrad(in.hgrad, in.hq, in.hk, in.hv,
                                      expected.lse, config);
    };
    reference::AttentionGrads want = gradients(rounded),
                              unrounded = gradients(plain);
    expectBf16Products("bf16-products query grad " + name, dq, want.query.data,
                       unrounded.query.data);
    expectBf16Products("bf16-products key grad " + name, dk, want.key.data,
                       unrounded.key.data);
    expectBf16Products("bf16-products value grad " + name, dv, want.value.data,
                       unrounded.value.data);
  }
}

// tg-fold-bf16-roundings' attention with a bf16 output and attention_grad
// with bf16 gradients: each is the f32 kernel's result rounded once (the
// same products in the same order, then runtime::roundToBf16), bit for
// bit, in both layouts (the same buffers read as [B, S, H, D] for
// sequence-major); every element written. The backward given the bf16
// output (which bf16 products never read) gives the same gradients.
TEST(CpuKernels, Bf16AttentionResultsAreTheF32OnesRounded) {
  for (const AttentionCase &c : kAttentionCases) {
    for (bool sequenceMajor : {false, true}) {
      AttentionInputs in(c);
      auto [q, k, v] = in.roundToBf16();
      cpu::AttentionShape s = in.shape;
      s.sequenceMajor = sequenceMajor;
      cpu::AttentionConfig config = in.cpuConfig;
      config.bf16Products = true;
      std::vector<float> out(in.grad.size()), lse(in.rows()), dq(q.size()),
          dk(k.size()), dv(v.size());
      cpu::attention(q.data(), k.data(), v.data(), out.data(), lse.data(), s,
                     config);
      cpu::attentionGrad(in.grad.data(), q.data(), k.data(), v.data(),
                         out.data(), lse.data(), dq.data(), dk.data(),
                         dv.data(), s, config);
      const runtime::Bf16 garbage = runtime::roundToBf16(7.0f);
      std::vector<runtime::Bf16> bq(q.size(), garbage), bk(k.size(), garbage),
          bv(v.size(), garbage), bout(out.size(), garbage);
      std::vector<float> lse16(lse.size(), 7.0f);
      cpu::attention(q.data(), k.data(), v.data(), bout.data(), lse16.data(),
                     s, config);
      cpu::attentionGrad(in.grad.data(), q.data(), k.data(), v.data(),
                         out.data(), lse.data(), bq.data(), bk.data(),
                         bv.data(), s, config);
      std::string name = std::string(c.name) +
                         (sequenceMajor ? " (sequence-major)" : "");
      EXPECT_EQ(lse16, lse) << name;
      for (size_t i = 0; i < out.size(); ++i)
        ASSERT_EQ(bout[i].bits, runtime::roundToBf16(out[i]).bits)
            << "output, element " << i << ", " << name;
      std::vector<float> fq(q.size(), 7.0f), fk(k.size(), 7.0f),
          fv(v.size(), 7.0f);
      std::vector<runtime::Bf16> gq(q.size(), garbage), gk(k.size(), garbage),
          gv(v.size(), garbage);
      cpu::attentionGrad(in.grad.data(), q.data(), k.data(), v.data(),
                         bout.data(), lse.data(), fq.data(), fk.data(),
                         fv.data(), s, config);
      cpu::attentionGrad(in.grad.data(), q.data(), k.data(), v.data(),
                         bout.data(), lse.data(), gq.data(), gk.data(),
                         gv.data(), s, config);
      EXPECT_EQ(fq, dq) << name;
      EXPECT_EQ(fk, dk) << name;
      EXPECT_EQ(fv, dv) << name;
      auto bits = [](const std::vector<runtime::Bf16> &x) {
        std::vector<uint16_t> out;
        for (runtime::Bf16 b : x)
          out.push_back(b.bits);
        return out;
      };
      EXPECT_EQ(bits(gq), bits(bq)) << name;
      EXPECT_EQ(bits(gk), bits(bk)) << name;
      EXPECT_EQ(bits(gv), bits(bv)) << name;
      for (auto [what, f32, bf16] :
           {std::tuple<const char *, const std::vector<float> *,
                       const std::vector<runtime::Bf16> *>{"query", &dq, &bq},
            {"key", &dk, &bk},
            {"value", &dv, &bv}})
        for (size_t i = 0; i < f32->size(); ++i)
          ASSERT_EQ((*bf16)[i].bits, runtime::roundToBf16((*f32)[i]).bits)
              << what << " gradient, element " << i << ", " << name;
    }
  }
}

// Heads whose sequence-major rows lie a multiple of 1 KiB apart (H x D of
// 256 and 512 floats): the f32 backward copies them into contiguous rows
// (Attention.cpp, rowsShareCacheSets), and must still compute the same sums.
constexpr AttentionCase kWideHeadCases[] = {
    {"wide heads, self causal masked dropout", 2, 4, 70, 70, 64, 64, true,
     true, 0.1f},
    {"wide heads, cross masked", 1, 8, 37, 90, 64, 64, true, false, 0.0f},
};

// tg.attention sequence_major (tg-fold-head-transposes): q, k, v, out and
// the gradients as [B, S, H, D], lse as [B, Sq, H]. Each head computes the
// same products on rows H x D apart instead of D, so the results are the
// head-major kernels' (tested against the reference above), transposed,
// bit for bit; f32 and bf16 operands.
template <typename T> void expectSequenceMajorIsTransposed() {
  std::vector<AttentionCase> cases(std::begin(kAttentionCases),
                                   std::end(kAttentionCases));
  cases.insert(cases.end(), std::begin(kWideHeadCases),
               std::end(kWideHeadCases));
  for (const AttentionCase &c : cases) {
    AttentionInputs in(c);
    const cpu::AttentionShape &s = in.shape;
    std::vector<float> qf = in.q, kf = in.k, vf = in.v;
    std::vector<T> q(qf.size()), k(kf.size()), v(vf.size());
    if constexpr (std::is_same_v<T, runtime::Bf16>) {
      cpu::toBf16(qf.data(), q.data(), static_cast<int64_t>(q.size()));
      cpu::toBf16(kf.data(), k.data(), static_cast<int64_t>(k.size()));
      cpu::toBf16(vf.data(), v.data(), static_cast<int64_t>(v.size()));
    } else {
      q = qf, k = kf, v = vf;
    }
    std::vector<float> out(in.grad.size()), lse(in.rows()), dq(q.size()),
        dk(k.size()), dv(v.size());
    cpu::attention(q.data(), k.data(), v.data(), out.data(), lse.data(), s,
                   in.cpuConfig);
    cpu::attentionGrad(in.grad.data(), q.data(), k.data(), v.data(),
                       out.data(), lse.data(), dq.data(), dk.data(), dv.data(),
                       s, in.cpuConfig);

    auto toSeq = [&](const std::vector<T> &x, int64_t positions, int64_t d) {
      std::vector<T> out(x.size());
      for (int64_t b = 0; b < s.batch; ++b)
        for (int64_t h = 0; h < s.heads; ++h)
          for (int64_t i = 0; i < positions; ++i)
            for (int64_t l = 0; l < d; ++l)
              out[((b * positions + i) * s.heads + h) * d + l] =
                  x[((b * s.heads + h) * positions + i) * d + l];
      return out;
    };
    cpu::AttentionShape seq = s;
    seq.sequenceMajor = true;
    std::vector<T> sq = toSeq(q, s.queries, s.keyDim),
                   sk = toSeq(k, s.keys, s.keyDim),
                   sv = toSeq(v, s.keys, s.valueDim);
    std::vector<float> sgrad =
        swapMiddle(in.grad, s.batch, s.heads, s.queries, s.valueDim);
    // Outputs start as garbage: the kernels must write every element.
    std::vector<float> sout(out.size(), 7.0f), slse(lse.size(), 7.0f),
        sdq(dq.size(), 7.0f), sdk(dk.size(), 7.0f), sdv(dv.size(), 7.0f);
    cpu::attention(sq.data(), sk.data(), sv.data(), sout.data(), slse.data(),
                   seq, in.cpuConfig);
    cpu::attentionGrad(sgrad.data(), sq.data(), sk.data(), sv.data(),
                       sout.data(), slse.data(), sdq.data(), sdk.data(),
                       sdv.data(), seq, in.cpuConfig);
    auto back = [&](const std::vector<float> &x, int64_t positions, int64_t d) {
      return swapMiddle(x, s.batch, positions, s.heads, d);
    };
    EXPECT_EQ(back(sout, s.queries, s.valueDim), out) << c.name;
    EXPECT_EQ(back(slse, s.queries, 1), lse) << c.name;
    EXPECT_EQ(back(sdq, s.queries, s.keyDim), dq) << c.name;
    EXPECT_EQ(back(sdk, s.keys, s.keyDim), dk) << c.name;
    EXPECT_EQ(back(sdv, s.keys, s.valueDim), dv) << c.name;
  }
}

TEST(CpuKernels, SequenceMajorAttentionIsTheHeadMajorOneTransposed) {
  expectSequenceMajorIsTransposed<float>();
  expectSequenceMajorIsTransposed<runtime::Bf16>();
}

} // namespace
} // namespace tgc::test
