//===- NormTest.cpp - CPU softmax and the norms against the reference ----===//
//
// runtime/kernels/cpu/Norm.cpp: softmax, LayerNorm, RMSNorm and the fused
// residual + dropout + norm of either kind, forward and backward, with their
// saved statistics and the pre-LN sum. Helpers and the error measure:
// KernelTestSupport.h.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cpu/KernelTestSupport.h"

namespace tgc::test {
namespace {

// 200 rows of 97 (parallel, odd width); float sums over a row of 97.
constexpr int64_t kNormRows = 200, kNormWidth = 97;
constexpr float kEpsilon = 1e-5f;

TEST(CpuKernels, Softmax) {
  std::vector<float> input = uniform(kNormRows * kNormWidth, 14, -5.0f, 5.0f);
  HostTensor expected =
      reference::softmax(host(input, {kNormRows, kNormWidth}), 1);
  std::vector<float> out(input.size(), 0.0f);
  cpu::softmax(input.data(), out.data(), kNormRows, kNormWidth);
  expectClose("softmax", out, expected, 1e-5);
}

TEST(CpuKernels, SoftmaxGrad) {
  HostTensor y =
      reference::softmax(host(uniform(kNormRows * kNormWidth, 15, -3.0f, 3.0f),
                              {kNormRows, kNormWidth}),
                         1);
  std::vector<float> output = toFloats(y);
  std::vector<float> grad = uniform(output.size(), 16);
  // The reference reads the same float-rounded y.
  HostTensor expected =
      reference::softmaxGrad(host(output, {kNormRows, kNormWidth}),
                             host(grad, {kNormRows, kNormWidth}), 1);
  std::vector<float> out(output.size(), 0.0f);
  cpu::softmaxGrad(output.data(), grad.data(), out.data(), kNormRows,
                   kNormWidth);
  expectClose("softmaxGrad", out, expected, 1e-5);
}

/// The reference's mean and rstd of `input` rows (beta null: RMSNorm's,
/// which has no mean): residualNorm with a zero sublayer normalizes the
/// residual itself.
reference::ResidualNormResult referenceStatistics(const HostTensor &input,
                                                  const HostTensor &gamma,
                                                  const HostTensor *beta) {
  return reference::residualNorm(input, HostTensor(input.shape), gamma, beta,
                                 reference::Dropout{}, kEpsilon);
}

TEST(CpuKernels, LayerNorm) {
  std::vector<float> input = uniform(kNormRows * kNormWidth, 17, -2.0f, 3.0f);
  std::vector<float> gamma = uniform(kNormWidth, 18, 0.5f, 1.5f);
  std::vector<float> beta = uniform(kNormWidth, 19);
  HostTensor x = host(input, {kNormRows, kNormWidth});
  HostTensor g = host(gamma, {kNormWidth}), b = host(beta, {kNormWidth});
  HostTensor expected = reference::layerNorm(x, g, b, kEpsilon);
  reference::ResidualNormResult stats = referenceStatistics(x, g, &b);
  std::vector<float> out(input.size(), 0.0f), mean(kNormRows, 0.0f),
      rstd(kNormRows, 0.0f);
  cpu::layerNorm(input.data(), gamma.data(), beta.data(), out.data(),
                 mean.data(), rstd.data(), kNormRows, kNormWidth, kEpsilon);
  expectClose("layerNorm", out, expected, 1e-5);
  expectClose("layerNorm mean", mean, stats.mean, 1e-5);
  expectClose("layerNorm rstd", rstd, stats.rstd, 1e-5);
  // Without statistics.
  std::vector<float> again(input.size(), 0.0f);
  cpu::layerNorm(input.data(), gamma.data(), beta.data(), again.data(), nullptr,
                 nullptr, kNormRows, kNormWidth, kEpsilon);
  EXPECT_EQ(again, out);
}

TEST(CpuKernels, RmsNorm) {
  std::vector<float> input = uniform(kNormRows * kNormWidth, 31, -2.0f, 3.0f);
  std::vector<float> gamma = uniform(kNormWidth, 32, 0.5f, 1.5f);
  HostTensor x = host(input, {kNormRows, kNormWidth});
  HostTensor g = host(gamma, {kNormWidth});
  HostTensor expected = reference::rmsNorm(x, g, kEpsilon);
  reference::ResidualNormResult stats = referenceStatistics(x, g, nullptr);
  std::vector<float> out(input.size(), 0.0f), rstd(kNormRows, 0.0f);
  cpu::rmsNorm(input.data(), gamma.data(), out.data(), rstd.data(), kNormRows,
               kNormWidth, kEpsilon);
  expectClose("rmsNorm", out, expected, 1e-5);
  expectClose("rmsNorm rstd", rstd, stats.rstd, 1e-5);
  std::vector<float> again(input.size(), 0.0f);
  cpu::rmsNorm(input.data(), gamma.data(), again.data(), nullptr, kNormRows,
               kNormWidth, kEpsilon);
  EXPECT_EQ(again, out);
}

// dgamma and dbeta sum 200 rows (in double); dx cancels three terms of a
// row, so errors relative to the row's scale reach a few float roundings.
TEST(CpuKernels, LayerNormGrad) {
  std::vector<float> input = uniform(kNormRows * kNormWidth, 20, -2.0f, 3.0f);
  std::vector<float> gamma = uniform(kNormWidth, 21, 0.5f, 1.5f);
  std::vector<float> grad = uniform(input.size(), 22);
  reference::NormGrads expected = reference::layerNormGrad(
      host(grad, {kNormRows, kNormWidth}), host(input, {kNormRows, kNormWidth}),
      host(gamma, {kNormWidth}), kEpsilon);
  // Called alone, and from inside an active parallel region, where its own
  // (nested) region gets a team of one although omp_get_max_threads() says
  // more: the gamma and beta sums must count only the team's partial sums.
  for (bool nested : {false, true}) {
    std::vector<float> dx(input.size(), 0.0f), dgamma(kNormWidth, 0.0f),
        dbeta(kNormWidth, 0.0f);
    auto run = [&] {
      cpu::layerNormGrad(grad.data(), input.data(), gamma.data(), dx.data(),
                         dgamma.data(), dbeta.data(), kNormRows, kNormWidth,
                         kEpsilon);
    };
    if (nested) {
#pragma omp parallel num_threads(2)
#pragma omp master
      run();
    } else {
      run();
    }
    std::string what = nested ? "layerNormGrad nested " : "layerNormGrad ";
    expectClose(what + "input", dx, expected.input, 2e-5);
    expectClose(what + "gamma", dgamma, expected.gamma, 2e-5);
    expectClose(what + "beta", dbeta, expected.beta, 2e-5);
  }
}

// dx cancels two terms of a row (no mean of g), dgamma sums 200 rows.
TEST(CpuKernels, RmsNormGrad) {
  std::vector<float> input = uniform(kNormRows * kNormWidth, 33, -2.0f, 3.0f);
  std::vector<float> gamma = uniform(kNormWidth, 34, 0.5f, 1.5f);
  std::vector<float> grad = uniform(input.size(), 35);
  reference::NormGrads expected = reference::rmsNormGrad(
      host(grad, {kNormRows, kNormWidth}), host(input, {kNormRows, kNormWidth}),
      host(gamma, {kNormWidth}), kEpsilon);
  std::vector<float> dx(input.size(), 0.0f), dgamma(kNormWidth, 0.0f);
  cpu::rmsNormGrad(grad.data(), input.data(), gamma.data(), dx.data(),
                   dgamma.data(), kNormRows, kNormWidth, kEpsilon);
  expectClose("rmsNormGrad input", dx, expected.input, 2e-5);
  expectClose("rmsNormGrad gamma", dgamma, expected.gamma, 2e-5);
}

/// The fused kernels of one kind: LayerNorm with beta, RMSNorm without
/// (null beta, mean and dbeta).
struct ResidualKernels {
  const char *name;
  bool layer;

