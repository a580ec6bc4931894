// What the optimizer step's global norm and controls cost against plain
// Adam: cpu::adamUpdate and cpu::optimizerStep (phase 0, clipping on) over
// tensors of the base Transformer's sizes (6 encoder and 6 decoder layers of
// the paper's shapes and the shared 37000 x 512 embedding: 63M floats in 181
// tensors), each timed over 10 updates; milliseconds per update.
// Built with the project (bench/CMakeLists.txt) as build/bench/optimizer_step.
#include "runtime/kernels/cpu/Kernels.h"

#include <chrono>
#include <cstdio>
#include <vector>

int main() {
  std::vector<int64_t> sizes = {37000 * 512};
  for (int layer = 0; layer < 6; ++layer) {
    for (int i = 0; i < 4; ++i) // encoder self-attention
      sizes.push_back(512 * 512);
    sizes.insert(sizes.end(), {512 * 2048, 2048, 2048 * 512, 512, 512, 512, 512, 512});
    for (int i = 0; i < 8; ++i) // decoder self- and cross-attention
      sizes.push_back(512 * 512);
    sizes.insert(sizes.end(), {512 * 2048, 2048, 2048 * 512, 512, 512, 512, 512, 512, 512, 512});
  }
  int64_t total = 0;
  std::vector<std::vector<float>> p, m, v, g;
  std::vector<tgc::runtime::AdamTensor> tensors;
  for (int64_t n : sizes) {
    p.emplace_back(n, 0.01f);
    m.emplace_back(n, 0.0f);
    v.emplace_back(n, 0.0f);
    g.emplace_back(n, 0.001f);
    total += n;
  }
  for (size_t i = 0; i < sizes.size(); ++i)
    tensors.push_back({p[i].data(), m[i].data(), v[i].data(), g[i].data(), sizes[i]});
  auto time = [&](auto &&update) {
    update(1); // first touch
    auto start = std::chrono::steady_clock::now();
    const int repeats = 10;
    for (int step = 2; step < 2 + repeats; ++step)
      update(step);
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now() - start).count() / repeats;
  };
  const int count = static_cast<int>(tensors.size());
  double adam = time([&](int step) {
    tgc::cpu::adamUpdate(tensors.data(), count, 1e-4f, step, 0.9f, 0.98f, 1e-9f);
  });
  tgc::runtime::OptimizerControl control{1.0f, tgc::runtime::kUpdate, 1.0f};
  double optimizer = time([&](int step) {
    tgc::cpu::optimizerStep(tensors.data(), count, control, 1e-4f, step, 0.9f,
                            0.98f, 1e-9f);
  });
  std::printf("%lld parameters in %d tensors: adamUpdate %.1f ms, "
              "optimizerStep (norm + clip) %.1f ms, +%.1f ms per update\n",
              static_cast<long long>(total), count, adam, optimizer,
              optimizer - adam);
}
