//===- NormEmulatedTest.cpp - softmax and the norms on the host -----------===//
//
// runtime/kernels/cuda/NormKernels.cuh's kernels run by KernelEmulator.h
// with Norm.cu's grids (a warp a row up to kWarpRowWidth, else a block; the
// residual norms by quads where the width allows, and by columns), against
// the CPU kernels: softmax and its gradient, LayerNorm and RMSNorm with
// their statistics and gradients (the gamma and beta column sums in
// columnPartials and finishColumns), the residual norms forward with
// dropout, their bf16 copy and the pre-LN sum, and their gradients by
// columns and by quads (residualNormGradQuadKernel, which sums the gamma
// and beta columns as it goes). On a GPU, NormTest.cpp checks the same
// through Norm.cu.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cuda/KernelEmulator.h"

#include "runtime/kernels/cuda/NormKernels.cuh"
#include "test/unit/kernels/KernelTestCases.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <type_traits>

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

// Odd widths a warp a row (97, and 250, not a multiple of 4: the residual
// norms by columns), widths of 1, 2, 4 and 8 quads a lane (64, 200 with the
// last lanes empty, 512, 1024), and a block a row (1500). Few rows: every
// CUDA thread is a fiber here.
struct RowShape {
  int64_t rows, width;
};
constexpr RowShape kRowShapes[] = {{20, 97}, {37, 64},  {33, 200}, {19, 512},
                                   {9, 1024}, {17, 250}, {3, 1500}};

std::string tagOf(const RowShape &r) {
  std::string tag = " ";
  tag += std::to_string(r.rows) + "x" + std::to_string(r.width);
  return tag;
}

/// launch(cuda::WarpRows{}) or launch(cuda::BlockRows{}) on Norm.cu's grid
/// for rows of `width` (TGC_LAUNCH_ROWS).
template <typename Launch>
void launchRows(int64_t rows, int64_t width, Launch launch) {
  if (width <= cuda::kWarpRowWidth)
    emulator::launch(dim3(cuda::warpRowBlocks(rows)), dim3(cuda::kThreads), 0,
                     [&] { launch(cuda::WarpRows{}); });
  else
    emulator::launch(dim3(cuda::rowBlocks(rows)), dim3(cuda::kThreads), 0,
                     [&] { launch(cuda::BlockRows{}); });
}

/// gammaGrad and betaGrad (null for RMSNorm) as Norm.cu's columnSums makes
/// them: columnPartials over chunks of rows, then finishColumns.
template <typename Xhat>
void columnSums(const std::vector<float> &grad, Xhat xhatOf, int64_t rows,
                int64_t width, float *gammaGrad, float *betaGrad) {
  const int64_t chunkRows = std::max(
      cuda::kChunkRows, (rows + cuda::kMaxChunks - 1) / cuda::kMaxChunks);
  const int64_t chunks =
      std::max<int64_t>(1, (rows + chunkRows - 1) / chunkRows);
  std::vector<double> partial(2 * chunks * width, 7.0);
  const auto columnBlocks = static_cast<unsigned>(
      (width + cuda::kNormColumns - 1) / cuda::kNormColumns);
  const dim3 block(cuda::kNormColumns, cuda::kNormSlices);
  emulator::launch(dim3(columnBlocks, static_cast<unsigned>(chunks)), block, 0,
                   [&] {
                     cuda::columnPartials(grad.data(), xhatOf, rows, width,
                                          chunkRows, partial.data());
                   });
  emulator::launch(dim3(columnBlocks), block, 0, [&] {
    cuda::finishColumns(partial.data(), chunks, width, gammaGrad, betaGrad);
  });
}