  void forward(const std::vector<float> &residual,
               const std::vector<float> &sublayer,
               const std::vector<float> &gamma, const std::vector<float> &beta,
               float *out, float *mean, float *rstd, float rate,
               runtime::Bf16 *rounded = nullptr, float *sum = nullptr) const {
    if (layer)
      cpu::residualLayerNorm(residual.data(), sublayer.data(), gamma.data(),
                             beta.data(), out, mean, rstd, kNormRows,
                             kNormWidth, testDropout(rate), kEpsilon, rounded,
                             sum);
    else
      cpu::residualRmsNorm(residual.data(), sublayer.data(), gamma.data(), out,
                           rstd, kNormRows, kNormWidth, testDropout(rate),
                           kEpsilon, rounded, sum);
  }

  void backward(const std::vector<float> &grad, const float *out,
                const std::vector<float> &gamma, const std::vector<float> &beta,
                const float *rstd, float *dres, float *dsub, float *dgamma,
                float *dbeta, float rate, runtime::Bf16 *rounded,
                const float *sumGrad) const {
    if (layer)
      cpu::residualLayerNormGrad(grad.data(), out, gamma.data(), beta.data(),
                                 rstd, dres, dsub, dgamma, dbeta, kNormRows,
                                 kNormWidth, testDropout(rate), rounded,
                                 sumGrad);
    else
      cpu::residualRmsNormGrad(grad.data(), out, gamma.data(), rstd, dres,
                               dsub, dgamma, kNormRows, kNormWidth,
                               testDropout(rate), rounded, sumGrad);
  }
};

class CpuResidualNorm : public ::testing::TestWithParam<ResidualKernels> {};

TEST_P(CpuResidualNorm, Forward) {
  const ResidualKernels &kernels = GetParam();
  const auto [residual, sublayer, gamma] =
      ResidualNormInputs(kNormRows, kNormWidth, 23);
  std::vector<float> beta = uniform(kNormWidth, 26);
  HostTensor b = host(beta, {kNormWidth});
  std::vector<float> outputs[2];
  for (float rate : {0.0f, 0.1f}) {
    reference::ResidualNormResult expected = reference::residualNorm(
        host(residual, {kNormRows, kNormWidth}),
        host(sublayer, {kNormRows, kNormWidth}), host(gamma, {kNormWidth}),
        kernels.layer ? &b : nullptr, testDropout(rate), kEpsilon);
    std::vector<float> out(residual.size(), 0.0f), mean(kNormRows, 0.0f),
        rstd(kNormRows, 0.0f);
    float *meanOut = kernels.layer ? mean.data() : nullptr;
    kernels.forward(residual, sublayer, gamma, beta, out.data(), meanOut,
                    rstd.data(), rate);
    std::string tag = std::string(kernels.name) + " rate " +
                      std::to_string(rate);
    expectClose(tag, out, expected.result, 1e-5);
    if (kernels.layer)
      expectClose(tag + " mean", mean, expected.mean, 1e-5);
    expectClose(tag + " rstd", rstd, expected.rstd, 1e-5);
    outputs[rate > 0.0f] = out;
    // With a bf16 copy (tg-fold-bf16-roundings) and the sum (pre-LN): the
    // same f32 result, the copy is that result rounded, bit for bit, and
    // the sum residual + dropout(sublayer).
    std::vector<float> again(residual.size(), 0.0f), sum(residual.size());
    std::vector<runtime::Bf16> rounded(residual.size());
    kernels.forward(residual, sublayer, gamma, beta, again.data(), meanOut,
                    rstd.data(), rate, rounded.data(), sum.data());
    EXPECT_EQ(again, out) << tag;
    expectRoundedCopy(tag, rounded, out);
    expectClose(tag + " sum", sum, expected.sum, 1e-6);
  }
  EXPECT_NE(outputs[0], outputs[1]) << "dropout 0.1 changed nothing";
}

// The backward reads the forward's output, not its inputs; the oracle is
// the reference norm gradient of h = residual + dropout(sublayer) computed
// from the inputs, plus the sum's gradient where there is one. Gammas near
// 1 and small ones (0.05-0.15, where the division by gamma magnifies the
// output's rounding: measured 1e-6).
TEST_P(CpuResidualNorm, Backward) {
  const ResidualKernels &kernels = GetParam();
  for (float gammaScale : {1.0f, 0.1f}) {
    auto [residual, sublayer, gamma] =
        ResidualNormInputs(kNormRows, kNormWidth, 27);
    for (float &g : gamma)
      g *= gammaScale;
    std::vector<float> beta = uniform(kNormWidth, 29);
    std::vector<float> grad = uniform(residual.size(), 30);
    std::vector<float> sumGrad = uniform(residual.size(), 36);
    HostTensor res = host(residual, {kNormRows, kNormWidth});
    HostTensor sub = host(sublayer, {kNormRows, kNormWidth});
    HostTensor g = host(gamma, {kNormWidth});
    HostTensor dy = host(grad, {kNormRows, kNormWidth});
    for (float rate : {0.0f, 0.1f}) {
      HostTensor h = reference::dropout(sub, testDropout(rate));
      for (int64_t i = 0; i < h.numElements(); ++i)
        h[i] += res[i];
      reference::NormGrads expected =
          kernels.layer ? reference::layerNormGrad(dy, h, g, kEpsilon)
                        : reference::rmsNormGrad(dy, h, g, kEpsilon);
      std::vector<float> out(residual.size()), mean(kNormRows),
          rstd(kNormRows);
      kernels.forward(residual, sublayer, gamma, beta, out.data(),
                      kernels.layer ? mean.data() : nullptr, rstd.data(), rate);
      for (bool withSum : {false, true}) {
        HostTensor dh = expected.input;
        if (withSum)
          for (int64_t i = 0; i < dh.numElements(); ++i)
            dh[i] += sumGrad[i];
        HostTensor expectedSublayer = reference::dropout(dh, testDropout(rate));
        std::vector<float> dres(residual.size(), 0.0f),
            dsub(residual.size(), 0.0f), dgamma(kNormWidth, 0.0f),
            dbeta(kNormWidth, 0.0f);
        float *dbetaOut = kernels.layer ? dbeta.data() : nullptr;
        const float *sumGradIn = withSum ? sumGrad.data() : nullptr;
        kernels.backward(grad, out.data(), gamma, beta, rstd.data(),
                         dres.data(), dsub.data(), dgamma.data(), dbetaOut,
                         rate, nullptr, sumGradIn);
        std::string tag = std::string(kernels.name) + " gamma x" +
                          std::to_string(gammaScale) + " rate " +
                          std::to_string(rate) + (withSum ? " sum" : "");
        const float tolerance = 2e-5f;
        expectClose(tag + " residual", dres, dh, tolerance);
        expectClose(tag + " sublayer", dsub, expectedSublayer, tolerance);
        expectClose(tag + " gamma", dgamma, expected.gamma, tolerance);
        if (kernels.layer)
          expectClose(tag + " beta", dbeta, expected.beta, tolerance);
        // With a bf16 copy of the sublayer gradient (tg-fold-bf16-roundings):
        // the same f32 gradients, and the copy is the f32 one rounded.
        std::vector<float> dres2(residual.size()), dsub2(residual.size()),
            dgamma2(kNormWidth), dbeta2(kNormWidth);
        std::vector<runtime::Bf16> rounded(residual.size());
        kernels.backward(grad, out.data(), gamma, beta, rstd.data(),
                         dres2.data(), dsub2.data(), dgamma2.data(),
                         kernels.layer ? dbeta2.data() : nullptr, rate,
                         rounded.data(), sumGradIn);
        EXPECT_EQ(dres2, dres) << tag;
        EXPECT_EQ(dsub2, dsub) << tag;
        expectRoundedCopy(tag + " sublayer", rounded, dsub);
        // And with the copy alone (a bf16 step reads nothing else): the
        // f32 sublayer gradient not written, the rest the same bits.
        std::vector<runtime::Bf16> roundedAlone(residual.size());
        kernels.backward(grad, out.data(), gamma, beta, rstd.data(),
                         dres2.data(), nullptr, dgamma2.data(),
                         kernels.layer ? dbeta2.data() : nullptr, rate,
                         roundedAlone.data(), sumGradIn);
        EXPECT_EQ(dres2, dres) << tag << " without the f32 sublayer gradient";
        EXPECT_EQ(dgamma2, dgamma) << tag;
        expectRoundedCopy(tag + " sublayer alone", roundedAlone, dsub);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, CpuResidualNorm,
    ::testing::Values(ResidualKernels{"residualLayerNorm", true},
                      ResidualKernels{"residualRmsNorm", false}),
    [](const ::testing::TestParamInfo<ResidualKernels> &info) {
      return std::string(info.param.layer ? "Layer" : "Rms");
    });

} // namespace
} // namespace tgc::test
