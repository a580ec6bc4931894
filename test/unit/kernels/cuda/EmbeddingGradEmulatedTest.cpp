//===- EmbeddingGradEmulatedTest.cpp - the embedding gradient on the host -===//
//
// runtime/kernels/cuda/EmbeddingGradKernels.cuh's two passes run by
// KernelEmulator.h as Tensor.cu launches them, on rows sorted by id as its
// radix sort sorts them (stably), against cpu::embeddingGrad: from zeros,
// onto a base in another tensor and in place (tg.embedding_grad's addend).
// On a GPU, TensorTest.cpp checks the same through cuda::embeddingGrad.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cuda/KernelEmulator.h"

#include "runtime/kernels/cuda/EmbeddingGradKernels.cuh"
#include "test/unit/kernels/KernelTestCases.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>

namespace tgc::test {
namespace {

/// cuda::embeddingGrad's passes on the emulator, `out` holding the base.
void emulatedEmbeddingGrad(const std::vector<float> &grad,
                           const std::vector<int32_t> &ids,
                           std::vector<float> &out, int64_t width,
                           int64_t vocab) {
  const int64_t rows = static_cast<int64_t>(ids.size());
  std::vector<int32_t> rowOf(rows);
  std::iota(rowOf.begin(), rowOf.end(), 0);
  std::stable_sort(rowOf.begin(), rowOf.end(),
                   [&](int32_t a, int32_t b) { return ids[a] < ids[b]; });
  std::vector<int32_t> sortedIds(rows);
  for (int64_t r = 0; r < rows; ++r)
    sortedIds[r] = ids[rowOf[r]];
  const int64_t chunks =
      (rows + cuda::kEmbeddingChunk - 1) / cuda::kEmbeddingChunk;
  // Pieces no block writes would show as 7s.
  std::vector<float> head(chunks * width, 7.0f), tail(chunks * width, 7.0f);
  const dim3 grid(static_cast<unsigned>(chunks)), threads(cuda::kThreads);
  emulator::launch(grid, threads, 0, [&] {
    cuda::embeddingGradChunks(grad.data(), sortedIds.data(), rowOf.data(),
                              out.data(), head.data(), tail.data(), rows, width,
                              vocab);
  });
  emulator::launch(grid, threads, 0, [&] {
    cuda::embeddingGradRuns(sortedIds.data(), out.data(), head.data(),
                            tail.data(), rows, width, vocab);
  });
}

// The GPU test's cases: runs of ~50 rows (some crossing chunks), then runs
// of ~1600 rows crossing a dozen chunks (a batch's padding id), then 1 row;
// the last vocabulary rows are named by no id, and ids outside the
// vocabulary add nothing.
TEST(EmbeddingGradEmulated, SumsRowsOntoZerosOrABase) {
  struct Case {
    int64_t rows, vocab, width;
    int32_t largestId;
  };
  for (Case c :
       {Case{1000, 300, 23, 19}, Case{5000, 64, 5, 2}, Case{1, 8, 3, 1}}) {
    const std::string tag = " rows " + std::to_string(c.rows);
    std::vector<float> grad = uniform(c.rows * c.width, 14);
    std::vector<int32_t> ids = randomIds(c.rows, 15, 0, c.largestId);
    if (c.rows > 500) {
      ids[3] = -1;
      ids[500] = static_cast<int32_t>(c.vocab) + 7;
    }
    const size_t size = c.vocab * c.width;
    std::vector<float> expected(size, 7.0f);
    cpu::embeddingGrad(grad.data(), ids.data(), nullptr, expected.data(),
                       c.rows, c.width, c.vocab);
    std::vector<float> out(size, 0.0f); // cudaMemsetAsync's zeros
    emulatedEmbeddingGrad(grad, ids, out, c.width, c.vocab);
    expectClose("from zeros" + tag, out, expected, 1e-5);

    // The base as cudaMemcpyAsync copies it, or the sum made in place: the
    // same for the passes, which add each id's sum into its row once.
    std::vector<float> base = uniform(size, 16);
    std::vector<float> withBase(size, 7.0f);
    cpu::embeddingGrad(grad.data(), ids.data(), base.data(), withBase.data(),
                       c.rows, c.width, c.vocab);
    emulatedEmbeddingGrad(grad, ids, base, c.width, c.vocab);
    expectClose("onto a base" + tag, base, withBase, 1e-5);
  }
}

} // namespace
} // namespace tgc::test
