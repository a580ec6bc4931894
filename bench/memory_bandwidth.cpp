// The machine's memory bandwidth, the roof of --profile's GB/s column for
// the memory-bound kinds of op (Adam, the norms, the elementwise groups):
// a copy and a triad (a[i] = b[i] + s c[i], as STREAM's) over arrays far
// larger than the caches, on the OpenMP threads the training programs use,
// each the best of repeats; bytes read and written.
//
// Built with the project (bench/CMakeLists.txt) as
// build/bench/memory_bandwidth. Run: OMP_WAIT_POLICY=passive OMP_NUM_THREADS=2
// build/bench/memory_bandwidth [MiB]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>

namespace {

/// Best GB/s of `run`, which moves `bytes`, over repeats after a warm-up.
double bestRate(double bytes, const std::function<void()> &run) {
  run();
  double best = 0.0;
  for (int rep = 0; rep < 10; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    run();
    double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    best = std::max(best, bytes / s / 1e9);
  }
  return best;
}

} // namespace

int main(int argc, char **argv) {
  const long mib = argc > 1 ? std::atol(argv[1]) : 256;
  if (argc > 2 || mib < 1) {
    std::fprintf(stderr, "usage: %s [MiB per array, default 256]\n", argv[0]);
    return 2;
  }
  const long n = mib * (1L << 20) / long(sizeof(float));
  std::unique_ptr<float[]> a(new float[n]), b(new float[n]), c(new float[n]);
  // First touch on the threads that will use each part.
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    a[i] = 0.0f;
    b[i] = 1.0f;
    c[i] = 2.0f;
  }
  const double array = double(n) * sizeof(float);
  double copy = bestRate(2 * array, [&] {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i)
      a[i] = b[i];
  });
  double triad = bestRate(3 * array, [&] {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i)
      a[i] = b[i] + 3.0f * c[i];
  });
  std::printf("%d threads, arrays of %ld MiB: copy %.1f GB/s, triad %.1f "
              "GB/s (bytes read and written; a[0] = %g)\n",
              omp_get_max_threads(), mib, copy, triad, double(a[0]));
  return 0;
}
