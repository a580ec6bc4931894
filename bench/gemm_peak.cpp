// The machine's GEMM peaks through the libraries tgc's CPU kernels call:
// best GFLOP/s over square sizes of row-major f32 GEMMs (OpenBLAS's
// cblas_sgemm and oneDNN's dnnl_sgemm; "peak" is the better, the limit of
// an f32 step) and of bf16 x bf16 -> f32 GEMMs (oneDNN's GEMM call and a
// oneDNN matmul primitive, which --precision=bf16 runs where the CPU has
// AMX; "peak bf16" is the better).
// Threads come from OMP_NUM_THREADS / OPENBLAS_NUM_THREADS, as for the
// training binary.
//
// Built with the project (bench/CMakeLists.txt) as build/bench/gemm_peak;
// bench/sides.py compiles its own copy.
// Run: build/bench/gemm_peak 512 1024 2048
#include <cblas.h>
#include <dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

// Exported by libdnnl 2.6 but not declared in its headers (bf16 as bits).
extern "C" dnnl_status_t dnnl_gemm_bf16bf16f32(
    char transa, char transb, dnnl_dim_t M, dnnl_dim_t N, dnnl_dim_t K,
    float alpha, const uint16_t *A, dnnl_dim_t lda, const uint16_t *B,
    dnnl_dim_t ldb, float beta, float *C, dnnl_dim_t ldc);

/// Best GFLOP/s of `run` (an n x n x n GEMM): the first call (thread
/// start-up, page faults, code generation) is not timed; repeats for at
/// least ~0.3 s and keeps the least disturbed repetition.
double bestRate(int n, const std::function<void()> &run) {
  run();
  double flops = 2.0 * n * n * double(n), best = 0.0, total = 0.0;
  for (int rep = 0; rep < 3 || total < 0.3; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    run();
    double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    total += s;
    best = std::max(best, flops / s / 1e9);
  }
  return best;
}

/// An n x n x n bf16 x bf16 -> f32 matmul primitive's rate, or 0 where
/// oneDNN has none for this CPU.
double primitiveRate(int n, const uint16_t *a, const uint16_t *b, float *c) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  try {
    dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    dnnl::stream stream(engine);
    dnnl::memory::desc ad({n, n}, dt::bf16, tag::ab),
        cd({n, n}, dt::f32, tag::ab);
    dnnl::matmul matmul(
        dnnl::matmul::primitive_desc(dnnl::matmul::desc(ad, ad, cd), engine));
    dnnl::memory am(ad, engine, const_cast<uint16_t *>(a)),
        bm(ad, engine, const_cast<uint16_t *>(b)), cm(cd, engine, c);
    return bestRate(n, [&] {
      matmul.execute(
          stream,
          {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
      stream.wait();
    });
  } catch (const dnnl::error &) {
    return 0.0;
  }
}

int main(int argc, char **argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i)
    sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty())
    sizes = {512, 1024, 1536, 2048};
  double peakF32 = 0.0, peakDnnlF32 = 0.0, peakBf16 = 0.0;
  for (int n : sizes) {
    size_t count = size_t(n) * n;
    std::vector<float> a(count, 0.5f), b(count, 0.25f), c(count);
    std::vector<uint16_t> ah(count, 0x3f00), bh(count, 0x3e80); // 0.5, 0.25
    double openblas = bestRate(n, [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f,
                  a.data(), n, b.data(), n, 0.0f, c.data(), n);
    });
    double dnnl = bestRate(n, [&] {
      dnnl_sgemm('N', 'N', n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f,
                 c.data(), n);
    });
    // Without bf16 instructions oneDNN refuses (returns at once): no rate.
    bool bf16Runs = dnnl_gemm_bf16bf16f32('N', 'N', n, n, n, 1.0f, ah.data(), n,
                                          bh.data(), n, 0.0f, c.data(),
                                          n) == dnnl_success;
    double bf16 = !bf16Runs ? 0.0 : bestRate(n, [&] {
      dnnl_gemm_bf16bf16f32('N', 'N', n, n, n, 1.0f, ah.data(), n, bh.data(),
                            n, 0.0f, c.data(), n);
    });
    double bf16Primitive =
        !bf16Runs ? 0.0 : primitiveRate(n, ah.data(), bh.data(), c.data());
    std::printf("%5d: OpenBLAS sgemm %7.1f, oneDNN sgemm %7.1f, oneDNN bf16 "
                "%7.1f, bf16 primitive %7.1f GFLOP/s\n",
                n, openblas, dnnl, bf16, bf16Primitive);
    peakF32 = std::max(peakF32, openblas);
    peakDnnlF32 = std::max(peakDnnlF32, dnnl);
    peakBf16 = std::max({peakBf16, bf16, bf16Primitive});
  }
  // f32 steps run their larger GEMMs on oneDNN and the small ones on
  // OpenBLAS (runtime/kernels/cpu/Gemm.cpp): their limit is the better one.
  std::printf("peak OpenBLAS f32 %.1f\n", peakF32);
  std::printf("peak oneDNN f32 %.1f\n", peakDnnlF32);
  std::printf("peak %.1f\n", std::max(peakF32, peakDnnlF32));
  std::printf("peak bf16 %.1f\n", peakBf16);
  return 0;
}
