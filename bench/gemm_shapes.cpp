// Which library is fastest for each f32 GEMM of a training step, and what
// the CPU kernels' dispatch (runtime/kernels/cpu/Gemm.cpp: cpu::gemm and
// cpu::linear) gets: for the shapes of one bench row, GFLOP/s of OpenBLAS's
// cblas_sgemm, oneDNN's dnnl_sgemm, a oneDNN matmul primitive made for the
// shape, and the dispatch itself, each the best of repeats after a warm-up
// call. The shapes follow the Transformer's step with M tokens, model width
// d, feed-forward width f and vocabulary V: the forward linears and
// projections, their input- and weight-gradient products, and the output
// loss's three products per chunk of 1024 rows.
//
// Built with the project (bench/CMakeLists.txt) as build/bench/gemm_shapes.
// Run:
//   OMP_WAIT_POLICY=passive OMP_NUM_THREADS=2 build/bench/gemm_shapes M d f V [bf16]
//   (2L row: 1024 128 512 1000; 3L: 2048 256 1024 8000; 6L: 2048 512 2048 8000)
// With bf16: the same shapes on bf16 operands (tg-mixed-precision), f32
// results: oneDNN's dnnl_gemm_bf16bf16f32 (cpu::bf16GemmCall), a matmul
// primitive, and the dispatch (cpu::gemm, which picks one of the two by
// cpu::bf16GemmOnPrimitive; cpu::linear).
#include "runtime/kernels/cpu/Gemm.h"
#include "runtime/kernels/cpu/Kernels.h"

#include <cblas.h>
#include <dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

struct Shape {
  const char *what;
  int64_t m, n, k;
  bool ta, tb, bias; // bias: a linear (cpu::linear) with its bias
};

double rate(const Shape &s, const std::function<void()> &run) {
  run();
  double flops = 2.0 * s.m * s.n * double(s.k), best = 0.0, total = 0.0;
  for (int rep = 0; rep < 5 || total < 0.2; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    run();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    total += seconds;
    best = std::max(best, flops / seconds / 1e9);
  }
  return best;
}

/// The CPU kernels' own choice: cpu::linear (with its bias) for a linear,
/// cpu::gemm for the rest.
template <typename T>
void dispatch(const Shape &s, const std::vector<T> &a, const std::vector<T> &b,
              const std::vector<float> &bias, std::vector<float> &c) {
  if (s.bias)
    tgc::cpu::linear(a.data(), b.data(), bias.data(), c.data(), s.m, s.k, s.n,
                     tgc::runtime::Activation::none);
  else
    tgc::cpu::gemm(a.data(), b.data(), c.data(), s.m, s.n, s.k, s.ta, s.tb,
                   0.0f);
}

/// The library the dispatch runs an f32 shape on, as the table names it.
const char *f32Via(const Shape &s) {
  if (s.bias)
    return "primitive"; // cpu::linear's, with the bias in its epilogue
  switch (tgc::cpu::f32GemmLibrary(s.m, s.n, s.k, s.ta, s.tb,
                                   tgc::cpu::oneDnnHasAvx512())) {
  case tgc::cpu::GemmLibrary::OpenBlas:
    return "OpenBLAS";
  case tgc::cpu::GemmLibrary::OneDnnSgemm:
    return "oneDNN";
  case tgc::cpu::GemmLibrary::OneDnnPrimitive:
    return "primitive";
  }
  return "?";
}

