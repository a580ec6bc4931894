//===- KernelEmulator.h - CUDA kernels run on the host ---------*- C++ -*-===//
//
// Runs a CUDA kernel's source on the host, so that kernels can be checked
// against the CPU kernels where no GPU is (every CI machine). A block's CUDA
// threads are fibers (ucontext) of the one host thread, run in turn from
// one barrier to the next; blocks run one at a time. OS threads, one per
// CUDA thread, made a barrier of 256 threads on 2 cores cost more than the
// kernels' work (the tests took minutes). What the kernels use of CUDA is
// emulated with the semantics the PTX ISA gives it:
//   - threadIdx, blockIdx, blockDim, gridDim: per thread and per launch;
//   - __syncthreads: a barrier of the block's threads; __syncthreads_or
//     one that also tells each thread whether any voted true;
//   - __shfl_xor_sync: the lanes of its mask (the warp's 32, or a group of
//     them whose rows end apart) exchange through a slot each, between two
//     barriers of those lanes; a lane outside the mask, or a partner
//     outside it, stops the test with a message;
//   - mma.m16n8k16 (TensorCoreTiles.cuh's tiles::mma): the warp's lanes
//     hand in their fragments, and each lane computes its four results
//     from the 16 x 16 and 16 x 8 tiles they make, in f32 (bf16 products
//     are exact in f32; the sum's order is not the tensor cores');
//   - __shared__ variables: static (one block runs at a time), and
//     TGC_DYNAMIC_SHARED_MEMORY a buffer filled with 0xCD before each block
//     (so a read of what no thread wrote shows);
//   - atomicAdd: std::atomic_ref; __threadfence: a sequentially consistent
//     fence.
// The threads run in turn in one order, then in the other: blocks of even
// and odd numbers take opposite orders for the same stretch between
// barriers, so that a read of another thread's write with no barrier
// between shows in one of them, whichever thread comes first. A barrier
// that can never complete stops the test with a message instead of
// hanging. A CUDA thread's stack is 256 KiB, with 64 KiB of guard below.
// Under AddressSanitizer (the sanitizer build's tests) every switch between
// fibers is announced to it, and the dynamic shared memory's bytes outside
// what the launch asked for are poisoned: a kernel reading past its tensors,
// its static or its dynamic shared memory is reported there.
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
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include <sys/mman.h>
#include <ucontext.h>

#if defined(__SANITIZE_ADDRESS__)
#define TGC_EMULATOR_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TGC_EMULATOR_ASAN 1
#endif
#endif
#ifdef TGC_EMULATOR_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace tgc::emulator {

/// Tells AddressSanitizer that the running code moves to the stack at
/// [bottom, bottom + size), before the switch; `save` keeps the leaving
/// stack's fake frames (null: the leaving fiber has ended).
inline void startSwitch(void **save, const void *bottom, size_t size) {
#ifdef TGC_EMULATOR_ASAN
  __sanitizer_start_switch_fiber(save, bottom, size);
#else
  (void)save, (void)bottom, (void)size;
#endif
}

/// After a switch, on the new stack: AddressSanitizer learns it has arrived
/// (and, where asked, the stack it came from).
inline void finishSwitch(void *save, const void **fromBottom = nullptr,
                         size_t *fromSize = nullptr) {
#ifdef TGC_EMULATOR_ASAN
  __sanitizer_finish_switch_fiber(save, fromBottom, fromSize);
#else
  (void)save, (void)fromBottom, (void)fromSize;
#endif
}

struct Index {
  unsigned x = 0, y = 0, z = 0;
};

// The running CUDA thread's place: the scheduler sets them before it
// resumes a fiber.
inline Index threadIndex, blockIndex;
/// The thread's place in its block, x fastest: what its warp is.
inline unsigned linearThread = 0;
inline Index blockSize, gridSize;

/// A barrier of fibers: the last to arrive opens it and runs on; the others
/// yield until it is open.
struct Barrier {
  unsigned expected = 0, arrived = 0, generation = 0;
};

/// A warp's meeting point: a barrier of its 32 lanes and a slot each.
struct Warp {
  Barrier barrier{32};
  /// The barriers of lane groups (masks other than the whole warp's).
  std::map<unsigned, Barrier> groupBarriers;
  std::array<std::array<uint32_t, 12>, 32> slots{};

  Barrier &barrierOf(unsigned mask) {
    if (mask == 0xffffffffu)
      return barrier;
    return groupBarriers
        .try_emplace(mask, Barrier{static_cast<unsigned>(std::popcount(mask))})
        .first->second;
  }
};

/// A CUDA thread's stack: mapped once, reused by every launch, PROT_NONE
/// pages below it so that an overflow faults (the stacks lie side by side).
class FiberStack {
public:
  static constexpr size_t kBytes = 256 << 10, kGuard = 64 << 10;
  FiberStack() {
    void *mapped = ::mmap(nullptr, kBytes + kGuard, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) {
      std::perror("emulator: mapping a CUDA thread's stack");
      std::abort();
    }
    base = static_cast<char *>(mapped);
    if (::mprotect(mapped, kGuard, PROT_NONE) != 0) {
      std::perror("emulator: protecting a CUDA thread's stack guard");
      std::abort();
    }
  }
  ~FiberStack() { ::munmap(base, kBytes + kGuard); }
  FiberStack(const FiberStack &) = delete;
  FiberStack &operator=(const FiberStack &) = delete;
  char *bottom() const { return base + kGuard; }

private:
  char *base = nullptr;
};

