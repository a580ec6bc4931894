//===- NormTest.cpp - CUDA softmax and the norms against the CPU ----------===//
//
// runtime/kernels/cuda/Norm.cu: softmax, LayerNorm, RMSNorm and the fused
// residual + dropout + norm of either kind, forward and backward, on rows
// narrower and wider than a block's threads. LayerNorm and RMSNorm share the
// kernels (templates on the kind), so the pre-LN sum and its gradient are
// checked on RMSNorm's. Helpers and the error measure: KernelTestSupport.h.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cuda/KernelTestSupport.h"

namespace tgc::test {
namespace {

// 200 rows of 97 (odd width; fewer columns than a block's threads), 1001
// rows of 512 (a model's width; LayerNorm's rows a warp each, the last
// block's warps partly idle; the residual LayerNorm by quads, 4 a lane),
// 33 of 200 and 70 of 1024 (by quads, 2 a lane with the last lanes empty,
// and 8 a lane, the widest), 33 of 250 (not a multiple of 4: a warp per
// row, one column at a time), 3 rows of 1500 (more columns than a
// block's threads; LayerNorm's rows a block each) and 5000 of 512 (more
// rows than the residual norms' gradient has warps: each warp adds up
// the column sums of several).
struct RowShape {
  int64_t rows, width;
};
constexpr RowShape kRowShapes[] = {{200, 97},  {1001, 512}, {33, 200},
                                   {70, 1024}, {33, 250},   {3, 1500},
                                   {5000, 512}};
constexpr float kEpsilon = 1e-5f;

// " 200x97". Appended, not `" " + std::to_string(...)`: GCC 12 at -O3
// reports a false -Wrestrict on the inlined insert at the front.
std::string tagOf(const RowShape &r) {
  std::string tag = " ";
  tag += std::to_string(r.rows) + "x" + std::to_string(r.width);
  return tag;
}

TEST_F(CudaKernels, Softmax) {
  for (const RowShape &r : kRowShapes) {
    std::vector<float> input = uniform(r.rows * r.width, 17, -5.0f, 5.0f);
    std::vector<float> expected(input.size());
    cpu::softmax(input.data(), expected.data(), r.rows, r.width);
    DeviceArray<float> in(input), out(input.size());
    cuda::softmax(in.get(), out.get(), r.rows, r.width);
    expectClose("softmax" + tagOf(r), out.read(), expected, 1e-5);
  }
}

TEST_F(CudaKernels, SoftmaxGrad) {
  for (const RowShape &r : kRowShapes) {
    std::vector<float> y(r.rows * r.width);
    std::vector<float> logits = uniform(y.size(), 18, -3.0f, 3.0f);
    cpu::softmax(logits.data(), y.data(), r.rows, r.width);
    std::vector<float> grad = uniform(y.size(), 19);
    std::vector<float> expected(y.size());
    cpu::softmaxGrad(y.data(), grad.data(), expected.data(), r.rows, r.width);
    DeviceArray<float> dy(y), dg(grad), out(y.size());
    cuda::softmaxGrad(dy.get(), dg.get(), out.get(), r.rows, r.width);
    expectClose("softmaxGrad" + tagOf(r), out.read(), expected, 1e-5);
  }
}

TEST_F(CudaKernels, LayerNorm) {
  for (const RowShape &r : kRowShapes) {
    std::vector<float> input = uniform(r.rows * r.width, 20, -2.0f, 3.0f);
    std::vector<float> gamma = uniform(r.width, 21, 0.5f, 1.5f);
    std::vector<float> beta = uniform(r.width, 22);
    std::vector<float> expected(input.size()), mean(r.rows), rstd(r.rows);
    cpu::layerNorm(input.data(), gamma.data(), beta.data(), expected.data(),
                   mean.data(), rstd.data(), r.rows, r.width, kEpsilon);
    DeviceArray<float> in(input), dg(gamma), db(beta), out(input.size()),
        dmean(r.rows), drstd(r.rows);
    cuda::layerNorm(in.get(), dg.get(), db.get(), out.get(), dmean.get(),
                    drstd.get(), r.rows, r.width, kEpsilon);
    std::vector<float> result = out.read();
    expectClose("layerNorm" + tagOf(r), result, expected, 1e-5);
    expectClose("layerNorm mean" + tagOf(r), dmean.read(), mean, 1e-5);
    expectClose("layerNorm rstd" + tagOf(r), drstd.read(), rstd, 1e-5);
    // Without statistics.
    DeviceArray<float> again(input.size());
    cuda::layerNorm(in.get(), dg.get(), db.get(), again.get(), nullptr, nullptr,
                    r.rows, r.width, kEpsilon);
    EXPECT_EQ(again.read(), result);
  }
}

// Float row sums in different orders feed a three-term cancellation in dx;
// the column sums are double on both sides.
constexpr double kNormGradTolerance = 1e-4;

TEST_F(CudaKernels, LayerNormGrad) {
  for (const RowShape &r : kRowShapes) {
    std::vector<float> input = uniform(r.rows * r.width, 23, -2.0f, 3.0f);
    std::vector<float> gamma = uniform(r.width, 24, 0.5f, 1.5f);
    std::vector<float> grad = uniform(input.size(), 25);
    std::vector<float> dx(input.size()), dgamma(r.width), dbeta(r.width);
    cpu::layerNormGrad(grad.data(), input.data(), gamma.data(), dx.data(),
                       dgamma.data(), dbeta.data(), r.rows, r.width, kEpsilon);
    DeviceArray<float> in(input), dg(gamma), dy(grad), ddx(input.size(), 7.0f),
        ddgamma(r.width, 7.0f), ddbeta(r.width, 7.0f);
    cuda::layerNormGrad(dy.get(), in.get(), dg.get(), ddx.get(), ddgamma.get(),
                        ddbeta.get(), r.rows, r.width, kEpsilon);
    expectClose("layerNormGrad input" + tagOf(r), ddx.read(), dx,
                kNormGradTolerance);
    expectClose("layerNormGrad gamma" + tagOf(r), ddgamma.read(), dgamma,
                kNormGradTolerance);
    expectClose("layerNormGrad beta" + tagOf(r), ddbeta.read(), dbeta,
                kNormGradTolerance);
  }
}

TEST_F(CudaKernels, ResidualLayerNorm) {
  for (const RowShape &r : kRowShapes)
    for (float rate : {0.0f, 0.1f}) {
      const auto [residual, sublayer, gamma] =
          ResidualNormInputs(r.rows, r.width, 26);
      std::vector<float> beta = uniform(r.width, 29);
      std::vector<float> expected(residual.size()), mean(r.rows), rstd(r.rows);
      cpu::residualLayerNorm(residual.data(), sublayer.data(), gamma.data(),
                             beta.data(), expected.data(), mean.data(),
                             rstd.data(), r.rows, r.width, testDropout(rate),
                             kEpsilon);
      DeviceArray<float> dr(residual), ds(sublayer), dg(gamma), db(beta),
          out(residual.size()), dmean(r.rows), drstd(r.rows);
      cuda::residualLayerNorm(dr.get(), ds.get(), dg.get(), db.get(), out.get(),
                              dmean.get(), drstd.get(), r.rows, r.width,
                              testDropout(rate), kEpsilon);
      std::string tag = tagOf(r) + " rate " + std::to_string(rate);
      expectClose("residualLayerNorm" + tag, out.read(), expected, 1e-5);
      expectClose("residualLayerNorm mean" + tag, dmean.read(), mean, 1e-5);
      expectClose("residualLayerNorm rstd" + tag, drstd.read(), rstd, 1e-5);
      // With a bf16 copy (tg-fold-bf16-roundings): the copy is the GPU's
      // own f32 result rounded, bit for bit.
      DeviceArray<runtime::Bf16> rounded(residual.size());
      cuda::residualLayerNorm(dr.get(), ds.get(), dg.get(), db.get(), out.get(),
                              dmean.get(), drstd.get(), r.rows, r.width,
                              testDropout(rate), kEpsilon, rounded.get());
      expectRoundedCopy("residualLayerNorm" + tag, rounded.read(), out.read());
    }
}

TEST_F(CudaKernels, ResidualLayerNormGrad) {
  for (const RowShape &r : kRowShapes)
    for (float rate : {0.0f, 0.1f}) {
      const auto [residual, sublayer, gamma] =
          ResidualNormInputs(r.rows, r.width, 30);
      std::vector<float> grad = uniform(residual.size(), 33);
      // Both sides read the CPU forward's output and statistics.
      std::vector<float> forward(residual.size()), mean(r.rows), rstd(r.rows);
      std::vector<float> beta = uniform(r.width, 34);
      cpu::residualLayerNorm(residual.data(), sublayer.data(), gamma.data(),
                             beta.data(), forward.data(), mean.data(),
                             rstd.data(), r.rows, r.width, testDropout(rate),
                             kEpsilon);
      std::vector<float> dres(residual.size()), dsub(residual.size()),
          dgamma(r.width), dbeta(r.width);
      cpu::residualLayerNormGrad(grad.data(), forward.data(), gamma.data(),
                                 beta.data(), rstd.data(), dres.data(),
                                 dsub.data(), dgamma.data(), dbeta.data(),
                                 r.rows, r.width, testDropout(rate));
      DeviceArray<float> dy(grad), dout(forward), dg(gamma), db(beta),
          dsd(rstd), ddres(residual.size(), 7.0f),
          ddsub(residual.size(), 7.0f), ddgamma(r.width, 7.0f),
          ddbeta(r.width, 7.0f);
      cuda::residualLayerNormGrad(dy.get(), dout.get(), dg.get(), db.get(),
                                  dsd.get(), ddres.get(), ddsub.get(),
                                  ddgamma.get(), ddbeta.get(), r.rows, r.width,
                                  testDropout(rate));
      std::string tag = tagOf(r) + " rate " + std::to_string(rate);
      std::vector<float> sublayerGrad = ddsub.read();
      expectClose("residualLayerNormGrad residual" + tag, ddres.read(), dres,
                  kNormGradTolerance);
      expectClose("residualLayerNormGrad sublayer" + tag, sublayerGrad, dsub,
                  kNormGradTolerance);
      expectClose("residualLayerNormGrad gamma" + tag, ddgamma.read(), dgamma,
                  kNormGradTolerance);
      expectClose("residualLayerNormGrad beta" + tag, ddbeta.read(), dbeta,
                  kNormGradTolerance);
      // The sublayer gradient is the mask times dh: its zeros are the mask.
      if (rate > 0.0f)
        expectSameZeros("residualLayerNormGrad mask" + tag, sublayerGrad, dsub);
      // With a bf16 copy of the sublayer gradient (tg-fold-bf16-roundings):
      // the copy is the GPU's own f32 gradient rounded, bit for bit.
      DeviceArray<runtime::Bf16> rounded(residual.size());
      cuda::residualLayerNormGrad(dy.get(), dout.get(), dg.get(), db.get(),
                                  dsd.get(), ddres.get(), ddsub.get(),
                                  ddgamma.get(), ddbeta.get(), r.rows, r.width,
                                  testDropout(rate), rounded.get());
      expectRoundedCopy("residualLayerNormGrad sublayer" + tag, rounded.read(),
                        ddsub.read());
    }
}

TEST_F(CudaKernels, RmsNorm) {
  for (const RowShape &r : kRowShapes) {
    std::vector<float> input = uniform(r.rows * r.width, 40, -2.0f, 3.0f);
    std::vector<float> gamma = uniform(r.width, 41, 0.5f, 1.5f);
    std::vector<float> expected(input.size()), rstd(r.rows);
    cpu::rmsNorm(input.data(), gamma.data(), expected.data(), rstd.data(),
                 r.rows, r.width, kEpsilon);
    DeviceArray<float> in(input), dg(gamma), out(input.size()), drstd(r.rows);
    cuda::rmsNorm(in.get(), dg.get(), out.get(), drstd.get(), r.rows, r.width,
                  kEpsilon);
    expectClose("rmsNorm" + tagOf(r), out.read(), expected, 1e-5);
    expectClose("rmsNorm rstd" + tagOf(r), drstd.read(), rstd, 1e-5);
  }
}

TEST_F(CudaKernels, RmsNormGrad) {
  for (const RowShape &r : kRowShapes) {
    std::vector<float> input = uniform(r.rows * r.width, 42, -2.0f, 3.0f);
    std::vector<float> gamma = uniform(r.width, 43, 0.5f, 1.5f);
    std::vector<float> grad = uniform(input.size(), 44);
    std::vector<float> dx(input.size()), dgamma(r.width);
    cpu::rmsNormGrad(grad.data(), input.data(), gamma.data(), dx.data(),
                     dgamma.data(), r.rows, r.width, kEpsilon);
    DeviceArray<float> in(input), dg(gamma), dy(grad), ddx(input.size(), 7.0f),
        ddgamma(r.width, 7.0f);
    cuda::rmsNormGrad(dy.get(), in.get(), dg.get(), ddx.get(), ddgamma.get(),
                      r.rows, r.width, kEpsilon);
    expectClose("rmsNormGrad input" + tagOf(r), ddx.read(), dx,
                kNormGradTolerance);
    expectClose("rmsNormGrad gamma" + tagOf(r), ddgamma.read(), dgamma,
                kNormGradTolerance);
  }
}

// With the sum a pre-LN block keeps: both sides write it beside the result.
TEST_F(CudaKernels, ResidualRmsNorm) {
  for (const RowShape &r : kRowShapes)
    for (float rate : {0.0f, 0.1f}) {
      const auto [residual, sublayer, gamma] =
          ResidualNormInputs(r.rows, r.width, 45);
      std::vector<float> expected(residual.size()), rstd(r.rows),
          sum(residual.size());
      cpu::residualRmsNorm(residual.data(), sublayer.data(), gamma.data(),
                           expected.data(), rstd.data(), r.rows, r.width,
                           testDropout(rate), kEpsilon, nullptr, sum.data());
      DeviceArray<float> dr(residual), ds(sublayer), dg(gamma),
          out(residual.size()), drstd(r.rows), dsum(residual.size());
      DeviceArray<runtime::Bf16> rounded(residual.size());
      cuda::residualRmsNorm(dr.get(), ds.get(), dg.get(), out.get(),
                            drstd.get(), r.rows, r.width, testDropout(rate),
                            kEpsilon, rounded.get(), dsum.get());
      std::string tag = tagOf(r) + " rate " + std::to_string(rate);
      expectClose("residualRmsNorm" + tag, out.read(), expected, 1e-5);
      expectClose("residualRmsNorm rstd" + tag, drstd.read(), rstd, 1e-5);
      expectClose("residualRmsNorm sum" + tag, dsum.read(), sum, 1e-6);
      expectRoundedCopy("residualRmsNorm" + tag, rounded.read(), out.read());
    }
}

// With and without the gradient of the kept sum.
TEST_F(CudaKernels, ResidualRmsNormGrad) {
  for (const RowShape &r : kRowShapes)
    for (float rate : {0.0f, 0.1f})
      for (bool withSum : {false, true}) {
        const auto [residual, sublayer, gamma] =
            ResidualNormInputs(r.rows, r.width, 46);
        std::vector<float> grad = uniform(residual.size(), 49);
        std::vector<float> sumGrad = uniform(residual.size(), 50);
        const float *cpuSumGrad = withSum ? sumGrad.data() : nullptr;
        // Both sides read the CPU forward's output and statistics.
        std::vector<float> forward(residual.size()), rstd(r.rows);
        cpu::residualRmsNorm(residual.data(), sublayer.data(), gamma.data(),
                             forward.data(), rstd.data(), r.rows, r.width,
                             testDropout(rate), kEpsilon);
        std::vector<float> dres(residual.size()), dsub(residual.size()),
            dgamma(r.width);
        cpu::residualRmsNormGrad(grad.data(), forward.data(), gamma.data(),
                                 rstd.data(), dres.data(), dsub.data(),
                                 dgamma.data(), r.rows, r.width,
                                 testDropout(rate), nullptr, cpuSumGrad);
        DeviceArray<float> dy(grad), dout(forward), dg(gamma), dsd(rstd),
            dsg(sumGrad), ddres(residual.size(), 7.0f),
            ddsub(residual.size(), 7.0f), ddgamma(r.width, 7.0f);
        cuda::residualRmsNormGrad(dy.get(), dout.get(), dg.get(), dsd.get(),
                                  ddres.get(), ddsub.get(), ddgamma.get(),
                                  r.rows, r.width, testDropout(rate), nullptr,
                                  withSum ? dsg.get() : nullptr);
        std::string tag = tagOf(r) + " rate " + std::to_string(rate) +
                          (withSum ? " sum" : "");
        expectClose("residualRmsNormGrad residual" + tag, ddres.read(), dres,
                    kNormGradTolerance);
        expectClose("residualRmsNormGrad sublayer" + tag, ddsub.read(), dsub,
                    kNormGradTolerance);
        expectClose("residualRmsNormGrad gamma" + tag, ddgamma.read(), dgamma,
                    kNormGradTolerance);
      }
}

} // namespace
} // namespace tgc::test
