//===- ReusedBuffer.h - kernel working memory kept across calls ---*- C++ -*-===//
//
// The CPU kernels' small working arrays (per-thread partial sums, Adam's
// chunk list, a reduction's accumulators) would otherwise be allocated on
// every call, hundreds of times a step. reusedBuffer gives the calling
// thread a vector that keeps its capacity from one call to the next, so the
// steady state allocates nothing.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_RUNTIME_KERNELS_CPU_REUSEDBUFFER_H
#define TGC_RUNTIME_KERNELS_CPU_REUSEDBUFFER_H

#include <cstddef>
#include <vector>

namespace tgc::cpu {

/// The calling thread's vector for call site `Tag`, holding `size` copies of
/// `value`. Each call site names its own Tag type, so two buffers in use at
/// once never alias; the vector is valid until the same thread's next call
/// with that Tag. OpenMP workers may write to it through the caller's
/// reference.
template <typename Tag, typename T>
std::vector<T> &reusedBuffer(size_t size, const T &value) {
  thread_local std::vector<T> buffer;
  buffer.assign(size, value);
  return buffer;
}

/// As reusedBuffer, for a buffer the caller writes whole before reading
/// (a rounded or widened copy, a product): at least `size` elements whose
/// values are left as they were, so a large buffer is not filled in vain on
/// every call.
template <typename Tag, typename T> T *reusedScratch(size_t size) {
  thread_local std::vector<T> buffer;
  if (buffer.size() < size)
    buffer.resize(size);
  return buffer.data();
}

} // namespace tgc::cpu

#endif // TGC_RUNTIME_KERNELS_CPU_REUSEDBUFFER_H
