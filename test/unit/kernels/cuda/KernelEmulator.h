//===- KernelEmulator.h - CUDA kernels run on the host ---------*- C++ -*-===//
//
// Runs a CUDA kernel's source on the host with one std::thread per CUDA
// thread, one block at a time, so that kernels can be checked against the
// CPU kernels where no GPU is (every CI machine). What the kernels use of
// CUDA is emulated with the semantics the PTX ISA gives it:
//   - threadIdx, blockIdx, blockDim, gridDim: per thread and per launch;
//   - __syncthreads: a barrier of the block's threads;
//   - __shfl_xor_sync: the 32 lanes of a warp exchange through a slot each,
//     between two barriers of the warp;
//   - mma.m16n8k16 (TensorCoreTiles.cuh's tiles::mma): the warp's lanes
//     hand in their fragments, and each lane computes its four results
//     from the 16 x 16 and 16 x 8 tiles they make, in f32 (bf16 products
//     are exact in f32; the sum's order is not the tensor cores');
//   - __shared__ variables: static (one block runs at a time), and
//     TGC_DYNAMIC_SHARED_MEMORY a buffer filled with 0xCD before each block
//     (so a read of what no thread wrote shows);
//   - atomicAdd: std::atomic_ref; __threadfence: a sequentially consistent
//     fence.
// Include this header before any kernel source, after the CUDA runtime's
// headers (which it includes first); a test source that includes it must
// not also include headers compiled for the device.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TEST_UNIT_KERNELS_CUDA_KERNELEMULATOR_H
#define TGC_TEST_UNIT_KERNELS_CUDA_KERNELEMULATOR_H

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <barrier>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace tgc::emulator {

struct Index {
  unsigned x = 0, y = 0, z = 0;
};

inline thread_local Index threadIndex, blockIndex;
/// The thread's place in its block, x fastest: what its warp is.
inline thread_local unsigned linearThread = 0;
inline Index blockSize, gridSize;

/// A warp's meeting point: a barrier of its 32 lanes and a slot each.
struct Warp {
  std::barrier<> barrier{32};
  std::array<std::array<uint32_t, 12>, 32> slots{};
};

/// The block running now: its barrier, its warps, its dynamic shared memory.
struct Block {
  explicit Block(unsigned threads) : barrier(threads), warps(threads / 32) {
    for (auto &warp : warps)
      warp = std::make_unique<Warp>();
  }
  std::barrier<> barrier;
  std::vector<std::unique_ptr<Warp>> warps;
};
inline Block *currentBlock = nullptr;
inline std::vector<unsigned char> dynamicSharedBuffer;

inline Warp &currentWarp() { return *currentBlock->warps[linearThread / 32]; }
inline int currentLane() { return static_cast<int>(linearThread % 32); }

inline unsigned char *dynamicShared() {
  const uintptr_t address =
      reinterpret_cast<uintptr_t>(dynamicSharedBuffer.data());
  return dynamicSharedBuffer.data() + (128 - address % 128) % 128;
}

/// Runs kernel() as every thread of every block of `grid` (x fastest), one
/// block at a time; a block's threads a multiple of 32.
template <typename Kernel>
void launch(dim3 grid, dim3 block, size_t sharedBytes, Kernel kernel) {
  const unsigned threads = block.x * block.y * block.z;
  gridSize = {grid.x, grid.y, grid.z};
  blockSize = {block.x, block.y, block.z};
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        dynamicSharedBuffer.assign(sharedBytes + 128, 0xCD);
        Block running(threads);
        currentBlock = &running;
        std::vector<std::thread> lanes;
        lanes.reserve(threads);
        for (unsigned t = 0; t < threads; ++t)
          lanes.emplace_back([&, t] {
            linearThread = t;
            threadIndex = {t % block.x, t / block.x % block.y,
                           t / (block.x * block.y)};
            blockIndex = {x, y, z};
            kernel();
          });
        for (std::thread &lane : lanes)
          lane.join();
        currentBlock = nullptr;
      }
}

/// What each lane of the warp put in its slot, after every lane did.
template <typename Fill, typename Read> void exchange(Fill fill, Read read) {
  Warp &warp = currentWarp();
  fill(warp.slots[currentLane()]);
  warp.barrier.arrive_and_wait();
  read(warp.slots);
  warp.barrier.arrive_and_wait();
}

} // namespace tgc::emulator

#undef __global__
#undef __device__
#undef __host__
#undef __shared__
#undef __launch_bounds__
#undef __align__
#undef __forceinline__
#define __global__
#define __device__
#define __host__
#define __shared__ static
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
#define __forceinline__ inline
#define TGC_DYNAMIC_SHARED_MEMORY(name)                                        \
  unsigned char *name = ::tgc::emulator::dynamicShared()

#define threadIdx ::tgc::emulator::threadIndex
#define blockIdx ::tgc::emulator::blockIndex
#define blockDim ::tgc::emulator::blockSize
#define gridDim ::tgc::emulator::gridSize

inline void __syncthreads() {
  tgc::emulator::currentBlock->barrier.arrive_and_wait();
}

template <typename T>
T __shfl_xor_sync(unsigned, T value, int laneMask, int = 32) {
  static_assert(sizeof(T) <= 8, "a slot holds 8 bytes");
  T result;
  tgc::emulator::exchange(
      [&](auto &slot) { std::memcpy(slot.data(), &value, sizeof value); },
      [&](const auto &slots) {
        std::memcpy(&result,
                    slots[tgc::emulator::currentLane() ^ laneMask].data(),
                    sizeof result);
      });
  return result;
}

// CUDA's min and max of integers and floats, as device code calls them.
using std::max;
using std::min;

/// Round-to-nearest f32 arithmetic that the compiler may not fuse.
inline float __fadd_rn(float a, float b) {
  volatile float sum = a + b;
  return sum;
}
inline float __fmul_rn(float a, float b) {
  volatile float product = a * b;
  return product;
}

inline float atomicAdd(float *address, float value) {
  return std::atomic_ref<float>(*address).fetch_add(value);
}
inline unsigned atomicAdd(unsigned *address, unsigned value) {
  return std::atomic_ref<unsigned>(*address).fetch_add(value);
}

inline void __threadfence() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

/// A load that bypasses L1: an ordinary load here, after the fences.
template <typename T> T __ldcg(const T *address) { return *address; }

#endif // TGC_TEST_UNIT_KERNELS_CUDA_KERNELEMULATOR_H
