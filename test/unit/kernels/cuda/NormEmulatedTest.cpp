//===- NormEmulatedTest.cpp - the residual norms' gradient on the host ----===//
//
// runtime/kernels/cuda/NormKernels.cuh's residualNormGradQuadKernel, which
// sums the gamma and beta gradients' columns as it goes, run by
// KernelEmulator.h as Norm.cu launches it (its block count, then
// finishColumns over the blocks' partials), against the CPU kernel. On a
// GPU, NormTest.cpp checks the same through cuda::residualLayerNormGrad.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cuda/KernelEmulator.h"

#include "runtime/kernels/cuda/NormKernels.cuh"
#include "test/unit/kernels/KernelTestCases.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace tgc::test {
namespace {

constexpr float kEpsilon = 1e-5f;
constexpr double kNormGradTolerance = 1e-4;

/// residualNormGradQuadKernel<kQuads> and finishColumns on the emulator,
/// against cpu::residualLayerNormGrad on the CPU forward's output.
template <int kQuads>
void expectResidualLayerNormGradAsTheCpu(int64_t rows, int64_t width,
                                         float rate) {
  // Appended, not " " + std::to_string(...): GCC 12 at -O3 reports a
  // false -Wrestrict on the inlined insert at the front.
  std::string tag = " ";
  tag += std::to_string(rows) + "x" + std::to_string(width) + " rate " +
         std::to_string(rate);
  const ResidualNormInputs in(rows, width, 30);
  const std::vector<float> grad = uniform(rows * width, 33),
                           beta = uniform(width, 34);
  const runtime::Dropout dropout = testDropout(rate);
  std::vector<float> forward(rows * width), mean(rows), rstd(rows);
  cpu::residualLayerNorm(
      in.residual.data(), in.sublayer.data(), in.gamma.data(), beta.data(),
      forward.data(), mean.data(), rstd.data(), rows, width, dropout, kEpsilon);
  std::vector<float> dres(rows * width), dsub(rows * width), dgamma(width),
      dbeta(width);
  cpu::residualLayerNormGrad(grad.data(), forward.data(), in.gamma.data(),
                             beta.data(), rstd.data(), dres.data(), dsub.data(),
                             dgamma.data(), dbeta.data(), rows, width, dropout);

  const unsigned blocks =
      std::min(cuda::warpRowBlocks(rows), cuda::kColumnSumBlocks);
  std::vector<double> partial(2 * blocks * width, 7.0);
  std::vector<float> gotRes(rows * width, 7.0f), gotSub(rows * width, 7.0f),
      gotGamma(width, 7.0f), gotBeta(width, 7.0f);
  emulator::launch(dim3(blocks), dim3(cuda::kThreads), 0, [&] {
    cuda::residualNormGradQuadKernel<kQuads, true>(
        grad.data(), forward.data(), in.gamma.data(), beta.data(), rstd.data(),
        gotRes.data(), gotSub.data(), rows, width, dropout, nullptr, nullptr,
        partial.data());
  });
  emulator::launch(dim3(static_cast<unsigned>((width + cuda::kNormColumns - 1) /
                                              cuda::kNormColumns)),
                   dim3(cuda::kNormColumns, cuda::kNormSlices), 0, [&] {
                     cuda::finishColumns(partial.data(), blocks, width,
                                         gotGamma.data(), gotBeta.data());
                   });
  expectClose("emulated residualLayerNormGrad residual" + tag, gotRes, dres,
              kNormGradTolerance);
  expectClose("emulated residualLayerNormGrad sublayer" + tag, gotSub, dsub,
              kNormGradTolerance);
  expectClose("emulated residualLayerNormGrad gamma" + tag, gotGamma, dgamma,
              kNormGradTolerance);
  expectClose("emulated residualLayerNormGrad beta" + tag, gotBeta, dbeta,
              kNormGradTolerance);
}

// A model's width (4 quads a lane) with more rows than the kernel has
// warps (each warp sums several rows' columns), the widest rows (8 quads a
// lane) and a width whose last lanes are empty (2 quads a lane, 50 quads);
// with and without dropout.
TEST(NormEmulated, ResidualLayerNormGradSumsItsColumnsAsItGoes) {
  expectResidualLayerNormGradAsTheCpu<4>(2500, 512, 0.1f);
  for (float rate : {0.0f, 0.1f}) {
    expectResidualLayerNormGradAsTheCpu<8>(70, 1024, rate);
    expectResidualLayerNormGradAsTheCpu<2>(33, 200, rate);
  }
}

// A bf16 step reads only the rounded sublayer gradient: without the f32
// one (null) the kernel writes the same rounding and residual gradient.
TEST(NormEmulated, ResidualLayerNormGradRoundsWithoutTheF32SublayerGradient) {
  constexpr int64_t rows = 33, width = 200;
  const ResidualNormInputs in(rows, width, 40);
  const std::vector<float> grad = uniform(rows * width, 43),
                           beta = uniform(width, 44);
  const runtime::Dropout dropout = testDropout(0.1f);
  std::vector<float> forward(rows * width), mean(rows), rstd(rows);
  cpu::residualLayerNorm(
      in.residual.data(), in.sublayer.data(), in.gamma.data(), beta.data(),
      forward.data(), mean.data(), rstd.data(), rows, width, dropout, kEpsilon);
  const unsigned blocks =
      std::min(cuda::warpRowBlocks(rows), cuda::kColumnSumBlocks);
  auto run = [&](float *sublayerGrad, std::vector<float> &residualGrad,
                 std::vector<runtime::Bf16> &rounded) {
    std::vector<double> partial(2 * blocks * width, 7.0);
    emulator::launch(dim3(blocks), dim3(cuda::kThreads), 0, [&] {
      cuda::residualNormGradQuadKernel<2, true>(
          grad.data(), forward.data(), in.gamma.data(), beta.data(),
          rstd.data(), residualGrad.data(), sublayerGrad, rows, width, dropout,
          rounded.data(), nullptr, partial.data());
    });
  };
  std::vector<float> sub(rows * width, 7.0f), res(rows * width, 7.0f),
      resAlone(rows * width, 7.0f);
  std::vector<runtime::Bf16> rounded(rows * width, runtime::Bf16{0x7fc0}),
      roundedAlone(rows * width, runtime::Bf16{0x7fc0});
  run(sub.data(), res, rounded);
  run(nullptr, resAlone, roundedAlone);
  for (int64_t i = 0; i < rows * width; ++i) {
    ASSERT_EQ(rounded[i].bits, runtime::roundToBf16(sub[i]).bits) << i;
    ASSERT_EQ(roundedAlone[i].bits, rounded[i].bits) << i;
    ASSERT_EQ(resAlone[i], res[i]) << i;
  }
}

} // namespace
} // namespace tgc::test
