// RMSNorm against LayerNorm in the CPU kernels (runtime/kernels/cpu/Norm.cpp)
// on the bench rows' activations (tokens x d_model): the plain norms and
// their gradients, and the fused residual + dropout (0.1) + norm of a
// training step with its gradient; milliseconds per call for each kind and
// RMSNorm's time over LayerNorm's.
// Built with the project (bench/CMakeLists.txt) as build/bench/norm_kernels.
// Run: OMP_WAIT_POLICY=passive OMP_NUM_THREADS=2 build/bench/norm_kernels
#include "runtime/kernels/cpu/Kernels.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

using namespace tgc;

namespace {

struct Row {
  const char *name;
  int64_t rows, width;
};

std::vector<float> randomValues(int64_t n, std::mt19937 &rng, float mean) {
  std::normal_distribution<float> normal(mean, 1.0f);
  std::vector<float> values(static_cast<size_t>(n));
  for (float &x : values)
    x = normal(rng);
  return values;
}

/// The fastest of 7 rounds of 20 calls, per call, after one call: on a
/// shared machine the minimum is what the kernel costs, other processes'
/// time only ever adds to it.
template <typename Call> double milliseconds(Call &&call) {
  call();
  const int rounds = 7, calls = 20;
  double best = 1e30;
  for (int round = 0; round < rounds; ++round) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i)
      call();
    best = std::min(best, std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - start)
                                  .count() /
                              calls);
  }
  return best;
}

void timeRow(const Row &row) {
  const int64_t n = row.rows * row.width, w = row.width, r = row.rows;
  std::mt19937 rng(1);
  auto x = randomValues(n, rng, 0.0f), sub = randomValues(n, rng, 0.0f),
       dy = randomValues(n, rng, 0.0f);
  auto gamma = randomValues(w, rng, 1.0f), beta = randomValues(w, rng, 0.0f);
  std::vector<float> out(n), dx(n), dsub(n), mean(r), rstd(r), dgamma(w),
      dbeta(w);
  runtime::Dropout dropout{1234, 7, 3, 0.1f};
  const float eps = 1e-6f;

  double layer = milliseconds([&] {
    cpu::layerNorm(x.data(), gamma.data(), beta.data(), out.data(), nullptr,
                   nullptr, r, w, eps);
  });
  double rms = milliseconds([&] {
    cpu::rmsNorm(x.data(), gamma.data(), out.data(), nullptr, r, w, eps);
  });
  double layerGrad = milliseconds([&] {
    cpu::layerNormGrad(dy.data(), x.data(), gamma.data(), dx.data(),
                       dgamma.data(), dbeta.data(), r, w, eps);
  });
  double rmsGrad = milliseconds([&] {
    cpu::rmsNormGrad(dy.data(), x.data(), gamma.data(), dx.data(),
                     dgamma.data(), r, w, eps);
  });
  // The backwards read the forward's output of their own kind.
  double residualLayer = milliseconds([&] {
    cpu::residualLayerNorm(x.data(), sub.data(), gamma.data(), beta.data(),
                           out.data(), mean.data(), rstd.data(), r, w, dropout,
                           eps);
  });
  double residualLayerGrad = milliseconds([&] {
    cpu::residualLayerNormGrad(dy.data(), out.data(), gamma.data(),
                               beta.data(), rstd.data(), dx.data(),
                               dsub.data(), dgamma.data(), dbeta.data(), r, w,
                               dropout);
  });
  double residualRms = milliseconds([&] {
    cpu::residualRmsNorm(x.data(), sub.data(), gamma.data(), out.data(),
                         rstd.data(), r, w, dropout, eps);
  });
  double residualRmsGrad = milliseconds([&] {
    cpu::residualRmsNormGrad(dy.data(), out.data(), gamma.data(), rstd.data(),
                             dx.data(), dsub.data(), dgamma.data(), r, w,
                             dropout);
  });
  auto print = [&](const char *what, double layerMs, double rmsMs) {
    std::printf("%-22s %-18s LayerNorm %7.3f ms  RMSNorm %7.3f ms  (%.2fx)\n",
                row.name, what, layerMs, rmsMs, rmsMs / layerMs);
  };
  print("norm", layer, rms);
  print("norm grad", layerGrad, rmsGrad);
  print("residual norm", residualLayer, residualRms);
  print("residual norm grad", residualLayerGrad, residualRmsGrad);
}

} // namespace

int main() {
  const Row rows[] = {
      {"2L: 1024 x 128", 32 * 32, 128},
      {"3L: 2048 x 256", 64 * 32, 256},
      {"6L: 2048 x 512", 32 * 64, 512},
  };
  for (const Row &row : rows)
    timeRow(row);
}
