// What the CPU attention kernels (runtime/kernels/cpu/Attention.cpp) cost on
// the bench rows' shapes: cpu::attention and cpu::attentionGrad without
// dropout, f32 operands, bf16 ones widened to f32 products, and bf16 ones
// with bf16 products (bf16_products), each the fastest of 5 rounds of 10
// calls; milliseconds per call and GFLOP/s (the four products of the
// forward and the five of the backward, 2 flops per multiply-add; the
// causal rows count every tile, as the kernels' rate is what is compared),
// in both layouts (head- and sequence-major).
// Built with the project (bench/CMakeLists.txt) as
// build/bench/attention_kernels.
// Run: OMP_WAIT_POLICY=passive OMP_NUM_THREADS=2 build/bench/attention_kernels
// [KIND]: with KIND (f32, bf16 or bf16-products), only that kind's rows.
#include "runtime/kernels/cpu/Kernels.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

using namespace tgc;

namespace {

struct Row {
  const char *name;
  runtime::AttentionShape shape;
  bool causal;
};

template <typename T>
std::vector<T> randomValues(int64_t n, std::mt19937 &rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<T> values(static_cast<size_t>(n));
  for (T &x : values) {
    if constexpr (sizeof(T) == 2)
      x = runtime::roundToBf16(normal(rng));
    else
      x = normal(rng);
  }
  return values;
}

template <typename T>
void timeRow(const Row &row, const char *type, bool bf16Products = false) {
  const runtime::AttentionShape &s = row.shape;
  std::mt19937 rng(1);
  int64_t heads = s.batch * s.heads;
  auto q = randomValues<T>(heads * s.queries * s.keyDim, rng);
  auto k = randomValues<T>(heads * s.keys * s.keyDim, rng);
  auto v = randomValues<T>(heads * s.keys * s.valueDim, rng);
  auto dout = randomValues<float>(heads * s.queries * s.valueDim, rng);
  std::vector<float> out(dout.size()), lse(static_cast<size_t>(heads * s.queries)),
      dq(q.size()), dk(k.size()), dv(v.size());
  runtime::AttentionConfig config;
  config.causal = row.causal;
  config.scale = 0.125f;
  config.bf16Products = bf16Products;
  // The fastest of 5 rounds of 10 calls, after one call: the machine may
  // be shared, and what another process takes is not the kernel's cost.
  auto seconds = [&](auto &&call) {
    call();
    double best = 1e30;
    for (int round = 0; round < 5; ++round) {
      auto start = std::chrono::steady_clock::now();
      const int repeats = 10;
      for (int i = 0; i < repeats; ++i)
        call();
      best = std::min(best, std::chrono::duration<double>(
                                std::chrono::steady_clock::now() - start)
                                    .count() /
                                repeats);
    }
    return best;
  };
  double forward = seconds([&] {
    cpu::attention(q.data(), k.data(), v.data(), out.data(), lse.data(), s, config);
  });
  double backward = seconds([&] {
    cpu::attentionGrad(dout.data(), q.data(), k.data(), v.data(), out.data(),
                       lse.data(), dq.data(), dk.data(), dv.data(), s, config);
  });
  double products = 2.0 * heads * s.queries * s.keys;
  double forwardFlops = products * (s.keyDim + s.valueDim);
  double backwardFlops = products * (2 * s.keyDim + 3 * s.valueDim);
  std::printf("%-28s %-23s forward %8.2f ms %6.1f GFLOP/s   backward %8.2f ms "
              "%6.1f GFLOP/s\n",
              row.name, type, forward * 1e3, forwardFlops / forward / 1e9,
              backward * 1e3, backwardFlops / backward / 1e9);
}

} // namespace

int main(int argc, char **argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  auto wanted = [&](const char *kind) { return only.empty() || only == kind; };
  const Row rows[] = {
      {"2L: 32 x 4 heads x 32, d 32", {32, 4, 32, 32, 32, 32}, false},
      {"3L: 64 x 4 heads x 32, d 64", {64, 4, 32, 32, 64, 64}, false},
      {"6L: 32 x 8 heads x 64, d 64", {32, 8, 64, 64, 64, 64}, false},
      {"6L causal", {32, 8, 64, 64, 64, 64}, true},
      {"long: 8 x 8 heads x 256", {8, 8, 256, 256, 64, 64}, false},
  };
  for (Row row : rows)
    for (bool sequenceMajor : {false, true}) {
      row.shape.sequenceMajor = sequenceMajor;
      if (wanted("f32"))
        timeRow<float>(row, sequenceMajor ? "f32 sequence-major" : "f32");
      if (wanted("bf16"))
        timeRow<runtime::Bf16>(row,
                               sequenceMajor ? "bf16 sequence-major" : "bf16");
      if (wanted("bf16-products"))
        timeRow<runtime::Bf16>(
            row, sequenceMajor ? "bf16-products seq-major" : "bf16-products",
            true);
    }
}