TEST(NormEmulated, SoftmaxAndItsGradient) {
  for (const RowShape &r : kRowShapes) {
    const int64_t n = r.rows * r.width;
    const std::vector<float> input = uniform(n, 17, -5.0f, 5.0f),
                             grad = uniform(n, 18);
    std::vector<float> expected(n), expectedGrad(n), got(n, 7.0f),
        gotGrad(n, 7.0f);
    cpu::softmax(input.data(), expected.data(), r.rows, r.width);
    cpu::softmaxGrad(expected.data(), grad.data(), expectedGrad.data(), r.rows,
                     r.width);
    const dim3 grid(cuda::rowBlocks(r.rows)), block(cuda::kThreads);
    emulator::launch(grid, block, 0, [&] {
      cuda::softmaxKernel(input.data(), got.data(), r.rows, r.width);
    });
    emulator::launch(grid, block, 0, [&] {
      cuda::softmaxGradKernel(expected.data(), grad.data(), gotGrad.data(),
                              r.rows, r.width);
    });
    expectClose("emulated softmax" + tagOf(r), got, expected, 1e-5);
    expectClose("emulated softmaxGrad" + tagOf(r), gotGrad, expectedGrad, 1e-5);
  }
}

TEST(NormEmulated, LayerNormAndRmsNormWithTheirStatistics) {
  for (const RowShape &r : kRowShapes) {
    const int64_t n = r.rows * r.width;
    const std::vector<float> input = uniform(n, 20, -3.0f, 3.0f),
                             gamma = uniform(r.width, 21, 0.5f, 1.5f),
                             beta = uniform(r.width, 22);
    std::vector<float> expected(n), mean(r.rows), rstd(r.rows);
    std::vector<float> got(n, 7.0f), gotMean(r.rows, 7.0f),
        gotRstd(r.rows, 7.0f);
    cpu::layerNorm(input.data(), gamma.data(), beta.data(), expected.data(),
                   mean.data(), rstd.data(), r.rows, r.width, kEpsilon);
    launchRows(r.rows, r.width, [&](auto rows) {
      cuda::normKernel<decltype(rows), true>(
          input.data(), gamma.data(), beta.data(), got.data(), gotMean.data(),
          gotRstd.data(), r.rows, r.width, kEpsilon);
    });
    expectClose("emulated layerNorm" + tagOf(r), got, expected, 1e-5);
    expectClose("emulated layerNorm mean" + tagOf(r), gotMean, mean, 1e-5);
    expectClose("emulated layerNorm rstd" + tagOf(r), gotRstd, rstd, 1e-5);

    cpu::rmsNorm(input.data(), gamma.data(), expected.data(), rstd.data(),
                 r.rows, r.width, kEpsilon);
    launchRows(r.rows, r.width, [&](auto rows) {
      cuda::normKernel<decltype(rows), false>(
          input.data(), gamma.data(), nullptr, got.data(), nullptr,
          gotRstd.data(), r.rows, r.width, kEpsilon);
    });
    expectClose("emulated rmsNorm" + tagOf(r), got, expected, 1e-5);
    expectClose("emulated rmsNorm rstd" + tagOf(r), gotRstd, rstd, 1e-5);
  }
}

TEST(NormEmulated, LayerNormAndRmsNormGradients) {
  for (const RowShape &r : kRowShapes)
    for (bool centred : {true, false}) {
      const std::string tag =
          (centred ? " layerNormGrad" : " rmsNormGrad") + tagOf(r);
      const int64_t n = r.rows * r.width;
      const std::vector<float> input = uniform(n, 23, -3.0f, 3.0f),
                               gamma = uniform(r.width, 24, 0.5f, 1.5f),
                               grad = uniform(n, 25);
      std::vector<float> dx(n), dgamma(r.width), dbeta(r.width);
      if (centred)
        cpu::layerNormGrad(grad.data(), input.data(), gamma.data(), dx.data(),
                           dgamma.data(), dbeta.data(), r.rows, r.width,
                           kEpsilon);
      else
        cpu::rmsNormGrad(grad.data(), input.data(), gamma.data(), dx.data(),
                         dgamma.data(), r.rows, r.width, kEpsilon);
      std::vector<float> gotDx(n, 7.0f), gotGamma(r.width, 7.0f),
          gotBeta(r.width, 7.0f), mean(r.rows, 7.0f), rstd(r.rows, 7.0f);
      launchRows(r.rows, r.width, [&](auto rows) {
        auto kernel = centred ? cuda::normGradKernel<decltype(rows), true>
                              : cuda::normGradKernel<decltype(rows), false>;
        kernel(grad.data(), input.data(), gamma.data(), gotDx.data(),
               mean.data(), rstd.data(), r.rows, r.width, kEpsilon);
      });
      columnSums(grad,
                 cuda::NormalizedInput{input.data(), mean.data(), rstd.data()},
                 r.rows, r.width, gotGamma.data(),
                 centred ? gotBeta.data() : nullptr);
      expectClose("emulated input" + tag, gotDx, dx, kNormGradTolerance);
      expectClose("emulated gamma" + tag, gotGamma, dgamma,
                  kNormGradTolerance);
      if (centred)
        expectClose("emulated beta" + tag, gotBeta, dbeta, kNormGradTolerance);
    }
}

