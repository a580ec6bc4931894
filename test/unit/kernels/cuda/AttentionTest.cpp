//===- AttentionTest.cpp - CUDA fused attention against the CPU -----------===//
//
// runtime/kernels/cuda/Attention.cu and AttentionGrad.cu: the tiled
// attention forward (with the decoder's key-cache cases) and backward,
// masked, causal and with dropout (the same dropped probabilities as the
// CPU), head sizes up to 128. Helpers and the error measure:
// KernelTestSupport.h.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cuda/AttentionTestSupport.h"

#include <iterator>

namespace tgc::test {
namespace {

// Head sizes 64 and 128 take the shared memory past 48 KiB. Keys in whole
// quads take bf16_products' quad row kernels (AttentionBf16.cu): half a
// warp a row up to 64 keys (an odd number of rows: the last warp's halves
// part), a warp up to 512, the general kernels past that.
const AttentionCase kWideHeadCases[] = {
    {"head 64 masked dropout", 2, 2, 70, 90, 64, 64, true, false, 0.1f},
    {"head 128 causal dropout", 1, 2, 70, 70, 128, 128, true, true, 0.1f},
    {"quads: 64 keys causal masked dropout", 2, 4, 64, 64, 64, 64, true, true,
     0.1f},
    {"quads: 48 keys, odd rows, dropout", 1, 3, 33, 48, 16, 16, true, false,
     0.1f},
    {"quads: 200 keys masked dropout", 2, 2, 33, 200, 32, 32, true, false,
     0.1f},
    {"520 keys, past the quads, dropout", 1, 2, 9, 520, 16, 16, true, false,
     0.1f},
};

// Padding rows of a partial batch (every key of batch 1 masked): their lse
// rounds to -1e9, and the backward weighs their keys as the forward did
// (RowWeights), by the general kernels and by quads.
const AttentionCase kPaddedCases[] = {
    {"batch 1 padding, cross masked dropout", 2, 2, 20, 150, 16, 16, true,
     false, 0.1f, 0, ScoreBias::None, true},
    {"batch 1 padding, quads: 64 keys causal dropout", 2, 2, 64, 64, 16, 16,
     true, true, 0.1f, 0, ScoreBias::None, true},
};

// The incremental decoder's attention over a key cache (forward only):
// the keys past each query's position hold stale values and must not count.
const AttentionCase kDecodingCases[] = {
    {"decoding one query at 40 of 64", 3, 2, 1, 64, 16, 16, true, true, 0.0f,
     40},
    {"decoding 3 queries at 61 of 64", 1, 2, 3, 64, 16, 16, false, true, 0.0f,
     61},
    {"decoding the first position", 2, 2, 1, 64, 64, 64, true, true, 0.0f, 0},
};

/// The shared cases (KernelTestCases.h), the wide heads and the padded
/// batches: what both the forward and the backward run.
std::vector<AttentionCase> trainingCases() {
  std::vector<AttentionCase> cases(std::begin(kAttentionCases),
                                   std::end(kAttentionCases));
  cases.insert(cases.end(), std::begin(kWideHeadCases),
               std::end(kWideHeadCases));
  cases.insert(cases.end(), std::begin(kPaddedCases), std::end(kPaddedCases));
  return cases;
}

// Scores, exponentials and weighted sums of up to 150 values in float.
constexpr double kAttentionTolerance = 1e-4;

TEST_F(CudaKernels, Attention) {
  std::vector<AttentionCase> cases = trainingCases();
  cases.insert(cases.end(), std::begin(kDecodingCases),
               std::end(kDecodingCases));
  for (const AttentionCase &c : cases) {
    AttentionInputs in(c);
    AttentionForward expected = cpuAttention(in);
    DeviceArray<float> dout(expected.output.size(), 7.0f),
        dlse(expected.lse.size(), 7.0f);
    cuda::attention(in.qDevice.get(), in.kDevice.get(), in.vDevice.get(),
                    dout.get(), dlse.get(), in.shape, in.cudaConfig);
    std::vector<float> gpuLse = dlse.read();
    expectClose(std::string("attention output ") + c.name, dout.read(),
                expected.output, kAttentionTolerance);
    expectClose(std::string("attention lse ") + c.name, gpuLse, expected.lse,
                kAttentionTolerance);
    if (c.rate > 0.0f) {
      // The normalizer is the undropped sum: lse does not see dropout.
      cuda::AttentionConfig kept = in.cudaConfig;
      kept.dropout.rate = 0.0f;
      DeviceArray<float> plain(expected.output.size()),
          plainLse(expected.lse.size());
      cuda::attention(in.qDevice.get(), in.kDevice.get(), in.vDevice.get(),
                      plain.get(), plainLse.get(), in.shape, kept);
      EXPECT_EQ(plainLse.read(), gpuLse) << c.name;
    }
  }
}

// With v the identity (keys = value width) and no mask, out_ij = p_ij f_ij /
// l_i: zero exactly where dropout dropped probability (i, j). Both sides
// must drop the same ones, indexed flat into [B, H, Sq, Sk].
TEST_F(CudaKernels, AttentionDropoutMask) {
  const AttentionCase c{
      "identity values", 2, 3, 37, 70, 16, 70, false, false, 0.3f};
  AttentionInputs in(c);
  for (int64_t bh = 0; bh < c.batch * c.heads; ++bh)
    for (int64_t j = 0; j < c.keys; ++j)
      for (int64_t col = 0; col < c.valueDim; ++col)
        in.v[(bh * c.keys + j) * c.valueDim + col] = j == col ? 1.0f : 0.0f;
  DeviceArray<float> identity(in.v);
  AttentionForward expected = cpuAttention(in);
  DeviceArray<float> dout(expected.output.size()), dlse(expected.lse.size());
  cuda::attention(in.qDevice.get(), in.kDevice.get(), identity.get(),
                  dout.get(), dlse.get(), in.shape, in.cudaConfig);
  std::vector<float> probabilities = dout.read();
  expectSameZeros("attention dropout mask", probabilities, expected.output);
  expectClose("attention dropped probabilities", probabilities, expected.output,
              kAttentionTolerance);
}

// Each gradient sums up to 150 terms p (dp - D) in float, in different
// orders on the two sides.
constexpr double kAttentionGradTolerance = 1e-4;

TEST_F(CudaKernels, AttentionGrad) {
  for (const AttentionCase &c : trainingCases()) {
    AttentionInputs in(c);
    // Each side's backward reads its own forward's output and lse, as in a
    // generated step.
    AttentionForward cpuForward = cpuAttention(in);
    std::vector<float> dq(in.q.size()), dk(in.k.size()), dv(in.v.size()),
        dbias(in.biasSize());
    // A bias's gradient too, summed over the heads and batches that share
    // it (atomics on the GPU).
    cpu::AttentionConfig cpuConfig = in.cpuConfig;
    cuda::AttentionConfig cudaConfig = in.cudaConfig;
    DeviceArray<float> gbias(dbias.size(), 7.0f);
    if (!dbias.empty()) {
      cpuConfig.biasGrad = dbias.data();
      cudaConfig.biasGrad = gbias.get();
    }
    cpu::attentionGrad(in.grad.data(), in.q.data(), in.k.data(), in.v.data(),
                       cpuForward.output.data(), cpuForward.lse.data(),
                       dq.data(), dk.data(), dv.data(), in.shape, cpuConfig);
    DeviceArray<float> dout(cpuForward.output.size()),
        dlse(cpuForward.lse.size());
    cuda::attention(in.qDevice.get(), in.kDevice.get(), in.vDevice.get(),
                    dout.get(), dlse.get(), in.shape, cudaConfig);
    // Outputs start as garbage: the kernels must write every element.
    DeviceArray<float> gq(dq.size(), 7.0f), gk(dk.size(), 7.0f),
        gv(dv.size(), 7.0f);
    cuda::attentionGrad(in.gradDevice.get(), in.qDevice.get(), in.kDevice.get(),
                        in.vDevice.get(), dout.get(), dlse.get(), gq.get(),
                        gk.get(), gv.get(), in.shape, cudaConfig);
    expectClose(std::string("attentionGrad query ") + c.name, gq.read(), dq,
                kAttentionGradTolerance);
    expectClose(std::string("attentionGrad key ") + c.name, gk.read(), dk,
                kAttentionGradTolerance);
    expectClose(std::string("attentionGrad value ") + c.name, gv.read(), dv,
                kAttentionGradTolerance);
    if (!dbias.empty())
      expectClose(std::string("attentionGrad bias ") + c.name, gbias.read(),
                  dbias, kAttentionGradTolerance);
  }
}

// tg-mixed-precision's attention without bf16_products: bf16 q, k, v on
// both sides, widened exactly and computed in f32, so the tolerances are the
// f32 kernels'.
TEST_F(CudaKernels, AttentionBf16) {
  for (const AttentionCase &c : trainingCases()) {
    AttentionInputs in(c);
    std::vector<runtime::Bf16> q = roundedToBf16(in.q), k = roundedToBf16(in.k),
                               v = roundedToBf16(in.v);
    Bf16AttentionResults want = cpuBf16Attention(in, q, k, v, in.cpuConfig);
    DeviceArray<runtime::Bf16> qDevice(q), kDevice(k), vDevice(v);
    DeviceArray<float> dout(want.forward.output.size(), 7.0f),
        dlse(want.forward.lse.size(), 7.0f);
    cuda::attention(qDevice.get(), kDevice.get(), vDevice.get(), dout.get(),
                    dlse.get(), in.shape, in.cudaConfig);
    expectClose(std::string("bf16 attention output ") + c.name, dout.read(),
                want.forward.output, kAttentionTolerance);
    expectClose(std::string("bf16 attention lse ") + c.name, dlse.read(),
                want.forward.lse, kAttentionTolerance);

    DeviceArray<float> gq(q.size(), 7.0f), gk(k.size(), 7.0f),
        gv(v.size(), 7.0f);
    cuda::attentionGrad(in.gradDevice.get(), qDevice.get(), kDevice.get(),
                        vDevice.get(), dout.get(), dlse.get(), gq.get(),
                        gk.get(), gv.get(), in.shape, in.cudaConfig);
    expectClose(std::string("bf16 attentionGrad query ") + c.name, gq.read(),
                want.dq, kAttentionGradTolerance);
    expectClose(std::string("bf16 attentionGrad key ") + c.name, gk.read(),
                want.dk, kAttentionGradTolerance);
    expectClose(std::string("bf16 attentionGrad value ") + c.name, gv.read(),
                want.dv, kAttentionGradTolerance);
  }
}

// bf16_products: every product on the tensor cores, with the probabilities,
// dO, p f and the score gradients rounded to bf16 where the CPU kernels
// round them. Against the CPU with the same roundings (itself tested
// against the reference) within expectBf16Products' bounds, and away from
// the CPU without them (the roundings happened).
TEST_F(CudaKernels, AttentionBf16Products) {
  for (const AttentionCase &c : trainingCases()) {
    AttentionInputs in(c);
    const Bf16ProductsExpectation expected(in);
    const std::vector<runtime::Bf16> &q = expected.q, &k = expected.k,
                                     &v = expected.v;
    const Bf16AttentionResults &want = expected.want, &plain = expected.plain;

    DeviceArray<runtime::Bf16> qDevice(q), kDevice(k), vDevice(v);
    cuda::AttentionConfig config = in.cudaConfig;
    config.bf16Products = true;
    DeviceArray<float> dout(want.forward.output.size(), 7.0f),
        dlse(want.forward.lse.size(), 7.0f);
    cuda::attention(qDevice.get(), kDevice.get(), vDevice.get(), dout.get(),
                    dlse.get(), in.shape, config);
    std::string name(c.name);
    expectBf16Products("bf16-products output " + name, dout.read(),
                       want.forward.output, plain.forward.output);
    expectClose("bf16-products lse " + name, dlse.read(), want.forward.lse,
                kAttentionTolerance);

    DeviceArray<float> gq(q.size(), 7.0f), gk(k.size(), 7.0f),
        gv(v.size(), 7.0f);
    cuda::attentionGrad(in.gradDevice.get(), qDevice.get(), kDevice.get(),
                        vDevice.get(), dout.get(), dlse.get(), gq.get(),
                        gk.get(), gv.get(), in.shape, config);
    expectBf16Products("bf16-products query grad " + name, gq.read(), want.dq,
                       plain.dq);
    expectBf16Products("bf16-products key grad " + name, gk.read(), want.dk,
                       plain.dk);
    expectBf16Products("bf16-products value grad " + name, gv.read(), want.dv,
                       plain.dv);

    // tg-fold-bf16-roundings' bf16 output and gradients: the f32 values
    // above, each rounded once as it is written.
    using runtime::Bf16;
    DeviceArray<Bf16> roundedOut(want.forward.output.size()),
        rq(q.size()), rk(k.size()), rv(v.size()), sq(q.size()), sk(k.size()),
        sv(v.size());
    DeviceArray<float> lseAgain(want.forward.lse.size()), fq(q.size()),
        fk(k.size()), fv(v.size());
    cuda::attention(qDevice.get(), kDevice.get(), vDevice.get(),
                    roundedOut.get(), lseAgain.get(), in.shape, config);
    expectRoundedOnce("bf16-products output written in bf16 " + name,
                      roundedOut.read(), dout.read());
    EXPECT_EQ(lseAgain.read(), dlse.read()) << name;
    // The three overloads: f32 output and bf16 gradients, bf16 output and
    // f32 gradients, bf16 both. The backward never reads the output.
    cuda::attentionGrad(in.gradDevice.get(), qDevice.get(), kDevice.get(),
                        vDevice.get(), dout.get(), dlse.get(), rq.get(),
                        rk.get(), rv.get(), in.shape, config);
    cuda::attentionGrad(in.gradDevice.get(), qDevice.get(), kDevice.get(),
                        vDevice.get(), roundedOut.get(), dlse.get(), fq.get(),
                        fk.get(), fv.get(), in.shape, config);
    cuda::attentionGrad(in.gradDevice.get(), qDevice.get(), kDevice.get(),
                        vDevice.get(), roundedOut.get(), dlse.get(), sq.get(),
                        sk.get(), sv.get(), in.shape, config);
    std::vector<float> f32q = gq.read(), f32k = gk.read(), f32v = gv.read();
    expectRoundedOnce("bf16-products query grad in bf16 " + name, rq.read(),
                      f32q);
    expectRoundedOnce("bf16-products key grad in bf16 " + name, rk.read(),
                      f32k);
    expectRoundedOnce("bf16-products value grad in bf16 " + name, rv.read(),
                      f32v);
    EXPECT_EQ(fq.read(), f32q) << name;
    EXPECT_EQ(fk.read(), f32k) << name;
    EXPECT_EQ(fv.read(), f32v) << name;
    auto bits = [](const std::vector<Bf16> &x) {
      std::vector<uint16_t> b;
      for (Bf16 v : x)
        b.push_back(v.bits);
      return b;
    };
    EXPECT_EQ(bits(sq.read()), bits(rq.read())) << name;
    EXPECT_EQ(bits(sk.read()), bits(rk.read())) << name;
    EXPECT_EQ(bits(sv.read()), bits(rv.read())) << name;
  }
}

// tg.attention sequence_major (tg-fold-head-transposes): q, k, v, the output
// and the gradients as [B, S, H, D], the lse as [B, Sq, H]; the GEMMs read
// each head through pointers (AttentionHeads.cu). Against the CPU's
// head-major results transposed, with the head-major tests' checks: f32,
// bf16 widened, and bf16 products with f32 and bf16 results. A head read
// one row off, or an lse written head-major, fails every case.
TEST_F(CudaKernels, SequenceMajorAttention) {
  using runtime::Bf16;
  for (const AttentionCase &c : trainingCases()) {
    AttentionInputs in(c);
    const std::string name(c.name);
    cuda::AttentionShape seq = in.shape;
    seq.sequenceMajor = true;
    auto toSeq = [&](const auto &x, int64_t positions, int64_t width) {
      return swapMiddle(x, c.batch, c.heads, positions, width);
    };
    auto toHeads = [&](const auto &x, int64_t positions, int64_t width) {
      return swapMiddle(x, c.batch, positions, c.heads, width);
    };
    DeviceArray<float> grad(toSeq(in.grad, c.queries, c.valueDim));
    const size_t outputs = in.grad.size(), rows = in.rows();

    // f32 operands.
    AttentionForward want = cpuAttention(in);
    std::vector<float> dq(in.q.size()), dk(in.k.size()), dv(in.v.size());
    cpu::attentionGrad(in.grad.data(), in.q.data(), in.k.data(), in.v.data(),
                       want.output.data(), want.lse.data(), dq.data(),
                       dk.data(), dv.data(), in.shape, in.cpuConfig);
    DeviceArray<float> q(toSeq(in.q, c.queries, c.keyDim)),
        k(toSeq(in.k, c.keys, c.keyDim)), v(toSeq(in.v, c.keys, c.valueDim)),
        out(outputs, 7.0f), lse(rows, 7.0f), gq(in.q.size(), 7.0f),
        gk(in.k.size(), 7.0f), gv(in.v.size(), 7.0f);
    cuda::attention(q.get(), k.get(), v.get(), out.get(), lse.get(), seq,
                    in.cudaConfig);
    expectClose("sequence-major output " + name,
                toHeads(out.read(), c.queries, c.valueDim), want.output,
                kAttentionTolerance);
    expectClose("sequence-major lse " + name, toHeads(lse.read(), c.queries, 1),
                want.lse, kAttentionTolerance);
    cuda::attentionGrad(grad.get(), q.get(), k.get(), v.get(), out.get(),
                        lse.get(), gq.get(), gk.get(), gv.get(), seq,
                        in.cudaConfig);
    expectClose("sequence-major query grad " + name,
                toHeads(gq.read(), c.queries, c.keyDim), dq,
                kAttentionGradTolerance);
    expectClose("sequence-major key grad " + name,
                toHeads(gk.read(), c.keys, c.keyDim), dk,
                kAttentionGradTolerance);
    expectClose("sequence-major value grad " + name,
                toHeads(gv.read(), c.keys, c.valueDim), dv,
                kAttentionGradTolerance);

    // bf16 operands: widened (f32 arithmetic), then with bf16 products.
    std::vector<Bf16> q16 = roundedToBf16(in.q), k16 = roundedToBf16(in.k),
                      v16 = roundedToBf16(in.v);
    DeviceArray<Bf16> sq(toSeq(q16, c.queries, c.keyDim)),
        sk(toSeq(k16, c.keys, c.keyDim)), sv(toSeq(v16, c.keys, c.valueDim));
    Bf16AttentionResults widened =
        cpuBf16Attention(in, q16, k16, v16, in.cpuConfig);
    cuda::attention(sq.get(), sk.get(), sv.get(), out.get(), lse.get(), seq,
                    in.cudaConfig);
    expectClose("sequence-major bf16 output " + name,
                toHeads(out.read(), c.queries, c.valueDim),
                widened.forward.output, kAttentionTolerance);
    cuda::attentionGrad(grad.get(), sq.get(), sk.get(), sv.get(), out.get(),
                        lse.get(), gq.get(), gk.get(), gv.get(), seq,
                        in.cudaConfig);
    expectClose("sequence-major bf16 key grad " + name,
                toHeads(gk.read(), c.keys, c.keyDim), widened.dk,
                kAttentionGradTolerance);

    const cpu::AttentionConfig roundedConfig =
        Bf16ProductsExpectation::withBf16Products(in.cpuConfig);
    Bf16AttentionResults products =
        cpuBf16Attention(in, q16, k16, v16, roundedConfig);
    cuda::AttentionConfig config = in.cudaConfig;
    config.bf16Products = true;
    cuda::attention(sq.get(), sk.get(), sv.get(), out.get(), lse.get(), seq,
                    config);
    std::vector<float> f32Out = out.read();
    expectBf16Products("sequence-major bf16-products output " + name,
                       toHeads(f32Out, c.queries, c.valueDim),
                       products.forward.output, widened.forward.output);
    expectClose("sequence-major bf16-products lse " + name,
                toHeads(lse.read(), c.queries, 1), products.forward.lse,
                kAttentionTolerance);
    cuda::attentionGrad(grad.get(), sq.get(), sk.get(), sv.get(), out.get(),
                        lse.get(), gq.get(), gk.get(), gv.get(), seq, config);
    std::vector<float> f32q = gq.read(), f32k = gk.read(), f32v = gv.read();
    expectBf16Products("sequence-major bf16-products query grad " + name,
                       toHeads(f32q, c.queries, c.keyDim), products.dq,
                       widened.dq);
    expectBf16Products("sequence-major bf16-products key grad " + name,
                       toHeads(f32k, c.keys, c.keyDim), products.dk,
                       widened.dk);
    expectBf16Products("sequence-major bf16-products value grad " + name,
                       toHeads(f32v, c.keys, c.valueDim), products.dv,
                       widened.dv);

    // tg-fold-bf16-roundings' bf16 output and gradients: the f32 results
    // above rounded once, in the same layout.
    expectBf16ResultsRoundedOnce("sequence-major " + name, sq.get(), sk.get(),
                                 sv.get(), grad.get(), lse.get(), seq, config,
                                 f32Out, f32q, f32k, f32v);
  }
}

} // namespace
} // namespace tgc::test