void execute(dnnl::matmul &primitive, dnnl::memory &a, dnnl::memory &b,
             dnnl::memory &c, dnnl::stream &stream) {
  primitive.execute(stream,
                    {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
  stream.wait();
}

dnnl::matmul::primitive_desc productDesc(const Shape &s, dnnl::engine &engine,
                                         dnnl::memory::data_type operands) {
  using dims = dnnl::memory::dims;
  dnnl::memory::desc ad({s.m, s.k}, operands, s.ta ? dims{1, s.m} : dims{s.k, 1});
  dnnl::memory::desc bd({s.k, s.n}, operands, s.tb ? dims{1, s.k} : dims{s.n, 1});
  dnnl::memory::desc cd({s.m, s.n}, dnnl::memory::data_type::f32,
                        dnnl::memory::format_tag::ab);
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(ad, bd, cd), engine);
}

template <size_t N>
int bf16Rates(const Shape (&shapes)[N], dnnl::engine &engine,
              dnnl::stream &stream) {
  using tgc::runtime::Bf16;
  std::printf("%-20s %5s %5s %5s %2s  bf16 GFLOP/s: %8s %9s %8s\n", "product",
              "m", "n", "k", "op", "oneDNN", "primitive", "tgc");
  for (const Shape &s : shapes) {
    std::vector<Bf16> a(s.m * s.k, tgc::runtime::roundToBf16(0.5f)),
        b(s.k * s.n, tgc::runtime::roundToBf16(0.25f));
    std::vector<float> c(s.m * s.n), bias(s.n, 0.1f);
    auto desc = productDesc(s, engine, dnnl::memory::data_type::bf16);
    dnnl::matmul primitive(desc);
    dnnl::memory am(desc.src_desc(), engine, a.data()),
        bm(desc.weights_desc(), engine, b.data()),
        cm(desc.dst_desc(), engine, c.data());
    double onednn = rate(s, [&] {
      tgc::cpu::bf16GemmCall(a.data(), b.data(), c.data(), s.m, s.n, s.k, s.ta,
                             s.tb, 0.0f);
    });
    double matmul = rate(s, [&] { execute(primitive, am, bm, cm, stream); });
    double tgc = rate(s, [&] { dispatch(s, a, b, bias, c); });
    double best = std::max(onednn, matmul);
    const bool onPrimitive =
        s.bias || tgc::cpu::bf16GemmOnPrimitive(s.m, s.n, s.k, s.ta, s.tb,
                                                tgc::cpu::oneDnnHasAmx());
    std::printf("%-20s %5ld %5ld %5ld %c%c                %8.0f %9.0f %8.0f  "
                "(%3.0f%% of the best, on %s)\n",
                s.what, long(s.m), long(s.n), long(s.k), s.ta ? 'T' : 'N',
                s.tb ? 'T' : 'N', onednn, matmul, tgc, 100.0 * tgc / best,
                onPrimitive ? "primitive" : "oneDNN");
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 5 && !(argc == 6 && std::string(argv[5]) == "bf16")) {
    std::fprintf(stderr, "usage: %s M d f V [bf16]\n", argv[0]);
    return 2;
  }
  const bool bf16 = argc == 6;
  const int64_t M = std::atoll(argv[1]), d = std::atoll(argv[2]),
                f = std::atoll(argv[3]), V = std::atoll(argv[4]),
                chunk = std::min<int64_t>(1024, M);
  const Shape shapes[] = {
      {"projection x W", M, d, d, false, false, false},
      {"ffn1 x W1 + b1", M, f, d, false, false, true},
      {"ffn2 h W2 + b2", M, d, f, false, false, true},
      {"projection dY W^T", M, d, d, false, true, false},
      {"ffn1 dH W1^T", M, d, f, false, true, false},
      {"ffn2 dY W2^T", M, f, d, false, true, false},
      {"projection X^T dY", d, d, M, true, false, false},
      {"ffn1 X^T dH", d, f, M, true, false, false},
      {"ffn2 H^T dY", f, d, M, true, false, false},
      {"loss logits x E^T", chunk, V, d, false, true, false},
      {"loss dL E", chunk, d, V, false, false, false},
      {"loss dL^T x", V, d, chunk, true, false, false},
  };
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  if (bf16) {
    std::printf("oneDNN's instruction set %s AMX\n",
                tgc::cpu::oneDnnHasAmx() ? "has" : "lacks");
    return bf16Rates(shapes, engine, stream);
  }
  std::printf("oneDNN's instruction set %s AVX-512\n",
              tgc::cpu::oneDnnHasAvx512() ? "has" : "lacks");
  std::printf("%-20s %5s %5s %5s %2s  GFLOP/s: %8s %8s %9s %8s\n", "product",
              "m", "n", "k", "op", "OpenBLAS", "oneDNN", "primitive", "tgc");
  for (const Shape &s : shapes) {
    std::vector<float> a(s.m * s.k, 0.5f), b(s.k * s.n, 0.25f),
        c(s.m * s.n), bias(s.n, 0.1f);
    const int64_t lda = s.ta ? s.m : s.k, ldb = s.tb ? s.k : s.n;
    auto desc = productDesc(s, engine, dnnl::memory::data_type::f32);
    dnnl::matmul primitive(desc);
    dnnl::memory am(desc.src_desc(), engine, a.data()),
        bm(desc.weights_desc(), engine, b.data()),
        cm(desc.dst_desc(), engine, c.data());
    double openblas = rate(s, [&] {
      cblas_sgemm(CblasRowMajor, s.ta ? CblasTrans : CblasNoTrans,
                  s.tb ? CblasTrans : CblasNoTrans, s.m, s.n, s.k, 1.0f,
                  a.data(), lda, b.data(), ldb, 0.0f, c.data(), s.n);
    });
    double onednn = rate(s, [&] {
      dnnl_sgemm(s.ta ? 'T' : 'N', s.tb ? 'T' : 'N', s.m, s.n, s.k, 1.0f,
                 a.data(), lda, b.data(), ldb, 0.0f, c.data(), s.n);
    });
    double matmul = rate(s, [&] { execute(primitive, am, bm, cm, stream); });
    double tgc = rate(s, [&] { dispatch(s, a, b, bias, c); });
    double best = std::max({openblas, onednn, matmul});
    std::printf("%-20s %5ld %5ld %5ld %c%c           %8.0f %8.0f %9.0f %8.0f  "
                "(%3.0f%% of the best, on %s)\n",
                s.what, long(s.m), long(s.n), long(s.k), s.ta ? 'T' : 'N',
                s.tb ? 'T' : 'N', openblas, onednn, matmul, tgc,
                100.0 * tgc / best, f32Via(s));
  }
}