/// The residual norms' forward results of one kernel: out, mean, rstd,
/// the bf16 copy of out and the pre-LN sum.
struct ResidualForward {
  explicit ResidualForward(const RowShape &r)
      : out(r.rows * r.width, 7.0f), mean(r.rows, 7.0f), rstd(r.rows, 7.0f),
        sum(r.rows * r.width, 7.0f),
        rounded(r.rows * r.width, runtime::Bf16{0x7fc0}) {}
  std::vector<float> out, mean, rstd, sum;
  std::vector<runtime::Bf16> rounded;
};

template <bool kCentred>
void expectResidualNormsAsTheCpu(const RowShape &r, float rate) {
  const std::string tag = (kCentred ? " residualLayerNorm" : " residualRmsNorm") +
                          tagOf(r) + " rate " + std::to_string(rate);
  const ResidualNormInputs in(r.rows, r.width, 26);
  const std::vector<float> beta = uniform(r.width, 29);
  const float *betaOrNull = kCentred ? beta.data() : nullptr;
  const runtime::Dropout dropout = testDropout(rate);
  ResidualForward expected(r);
  if (kCentred)
    cpu::residualLayerNorm(in.residual.data(), in.sublayer.data(),
                           in.gamma.data(), beta.data(), expected.out.data(),
                           expected.mean.data(), expected.rstd.data(), r.rows,
                           r.width, dropout, kEpsilon, nullptr,
                           expected.sum.data());
  else
    cpu::residualRmsNorm(in.residual.data(), in.sublayer.data(),
                         in.gamma.data(), expected.out.data(),
                         expected.rstd.data(), r.rows, r.width, dropout,
                         kEpsilon, nullptr, expected.sum.data());
  auto expectAsTheCpu = [&](const ResidualForward &got, const char *path) {
    const std::string what = std::string("emulated ") + path + tag;
    expectClose(what, got.out, expected.out, 1e-5);
    expectClose(what + " rstd", got.rstd, expected.rstd, 1e-5);
    if (kCentred)
      expectClose(what + " mean", got.mean, expected.mean, 1e-5);
    // The sum is the same two roundings on both sides, or one FMA apart.
    expectClose(what + " sum", got.sum, expected.sum, 1e-6);
    expectRoundedCopy(what, got.rounded, got.out);
  };

  ResidualForward byColumns(r);
  launchRows(r.rows, r.width, [&](auto rows) {
    cuda::residualNormKernel<decltype(rows), kCentred>(
        in.residual.data(), in.sublayer.data(), in.gamma.data(), betaOrNull,
        byColumns.out.data(), byColumns.mean.data(), byColumns.rstd.data(),
        r.rows, r.width, dropout, kEpsilon, byColumns.rounded.data(),
        byColumns.sum.data());
  });
  expectAsTheCpu(byColumns, "by columns");
  if (r.width % 4 != 0 || r.width > cuda::kWarpRowWidth)
    return; // Norm.cu's byQuads: these rows go by columns only
  ResidualForward byQuads(r);
  cuda::withQuadsPerLane(r.width, [&](auto perLane) {
    emulator::launch(dim3(cuda::warpRowBlocks(r.rows)), dim3(cuda::kThreads), 0,
                     [&] {
                       cuda::residualNormQuadKernel<decltype(perLane)::value,
                                                    kCentred>(
                           in.residual.data(), in.sublayer.data(),
                           in.gamma.data(), betaOrNull, byQuads.out.data(),
                           byQuads.mean.data(), byQuads.rstd.data(), r.rows,
                           r.width, dropout, kEpsilon, byQuads.rounded.data(),
                           byQuads.sum.data());
                     });
  });
  expectAsTheCpu(byQuads, "by quads");
}

