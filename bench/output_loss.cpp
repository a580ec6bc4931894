// The fused output projection and loss of the CPU kernels
// (runtime/kernels/cpu/Loss.cpp: cpu::outputLoss, tg.output_loss) on one
// step's rows: logits, the loss and its gradient row by row, and the two
// gradient products, chunk after chunk of rows. Milliseconds per call
// (the fastest of 5 rounds) and GFLOP/s of its three products, for f32 and
// bf16 operands and each chunk size given.
// Built with the project (bench/CMakeLists.txt) as build/bench/output_loss.
// Run: OMP_NUM_THREADS=2 build/bench/output_loss ROWS WIDTH CLASSES [CHUNK...]
//   (GPT-2 124M, 4 x 256 tokens: 1024 768 50304 1024 256 128;
//    the 3+3 Transformer row: 2048 256 8000 1024)
#include "runtime/kernels/cpu/Kernels.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <sys/mman.h>
#include <vector>

using namespace tgc;

namespace {

/// `count` values on transparent huge pages, as a training program's arena
/// and state are (runtime/program/train/ModelState.cpp): with 4 KiB pages
/// the products over rows 200 KB apart miss the TLB, which the program's
/// step does not.
template <typename T> struct HugeBuffer {
  explicit HugeBuffer(int64_t count) {
    constexpr size_t kHugePage = size_t{2} << 20;
    size_t bytes = (count * sizeof(T) + kHugePage - 1) / kHugePage * kHugePage;
    values.reset(static_cast<T *>(std::aligned_alloc(kHugePage, bytes)));
    if (!values) {
      std::fprintf(stderr, "output_loss: cannot allocate %zu bytes\n", bytes);
      std::exit(1);
    }
    madvise(values.get(), bytes, MADV_HUGEPAGE);
    std::fill_n(values.get(), count, T{});
  }
  T *data() { return values.get(); }
  struct Free {
    void operator()(T *p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> values;
};

/// The fastest of 5 rounds of `calls` calls, per call, after one call.
template <typename Call> double milliseconds(Call &&call, int calls) {
  call();
  double best = 1e30;
  for (int round = 0; round < 5; ++round) {
    auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < calls; ++c)
      call();
    std::chrono::duration<double, std::milli> took =
        std::chrono::steady_clock::now() - t0;
    best = std::min(best, took.count() / calls);
  }
  return best;
}

template <typename T>
HugeBuffer<T> operand(const std::vector<float> &values) {
  HugeBuffer<T> out(static_cast<int64_t>(values.size()));
  for (size_t i = 0; i < values.size(); ++i) {
    if constexpr (std::is_same_v<T, float>)
      out.data()[i] = values[i];
    else
      out.data()[i] = runtime::roundToBf16(values[i]);
  }
  return out;
}

template <typename T>
void run(const char *precision, int64_t rows, int64_t width, int64_t classes,
         int64_t chunk, const std::vector<float> &hiddenValues,
         const std::vector<float> &weightValues,
         const std::vector<int32_t> &targets) {
  HugeBuffer<T> hidden = operand<T>(hiddenValues),
                weight = operand<T>(weightValues);
  HugeBuffer<float> hiddenGrad(rows * width), weightGrad(classes * width),
      workspace(std::min(chunk, rows) * classes);
  float loss = 0.0f;
  int32_t tokens = 0;
  double ms = milliseconds(
      [&] {
        cpu::outputLoss(hidden.data(), weight.data(), targets.data(), 1.0f,
                        &loss, &tokens, hiddenGrad.data(), weightGrad.data(),
                        workspace.data(), rows, width, classes, chunk, 0.1f,
                        -1);
      },
      rows * width * classes > (int64_t(1) << 34) ? 1 : 3);
  double gflop = 3 * 2.0 * rows * width * double(classes) / 1e9;
  std::printf("%-5s %6lld %6lld %7lld %6lld %10.2f %9.0f   loss %.4f\n",
              precision, (long long)rows, (long long)width,
              (long long)classes, (long long)chunk, ms, gflop / ms * 1e3,
              loss);
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s ROWS WIDTH CLASSES [CHUNK...]\n", argv[0]);
    return 2;
  }
  int64_t rows = std::atoll(argv[1]), width = std::atoll(argv[2]),
          classes = std::atoll(argv[3]);
  std::vector<int64_t> chunks;
  for (int i = 4; i < argc; ++i)
    chunks.push_back(std::atoll(argv[i]));
  if (chunks.empty())
    chunks.push_back(1024);
  if (rows <= 0 || width <= 0 || classes <= 0) {
    std::fprintf(stderr, "%s: ROWS, WIDTH and CLASSES must be positive\n",
                 argv[0]);
    return 2;
  }
  for (int64_t chunk : chunks)
    if (chunk <= 0) {
      std::fprintf(stderr, "%s: a chunk must be positive\n", argv[0]);
      return 2;
    }
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 0.5f);
  std::vector<float> hidden(rows * width), weight(classes * width);
  for (float &x : hidden)
    x = normal(rng);
  for (float &x : weight)
    x = 0.1f * normal(rng);
  std::uniform_int_distribution<int32_t> token(0, int32_t(classes - 1));
  std::vector<int32_t> targets(rows);
  for (int32_t &t : targets)
    t = token(rng);
  std::printf("kind    rows  width classes  chunk   ms/call   GFLOP/s\n");
  for (int64_t chunk : chunks)
    run<float>("f32", rows, width, classes, chunk, hidden, weight, targets);
  for (int64_t chunk : chunks)
    run<runtime::Bf16>("bf16", rows, width, classes, chunk, hidden, weight,
                       targets);
  return 0;
}