/// One CUDA thread of the block running now.
struct Fiber {
  ucontext_t context;
  Index thread;
  bool finished = false;
};

/// The block running now: its fibers, barriers and the host thread's own
/// context, to which a fiber yields.
struct Block {
  Block(unsigned threads, void (*run)(void *), void *kernel)
      : barrier{threads}, warps(threads / 32), fibers(threads), run(run),
        kernel(kernel) {
    for (auto &warp : warps)
      warp = std::make_unique<Warp>();
  }
  Barrier barrier;
  std::vector<std::unique_ptr<Warp>> warps;
  std::vector<Fiber> fibers;
  ucontext_t scheduler;
  /// The scheduler's stack (the host thread's), for startSwitch.
  const void *schedulerStack = nullptr;
  size_t schedulerStackSize = 0;
  unsigned current = 0;
  /// Barriers passed and threads ended: a round of the scheduler without
  /// any is a deadlock.
  uint64_t progress = 0;
  /// __syncthreads_or's votes.
  bool anyVote = false;
  void (*run)(void *);
  void *kernel;
};
inline Block *currentBlock = nullptr;
inline std::vector<unsigned char> dynamicSharedBuffer;

inline std::vector<std::unique_ptr<FiberStack>> &fiberStacks() {
  static std::vector<std::unique_ptr<FiberStack>> stacks;
  return stacks;
}

inline Warp &currentWarp() { return *currentBlock->warps[linearThread / 32]; }
inline int currentLane() { return static_cast<int>(linearThread % 32); }

inline unsigned char *dynamicShared() {
  const uintptr_t address =
      reinterpret_cast<uintptr_t>(dynamicSharedBuffer.data());
  return dynamicSharedBuffer.data() + (128 - address % 128) % 128;
}

/// A block's dynamic shared memory: `bytes`, 128-byte aligned, each 0xCD;
/// under AddressSanitizer the buffer's bytes around them are poisoned.
inline void resetDynamicShared(size_t bytes) {
#ifdef TGC_EMULATOR_ASAN
  ASAN_UNPOISON_MEMORY_REGION(dynamicSharedBuffer.data(),
                              dynamicSharedBuffer.size());
#endif
  dynamicSharedBuffer.assign(bytes + 128, 0xCD);
#ifdef TGC_EMULATOR_ASAN
  unsigned char *begin = dynamicSharedBuffer.data(), *start = dynamicShared(),
                *end = begin + dynamicSharedBuffer.size();
  ASAN_POISON_MEMORY_REGION(begin, start - begin);
  ASAN_POISON_MEMORY_REGION(start + bytes, end - (start + bytes));
#endif
}

/// Hands the host thread back to the scheduler until it resumes this fiber.
inline void yield() {
  Block &block = *currentBlock;
  void *save = nullptr;
  startSwitch(&save, block.schedulerStack, block.schedulerStackSize);
  ::swapcontext(&block.fibers[block.current].context, &block.scheduler);
  finishSwitch(save);
}

inline void arriveAndWait(Barrier &barrier) {
  Block &block = *currentBlock;
  ++block.progress;
  if (++barrier.arrived == barrier.expected) {
    barrier.arrived = 0;
    ++barrier.generation;
    return;
  }
  const unsigned generation = barrier.generation;
  while (barrier.generation == generation)
    yield();
}

/// A fiber's first frame: the kernel, then back to the scheduler (uc_link).
inline void fiberMain() {
  Block &block = *currentBlock;
  finishSwitch(nullptr, &block.schedulerStack, &block.schedulerStackSize);
  block.run(block.kernel);
  block.fibers[block.current].finished = true;
  ++block.progress;
  startSwitch(nullptr, block.schedulerStack, block.schedulerStackSize);
}

/// Runs the block's fibers in turn until every one has ended: ascending
/// and descending by turns, the even blocks starting ascending.
inline void runBlock(Block &block, bool startDescending) {
  const unsigned threads = static_cast<unsigned>(block.fibers.size());
  unsigned finished = 0;
  for (bool descending = startDescending; finished < threads;
       descending = !descending) {
    const uint64_t before = block.progress;
    finished = 0;
    for (unsigned i = 0; i < threads; ++i) {
      const unsigned t = descending ? threads - 1 - i : i;
      Fiber &fiber = block.fibers[t];
      if (fiber.finished) {
        ++finished;
        continue;
      }
      block.current = t;
      linearThread = t;
      threadIndex = fiber.thread;
      void *save = nullptr;
      startSwitch(&save, fiber.context.uc_stack.ss_sp,
                  fiber.context.uc_stack.ss_size);
      ::swapcontext(&block.scheduler, &fiber.context);
      finishSwitch(save);
      finished += fiber.finished;
    }
    if (finished < threads && block.progress == before) {
      std::fprintf(stderr,
                   "emulator: block (%u, %u, %u) deadlocked: %u of its %u "
                   "threads wait at barriers the others ended without or "
                   "wait at another one\n",
                   blockIndex.x, blockIndex.y, blockIndex.z,
                   threads - finished, threads);
      std::abort();
    }
  }
}