TEST(NormEmulated, ResidualNormsByQuadsAndByColumns) {
  for (const RowShape &r : kRowShapes)
    for (float rate : {0.0f, 0.1f}) {
      expectResidualNormsAsTheCpu<true>(r, rate);
      expectResidualNormsAsTheCpu<false>(r, rate);
    }
}

template <bool kCentred>
void expectResidualNormGradByColumnsAsTheCpu(const RowShape &r, float rate) {
  const std::string tag =
      (kCentred ? " residualLayerNormGrad" : " residualRmsNormGrad") +
      tagOf(r) + " rate " + std::to_string(rate);
  const int64_t n = r.rows * r.width;
  const ResidualNormInputs in(r.rows, r.width, 30);
  const std::vector<float> beta = uniform(r.width, 34), grad = uniform(n, 33),
                           sumGrad = uniform(n, 35);
  const float *betaOrNull = kCentred ? beta.data() : nullptr;
  const runtime::Dropout dropout = testDropout(rate);
  // Both sides read the CPU forward's output and statistics.
  std::vector<float> forward(n), mean(r.rows), rstd(r.rows);
  std::vector<float> dres(n), dsub(n), dgamma(r.width), dbeta(r.width);
  if (kCentred) {
    cpu::residualLayerNorm(in.residual.data(), in.sublayer.data(),
                           in.gamma.data(), beta.data(), forward.data(),
                           mean.data(), rstd.data(), r.rows, r.width, dropout,
                           kEpsilon);
    cpu::residualLayerNormGrad(grad.data(), forward.data(), in.gamma.data(),
                               beta.data(), rstd.data(), dres.data(),
                               dsub.data(), dgamma.data(), dbeta.data(), r.rows,
                               r.width, dropout, nullptr, sumGrad.data());
  } else {
    cpu::residualRmsNorm(in.residual.data(), in.sublayer.data(),
                         in.gamma.data(), forward.data(), rstd.data(), r.rows,
                         r.width, dropout, kEpsilon);
    cpu::residualRmsNormGrad(grad.data(), forward.data(), in.gamma.data(),
                             rstd.data(), dres.data(), dsub.data(),
                             dgamma.data(), r.rows, r.width, dropout, nullptr,
                             sumGrad.data());
  }
  std::vector<float> gotRes(n, 7.0f), gotSub(n, 7.0f), gotGamma(r.width, 7.0f),
      gotBeta(r.width, 7.0f);
  std::vector<runtime::Bf16> rounded(n, runtime::Bf16{0x7fc0});
  const cuda::NormalizedOutput xhatOf{forward.data(), in.gamma.data(),
                                      betaOrNull};
  launchRows(r.rows, r.width, [&](auto rows) {
    cuda::residualNormGradKernel<decltype(rows), kCentred>(
        grad.data(), xhatOf, rstd.data(), gotRes.data(), gotSub.data(), r.rows,
        r.width, dropout, rounded.data(), sumGrad.data());
  });
  columnSums(grad, xhatOf, r.rows, r.width, gotGamma.data(),
             kCentred ? gotBeta.data() : nullptr);
  expectClose("emulated residual" + tag, gotRes, dres, kNormGradTolerance);
  expectClose("emulated sublayer" + tag, gotSub, dsub, kNormGradTolerance);
  expectRoundedCopy("emulated sublayer" + tag, rounded, gotSub);
  expectClose("emulated gamma" + tag, gotGamma, dgamma, kNormGradTolerance);
  if (kCentred)
    expectClose("emulated beta" + tag, gotBeta, dbeta, kNormGradTolerance);
}

TEST(NormEmulated, ResidualNormGradientsByColumns) {
  for (const RowShape &r : kRowShapes)
    for (float rate : {0.0f, 0.1f}) {
      expectResidualNormGradByColumnsAsTheCpu<true>(r, rate);
      expectResidualNormGradByColumnsAsTheCpu<false>(r, rate);
    }
}

} // namespace
} // namespace tgc::test
