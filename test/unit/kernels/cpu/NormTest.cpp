//===- NormTest.cpp - CPU softmax and layer norm against the reference ----===//
//
// runtime/kernels/cpu/Norm.cpp: softmax, layer norm and the fused
// residual + dropout + layer norm, forward and backward, with their saved
// statistics. Helpers and the error measure: KernelTestSupport.h.
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

/// The reference's mean and rstd of `input` rows: residualLayerNorm with a
/// zero sublayer normalizes the residual itself.
reference::ResidualLayerNormResult referenceStatistics(const HostTensor &input,
                                                       const HostTensor &gamma,
                                                       const HostTensor &beta) {
  return reference::residualLayerNorm(input, HostTensor(input.shape), gamma,
                                      beta, reference::Dropout{}, kEpsilon);
}

TEST(CpuKernels, LayerNorm) {
  std::vector<float> input = uniform(kNormRows * kNormWidth, 17, -2.0f, 3.0f);
  std::vector<float> gamma = uniform(kNormWidth, 18, 0.5f, 1.5f);
  std::vector<float> beta = uniform(kNormWidth, 19);
  HostTensor x = host(input, {kNormRows, kNormWidth});
  HostTensor g = host(gamma, {kNormWidth}), b = host(beta, {kNormWidth});
  HostTensor expected = reference::layerNorm(x, g, b, kEpsilon);
  reference::ResidualLayerNormResult stats = referenceStatistics(x, g, b);
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

// dgamma and dbeta sum 200 rows (in double); dx cancels three terms of a
// row, so errors relative to the row's scale reach a few float roundings.
TEST(CpuKernels, LayerNormGrad) {
  std::vector<float> input = uniform(kNormRows * kNormWidth, 20, -2.0f, 3.0f);
  std::vector<float> gamma = uniform(kNormWidth, 21, 0.5f, 1.5f);
  std::vector<float> grad = uniform(input.size(), 22);
  reference::LayerNormGrads expected = reference::layerNormGrad(
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
TEST(CpuKernels, ResidualLayerNorm) {
  const auto [residual, sublayer, gamma] =
      ResidualNormInputs(kNormRows, kNormWidth, 23);
  std::vector<float> beta = uniform(kNormWidth, 26);
  std::vector<float> outputs[2];
  for (float rate : {0.0f, 0.1f}) {
    reference::ResidualLayerNormResult expected = reference::residualLayerNorm(
        host(residual, {kNormRows, kNormWidth}),
        host(sublayer, {kNormRows, kNormWidth}), host(gamma, {kNormWidth}),
        host(beta, {kNormWidth}), testDropout(rate), kEpsilon);
    std::vector<float> out(residual.size(), 0.0f), mean(kNormRows, 0.0f),
        rstd(kNormRows, 0.0f);
    cpu::residualLayerNorm(residual.data(), sublayer.data(), gamma.data(),
                           beta.data(), out.data(), mean.data(), rstd.data(),
                           kNormRows, kNormWidth, testDropout(rate), kEpsilon);
    std::string tag = " rate " + std::to_string(rate);
    expectClose("residualLayerNorm" + tag, out, expected.result, 1e-5);
    expectClose("residualLayerNorm mean" + tag, mean, expected.mean, 1e-5);
    expectClose("residualLayerNorm rstd" + tag, rstd, expected.rstd, 1e-5);
    outputs[rate > 0.0f] = out;
    // With a bf16 copy (tg-fold-bf16-roundings): the same f32 result, and
    // the copy is that result rounded, bit for bit.
    std::vector<float> again(residual.size(), 0.0f);
    std::vector<runtime::Bf16> rounded(residual.size());
    cpu::residualLayerNorm(residual.data(), sublayer.data(), gamma.data(),
                           beta.data(), again.data(), mean.data(), rstd.data(),
                           kNormRows, kNormWidth, testDropout(rate), kEpsilon,
                           rounded.data());
    EXPECT_EQ(again, out) << tag;
    expectRoundedCopy("residualLayerNorm" + tag, rounded, out);
  }
  EXPECT_NE(outputs[0], outputs[1]) << "dropout 0.1 changed nothing";
}

// The backward reads the forward's output, not its inputs; the oracle is
// the reference LayerNorm gradient of h = residual + dropout(sublayer)
// computed from the inputs. Gammas near 1 and small ones (0.05-0.15, where
// the division by gamma magnifies the output's rounding: measured 1e-6).
TEST(CpuKernels, ResidualLayerNormGrad) {
  for (float gammaScale : {1.0f, 0.1f}) {
    auto [residual, sublayer, gamma] =
        ResidualNormInputs(kNormRows, kNormWidth, 27);
    for (float &g : gamma)
      g *= gammaScale;
    std::vector<float> beta = uniform(kNormWidth, 29);
    std::vector<float> grad = uniform(residual.size(), 30);
    HostTensor res = host(residual, {kNormRows, kNormWidth});
    HostTensor sub = host(sublayer, {kNormRows, kNormWidth});
    HostTensor g = host(gamma, {kNormWidth});
    for (float rate : {0.0f, 0.1f}) {
      HostTensor h = reference::dropout(sub, testDropout(rate));
      for (int64_t i = 0; i < h.numElements(); ++i)
        h[i] += res[i];
      reference::LayerNormGrads expected = reference::layerNormGrad(
          host(grad, {kNormRows, kNormWidth}), h, g, kEpsilon);
      HostTensor expectedSublayer =
          reference::dropout(expected.input, testDropout(rate));
      std::vector<float> out(residual.size()), mean(kNormRows),
          rstd(kNormRows);
      cpu::residualLayerNorm(residual.data(), sublayer.data(), gamma.data(),
                             beta.data(), out.data(), mean.data(), rstd.data(),
                             kNormRows, kNormWidth, testDropout(rate),
                             kEpsilon);
      std::vector<float> dres(residual.size(), 0.0f),
          dsub(residual.size(), 0.0f), dgamma(kNormWidth, 0.0f),
          dbeta(kNormWidth, 0.0f);
      cpu::residualLayerNormGrad(grad.data(), out.data(), gamma.data(),
                                 beta.data(), rstd.data(), dres.data(),
                                 dsub.data(), dgamma.data(), dbeta.data(),
                                 kNormRows, kNormWidth, testDropout(rate));
      std::string tag = " gamma x" + std::to_string(gammaScale) + " rate " +
                        std::to_string(rate);
      const float tolerance = 2e-5f;
      expectClose("residualLayerNormGrad residual" + tag, dres,
                  expected.input, tolerance);
      expectClose("residualLayerNormGrad sublayer" + tag, dsub,
                  expectedSublayer, tolerance);
      expectClose("residualLayerNormGrad gamma" + tag, dgamma, expected.gamma,
                  tolerance);
      expectClose("residualLayerNormGrad beta" + tag, dbeta, expected.beta,
                  2e-5);
      // With a bf16 copy of the sublayer gradient (tg-fold-bf16-roundings):
      // the same f32 gradients, and the copy is the f32 one rounded.
      std::vector<float> dres2(residual.size()), dsub2(residual.size()),
          dgamma2(kNormWidth), dbeta2(kNormWidth);
      std::vector<runtime::Bf16> rounded(residual.size());
      cpu::residualLayerNormGrad(grad.data(), out.data(), gamma.data(),
                                 beta.data(), rstd.data(), dres2.data(),
                                 dsub2.data(), dgamma2.data(), dbeta2.data(),
                                 kNormRows, kNormWidth, testDropout(rate),
                                 rounded.data());
      EXPECT_EQ(dres2, dres) << tag;
      EXPECT_EQ(dsub2, dsub) << tag;
      expectRoundedCopy("residualLayerNormGrad sublayer" + tag, rounded, dsub);
    }
  }
}

} // namespace
} // namespace tgc::test
