//===- KernelEmulatorTest.cpp - the host's emulation of CUDA threads -------===//
//
// KernelEmulator.h is the oracle's ground for every *Emulated test: its
// barriers order shared memory as a GPU's do (and a missing one shows),
// its warp shuffles hand each lane its partner's value, every thread of
// every block runs once with its own indices, and a kernel whose threads
// cannot all reach a barrier stops the test with a message rather than
// hanging it.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cuda/KernelEmulator.h"

#include "runtime/kernels/cuda/BlockReduce.cuh"

#include <gtest/gtest.h>

#include <vector>

namespace tgc::test {
namespace {

TEST(KernelEmulator, EveryThreadOfEveryBlockRunsOnceWithItsIndices) {
  const dim3 grid(3, 2), block(32, 2, 2);
  std::vector<int> runs(3 * 2 * 128, 0);
  emulator::launch(grid, block, 0, [&] {
    const unsigned thread =
        threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const unsigned blockNumber = blockIdx.x + gridDim.x * blockIdx.y;
    ++runs[blockNumber * 128 + thread];
  });
  for (size_t i = 0; i < runs.size(); ++i)
    EXPECT_EQ(runs[i], 1) << i;
}

TEST(KernelEmulator, SyncthreadsOrdersSharedMemory) {
  constexpr unsigned kThreads = 256;
  std::vector<unsigned> sums(4, 0);
  emulator::launch(dim3(4), dim3(kThreads), 0, [&] {
    __shared__ unsigned values[kThreads];
    __shared__ unsigned total;
    values[threadIdx.x] = threadIdx.x + blockIdx.x;
    if (threadIdx.x == 0)
      total = 0;
    __syncthreads(); // every value written before any is read
    if (threadIdx.x == 0) {
      for (unsigned v : values)
        total += v;
    }
    __syncthreads(); // the total written before any thread reads it
    values[threadIdx.x] = total;
    __syncthreads();
    if (threadIdx.x == kThreads - 1)
      sums[blockIdx.x] = values[0];
  });
  for (unsigned b = 0; b < 4; ++b)
    EXPECT_EQ(sums[b], kThreads * (kThreads - 1) / 2 + kThreads * b) << b;
}

TEST(KernelEmulator, ShuffleXorReadsThePartnerLane) {
  std::vector<float> got(64);
  emulator::launch(dim3(1), dim3(64), 0, [&] {
    const float mine = static_cast<float>(threadIdx.x);
    float partner = __shfl_xor_sync(0xffffffffu, mine, 5);
    // A warp sum by halving, as the kernels' reductions do.
    float sum = mine;
    for (int mask = 16; mask > 0; mask /= 2)
      sum += __shfl_xor_sync(0xffffffffu, sum, mask);
    got[threadIdx.x] = partner + 1000.0f * sum;
  });
  for (unsigned t = 0; t < 64; ++t) {
    const unsigned warpBase = t / 32 * 32;
    const float warpSum = 32.0f * warpBase + 31.0f * 32.0f / 2.0f;
    EXPECT_EQ(got[t], static_cast<float>(t ^ 5u) + 1000.0f * warpSum) << t;
  }
}

/// Each thread writes its slot of dynamic shared memory, then reads its
/// partner's (t ^ 1: the one after it for even t, before it for odd t),
/// with or without a barrier between; what two blocks read.
std::vector<unsigned> partnersRead(bool barrier) {
  constexpr unsigned kThreads = 64;
  std::vector<unsigned> read(2 * kThreads);
  emulator::launch(dim3(2), dim3(kThreads), kThreads * sizeof(unsigned), [&] {
    TGC_DYNAMIC_SHARED_MEMORY(bytes);
    unsigned *slots = reinterpret_cast<unsigned *>(bytes);
    slots[threadIdx.x] = threadIdx.x + 1;
    if (barrier)
      __syncthreads();
    read[blockIdx.x * kThreads + threadIdx.x] = slots[threadIdx.x ^ 1];
  });
  return read;
}

TEST(KernelEmulator, AMissingBarrierShowsWhicheverThreadComesFirst) {
  const std::vector<unsigned> synced = partnersRead(true);
  for (unsigned i = 0; i < synced.size(); ++i)
    EXPECT_EQ(synced[i], (i % 64 ^ 1) + 1) << i;
  // Without the barrier, a read of the next thread's slot sees garbage in
  // one block and a read of the previous one's in the other.
  const std::vector<unsigned> racy = partnersRead(false);
  bool staleAfter = false, staleBefore = false;
  for (unsigned i = 0; i < racy.size(); ++i)
    if (racy[i] != (i % 64 ^ 1) + 1)
      (i % 2 == 0 ? staleAfter : staleBefore) = true;
  EXPECT_TRUE(staleAfter);
  EXPECT_TRUE(staleBefore);
}

// Half warps with rows of their own (laneGroupReduce's masks): the second
// half leaves the loop a row before the first, whose last row's shuffles
// wait for its own 16 lanes only.
TEST(KernelEmulator, LaneGroupsExchangeWithinTheirMasks) {
  std::vector<float> sums(3, -1.0f);
  emulator::launch(dim3(1), dim3(32), 0, [&] {
    for (int64_t r = threadIdx.x / 16; r < 3; r += 2) {
      const float sum = cuda::laneGroupReduce<16>(
          static_cast<float>(threadIdx.x % 16 + 100 * r), cuda::SumOp{});
      if (threadIdx.x % 16 == 0)
        sums[r] = sum;
    }
  });
  EXPECT_EQ(sums, std::vector<float>({120.0f, 1720.0f, 3320.0f}));
}

TEST(KernelEmulatorDeathTest, AShuffleOutsideItsMaskStopsTheTest) {
  EXPECT_DEATH(emulator::launch(dim3(1), dim3(32), 0,
                                [] {
                                  if (threadIdx.x < 16)
                                    (void)__shfl_xor_sync(0xffffu, 1.0f, 16);
                                }),
               "lane 0 reads lane 16, outside its mask 0x0000ffff");
}

TEST(KernelEmulatorDeathTest, ABarrierSomeThreadsEndedBeforeStopsTheTest) {
  EXPECT_DEATH(emulator::launch(dim3(1), dim3(64), 0,
                                [] {
                                  if (threadIdx.x == 3)
                                    return;
                                  __syncthreads();
                                }),
               "block \\(0, 0, 0\\) deadlocked: 63 of its 64 threads wait");
}

TEST(KernelEmulator, DynamicSharedMemoryIsAlignedAndStartsAsGarbage) {
  // 0xCD, not zeros, before each block: a read of what no thread wrote
  // shows in the results; written by one block, garbage again in the next.
  std::vector<int> unwritten(2, 0);
  std::vector<uintptr_t> misaligned(2, 1);
  emulator::launch(dim3(2), dim3(32), 100, [&] {
    TGC_DYNAMIC_SHARED_MEMORY(shared);
    if (threadIdx.x == 0) {
      misaligned[blockIdx.x] = reinterpret_cast<uintptr_t>(shared) % 128;
      for (int i = 0; i < 100; ++i)
        unwritten[blockIdx.x] += shared[i] == 0xCD;
      std::memset(shared, 0, 100);
    }
  });
  EXPECT_EQ(unwritten, std::vector<int>({100, 100}));
  EXPECT_EQ(misaligned, std::vector<uintptr_t>({0, 0}));
}

#ifdef TGC_EMULATOR_ASAN
// Under AddressSanitizer (the sanitizer build), a kernel's reads past what
// it was given are reported, so that the *Emulated tests check the kernels'
// bounds too: past a tensor, and past the dynamic shared memory the launch
// asked for (the emulator's buffer has alignment slack around it).

TEST(KernelEmulatorDeathTest, AReadPastATensorIsReported) {
  std::vector<float> tensor(64, 1.0f);
  float *data = tensor.data();
  volatile float sink = 0.0f;
  EXPECT_DEATH(emulator::launch(dim3(1), dim3(64), 0,
                                [&] { sink = data[threadIdx.x + 1]; }),
               "heap-buffer-overflow");
}

TEST(KernelEmulatorDeathTest, AReadPastTheDynamicSharedMemoryIsReported) {
  volatile unsigned char sink = 0;
  auto readAt = [&](size_t offset) {
    emulator::launch(dim3(2), dim3(32), 100, [&] {
      TGC_DYNAMIC_SHARED_MEMORY(shared);
      if (threadIdx.x == 0)
        sink = shared[offset];
    });
  };
  readAt(99); // the last byte asked for
  EXPECT_DEATH(readAt(100), "use-after-poison");
}
#endif

} // namespace
} // namespace tgc::test