/// Makes `fiber` start in fiberMain on `stack` and end back in `scheduler`.
/// Its own function: getcontext returns like setjmp, and the launch loop's
/// variables must not live across it.
inline void prepareFiber(Fiber &fiber, Index thread, FiberStack &stack,
                         ucontext_t &scheduler) {
  fiber.thread = thread;
  ::getcontext(&fiber.context);
  fiber.context.uc_stack.ss_sp = stack.bottom();
  fiber.context.uc_stack.ss_size = FiberStack::kBytes;
  fiber.context.uc_link = &scheduler;
  ::makecontext(&fiber.context, fiberMain, 0);
}

/// Runs kernel() as every thread of every block of `grid` (x fastest), one
/// block at a time; a block's threads a multiple of 32.
template <typename Kernel>
void launch(dim3 grid, dim3 block, size_t sharedBytes, Kernel kernel) {
  const unsigned threads = block.x * block.y * block.z;
  gridSize = {grid.x, grid.y, grid.z};
  blockSize = {block.x, block.y, block.z};
  auto &stacks = fiberStacks();
  while (stacks.size() < threads)
    stacks.push_back(std::make_unique<FiberStack>());
  void (*run)(void *) = [](void *object) { (*static_cast<Kernel *>(object))(); };
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        resetDynamicShared(sharedBytes);
        Block running(threads, run, &kernel);
        currentBlock = &running;
        blockIndex = {x, y, z};
        for (unsigned t = 0; t < threads; ++t)
          prepareFiber(running.fibers[t],
                       {t % block.x, t / block.x % block.y,
                        t / (block.x * block.y)},
                       *stacks[t], running.scheduler);
        runBlock(running, (x + y + z) % 2 == 1);
        currentBlock = nullptr;
      }
}

/// A launcher for kernels' host sides written against one
/// (`launch(kernel, blocks, arguments...)`, GatherKernels.cuh): runs the
/// kernel here on `blocks` blocks of `threads`, and keeps what it ran.
struct HostLaunch {
  unsigned threads = 0;
  /// Every kernel it ran, in order.
  std::vector<const void *> *ran = nullptr;

  template <typename... Parameters, typename... Arguments>
  void operator()(void (*kernel)(Parameters...), unsigned blocks,
                  Arguments... arguments) const {
    if (ran)
      ran->push_back(reinterpret_cast<const void *>(kernel));
    launch(dim3(blocks), dim3(threads), 0, [&] { kernel(arguments...); });
  }
};

/// What each lane of the warp put in its slot, after every lane did.
/// The lanes of `mask` (this lane among them) exchange as one.
template <typename Fill, typename Read>
void exchange(Fill fill, Read read, unsigned mask = 0xffffffffu) {
  if (!(mask >> currentLane() & 1u)) {
    std::fprintf(stderr,
                 "emulator: lane %d of block (%u, %u, %u) exchanges with "
                 "mask 0x%08x, which leaves it out\n",
                 currentLane(), blockIndex.x, blockIndex.y, blockIndex.z, mask);
    std::abort();
  }
  Warp &warp = currentWarp();
  Barrier &barrier = warp.barrierOf(mask);
  fill(warp.slots[currentLane()]);
  arriveAndWait(barrier);
  read(warp.slots);
  arriveAndWait(barrier);
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
  tgc::emulator::arriveAndWait(tgc::emulator::currentBlock->barrier);
}

/// A barrier that also tells every thread whether any passed a nonzero
/// predicate. The votes are cleared by thread 0 between two more barriers,
/// before any thread can vote again.
inline int __syncthreads_or(int predicate) {
  auto &block = *tgc::emulator::currentBlock;
  if (predicate)
    block.anyVote = true;
  __syncthreads();
  const int any = block.anyVote;
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0)
    block.anyVote = false;
  __syncthreads();
  return any;
}

template <typename T>
T __shfl_xor_sync(unsigned mask, T value, int laneMask, int = 32) {
  static_assert(sizeof(T) <= 8, "a slot holds 8 bytes");
  const int partner = tgc::emulator::currentLane() ^ laneMask;
  if (!(mask >> partner & 1u)) {
    std::fprintf(stderr,
                 "emulator: __shfl_xor_sync of lane %d reads lane %d, "
                 "outside its mask 0x%08x\n",
                 tgc::emulator::currentLane(), partner, mask);
    std::abort();
  }
  T result;
  tgc::emulator::exchange(
      [&](auto &slot) { std::memcpy(slot.data(), &value, sizeof value); },
      [&](const auto &slots) {
        std::memcpy(&result, slots[partner].data(), sizeof result);
      },
      mask);
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
