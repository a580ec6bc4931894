// What folding the activation into linear's epilogue saves on the CPU, for
// the FFN's first linear of a training step (the backward reads the
// pre-activation, so it is kept): per activation, the best of repeats of
//  - unfused: linear with the bias only (on a oneDNN matmul primitive), then
//    the activation as its own vectorized loop over the [M, f] sums, as the
//    generated elementwise loop runs it;
//  - fused: linear writing the activation and the pre-activation from one
//    epilogue over 128-row blocks (runtime/kernels/cpu/Linear.cpp);
//  - post-op: linear writing the activation only (the forward alone), the
//    primitive's eltwise post-op.
//
// With bf16: bf16 operands and a bf16 activation (tg-mixed-precision's FFN),
// the pre-activation kept in f32; unfused is then the linear's bf16 result
// with the bias only, activated and rounded by a loop.
//
// Built with the project (bench/CMakeLists.txt) as build/bench/linear_epilogue.
// Run: OMP_WAIT_POLICY=passive OMP_NUM_THREADS=2 build/bench/linear_epilogue M
// d f [bf16]
//   (bench/activations.py's FFN: 2048 512 2048; bench/lm.py's small GPT's
//   c_fc: 2048 256 1024 bf16)
#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/cpu/Kernels.h"
#include "runtime/kernels/cpu/VectorMath.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

using tgc::runtime::Activation;

namespace {

template <typename Fn> double bestMs(Fn fn, int repeats = 15) {
  fn(); // the primitive is made on the first call
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    fn();
    std::chrono::duration<double, std::milli> ms =
        std::chrono::steady_clock::now() - start;
    best = std::min(best, ms.count());
  }
  return best;
}

template <Activation A> void activate(const float *in, float *out, int64_t n) {
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i)
    out[i] = tgc::elementwise::activate(A, in[i]);
}

void activateOf(Activation a, const float *in, float *out, int64_t n) {
  switch (a) {
  case Activation::gelu:
    return activate<Activation::gelu>(in, out, n);
  case Activation::geluTanh:
    return activate<Activation::geluTanh>(in, out, n);
  case Activation::silu:
    return activate<Activation::silu>(in, out, n);
  default:
    return activate<Activation::relu>(in, out, n);
  }
}

} // namespace

/// The bf16 rows: bf16 x and w, an f32 pre-activation and a bf16 result.
void bf16Rows(int64_t m, int64_t k, int64_t n, const std::vector<float> &x,
              const std::vector<float> &w, const std::vector<float> &b) {
  using tgc::runtime::Bf16;
  auto rounded = [](const std::vector<float> &v) {
    std::vector<Bf16> r(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      r[i] = tgc::runtime::roundToBf16(v[i]);
    return r;
  };
  std::vector<Bf16> x16 = rounded(x), w16 = rounded(w), y(m * n);
  std::vector<float> pre(m * n), activated(m * n);
  std::printf("bf16 linear %lldx%lldx%lld, ms (best of 15)\n%-10s %9s %9s\n",
              (long long)m, (long long)k, (long long)n, "activation", "unfused",
              "fused");
  const std::pair<Activation, const char *> cases[] = {
      {Activation::gelu, "gelu"},
      {Activation::geluTanh, "gelu_tanh"},
      {Activation::silu, "silu"}};
  for (auto [a, name] : cases) {
    double unfused = bestMs([&] {
      tgc::cpu::linear(x16.data(), w16.data(), b.data(), pre.data(), m, k, n,
                       Activation::none);
      activateOf(a, pre.data(), activated.data(), m * n);
#pragma omp parallel for simd schedule(static)
      for (int64_t i = 0; i < m * n; ++i)
        y[i] = tgc::runtime::roundToBf16(activated[i]);
    });
    double fused = bestMs([&] {
      tgc::cpu::linear(x16.data(), w16.data(), b.data(), y.data(), pre.data(),
                       m, k, n, a);
    });
    std::printf("%-10s %9.2f %9.2f\n", name, unfused, fused);
  }
}

int main(int argc, char **argv) {
  if (argc != 4 && !(argc == 5 && std::string(argv[4]) == "bf16")) {
    std::fprintf(stderr, "usage: %s M d f [bf16]\n", argv[0]);
    return 1;
  }
  int64_t m = std::atoll(argv[1]), k = std::atoll(argv[2]),
          n = std::atoll(argv[3]);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(m * k), w(k * n), b(n), y(m * n), pre(m * n);
  for (float *v : {x.data(), w.data(), b.data()})
    for (int64_t i = 0, e = v == b.data() ? n : v == x.data() ? m * k : k * n;
         i < e; ++i)
      v[i] = u(rng);
  if (argc == 5) {
    bf16Rows(m, k, n, x, w, b);
    return 0;
  }
  std::printf("linear %lldx%lldx%lld, ms (best of 15)\n%-10s %9s %9s %9s\n",
              (long long)m, (long long)k, (long long)n, "activation",
              "unfused", "fused", "post-op");
  const std::pair<Activation, const char *> cases[] = {
      {Activation::relu, "relu"},
      {Activation::gelu, "gelu"},
      {Activation::geluTanh, "gelu_tanh"},
      {Activation::silu, "silu"}};
  for (auto [a, name] : cases) {
    double unfused = bestMs([&] {
      tgc::cpu::linear(x.data(), w.data(), b.data(), pre.data(), m, k, n,
                       Activation::none);
      activateOf(a, pre.data(), y.data(), m * n);
    });
    double fused = bestMs([&] {
      tgc::cpu::linear(x.data(), w.data(), b.data(), y.data(), pre.data(), m,
                       k, n, a);
    });
    double postOp = bestMs([&] {
      tgc::cpu::linear(x.data(), w.data(), b.data(), y.data(), m, k, n, a);
    });
    std::printf("%-10s %9.2f %9.2f %9.2f\n", name, unfused, fused, postOp);
  }
  return 0;
}
