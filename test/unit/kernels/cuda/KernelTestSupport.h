//===- KernelTestSupport.h - helpers of the CUDA kernel tests ---*- C++ -*-===//
//
// The CUDA kernel tests (one file per op family of runtime/kernels/cuda)
// run every kernel of runtime/kernels/cuda/Kernels.h on random f32 inputs
// (fixed seeds, the cases of test/unit/kernels/KernelTestCases.h and more)
// and compare it with its twin in runtime/kernels/cpu/Kernels.h on the same
// values, itself tested against the interpreter (test/unit/kernels/cpu).
// Shapes are not multiples of the kernels' tiles (attention: 16 queries x
// 32 keys on the GPU, 16 x 64 on the CPU) and head sizes reach 128
// (attention's shared memory beyond 48 KiB).
//
// The error measure (test/unit/kernels/KernelTestSupport.h) takes the CPU's
// result as the expectation. Both sides round in float but sum in different
// orders, so the tolerances are about twice the CPU's against the
// reference; tolerance 0 means bit-exact (data movement, and sums both
// sides add in the same order). Dropout masks must be the same bits: the
// zeros fall in the same places.
//
// Without a usable GPU (none, no driver, a driver error) every test is
// skipped with CUDA's message (the CudaKernels fixture); the binary still
// builds and lists its tests.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TEST_UNIT_KERNELS_CUDA_KERNELTESTSUPPORT_H
#define TGC_TEST_UNIT_KERNELS_CUDA_KERNELTESTSUPPORT_H

#include "runtime/kernels/cpu/Kernels.h"
#include "runtime/kernels/cuda/Device.h"
#include "runtime/kernels/cuda/Kernels.h"
#include "test/unit/kernels/KernelTestCases.h"
#include "test/unit/kernels/KernelTestSupport.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace tgc::test {

/// Why the kernels cannot run here ("" when they can); asked once. Any
/// error counts: without a device or a driver, CUDA reports several.
inline const std::string &gpuProblem() {
  static const std::string problem = []() -> std::string {
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    if (status == cudaSuccess && count == 0)
      return "cudaGetDeviceCount found no device";
    if (status == cudaSuccess)
      status = cudaSetDevice(0);
    if (status == cudaSuccess)
      status = cudaFree(nullptr); // creates the context
    if (status != cudaSuccess)
      return std::string(cudaGetErrorName(status)) + ": " +
             cudaGetErrorString(status);
    return "";
  }();
  return problem;
}

/// The fixture of every CUDA kernel test: skips, saying why, without a
/// usable GPU; fails instead where TGC_REQUIRE_GPU is set (the GPU checks,
/// test/gpu/, set it: there a test that skipped would pass unrun). In a
/// named namespace, not an anonymous one: the TEST_Fs of all the test files
/// must share this one class (GoogleTest requires one fixture class per
/// test suite).
class CudaKernels : public ::testing::Test {
protected:
  void SetUp() override {
    if (gpuProblem().empty())
      return;
    if (const char *required = std::getenv("TGC_REQUIRE_GPU");
        required && *required && std::string(required) != "0")
      GTEST_FAIL() << "no usable GPU, and TGC_REQUIRE_GPU is set: "
                   << gpuProblem();
    GTEST_SKIP() << "no usable GPU: " << gpuProblem();
  }
  // Kernels record the first CUDA error instead of exiting: a test whose
  // calls failed must say so with CUDA's message.
  void TearDown() override {
    std::string why;
    EXPECT_FALSE(tgc::cuda::firstError(why)) << why;
  }
};

/// Device memory holding a copy of a host vector.
template <typename T> class DeviceArray {
public:
  explicit DeviceArray(const std::vector<T> &host) : count(host.size()) {
    TGC_CUDA_CHECK(cudaMalloc(&memory, bytes()));
    TGC_CUDA_CHECK(
        cudaMemcpy(memory, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  explicit DeviceArray(size_t count, T fill = T())
      : DeviceArray(std::vector<T>(count, fill)) {}
  ~DeviceArray() { cudaFree(memory); }
  DeviceArray(const DeviceArray &) = delete;
  DeviceArray &operator=(const DeviceArray &) = delete;

  T *get() const { return memory; }
  /// The contents, after the work queued before (the copy synchronizes
  /// with the legacy default stream the kernels use).
  std::vector<T> read() const {
    std::vector<T> host(count);
    TGC_CUDA_CHECK(
        cudaMemcpy(host.data(), memory, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }

private:
  size_t bytes() const { return count * sizeof(T); }
  T *memory = nullptr;
  size_t count;
};

/// Dropout's zeros (where the expectation has none otherwise) are the same
/// elements on both sides, and there are some.
inline void expectSameZeros(const std::string &what,
                            const std::vector<float> &actual,
                            const std::vector<float> &expected) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  int64_t zeros = 0, mismatches = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    zeros += expected[i] == 0.0f;
    mismatches += (actual[i] == 0.0f) != (expected[i] == 0.0f);
  }
  std::cout << "  " << what << ": " << zeros << " dropped of " << actual.size()
            << ", " << mismatches << " differ\n";
  EXPECT_EQ(mismatches, 0) << what;
  EXPECT_GT(zeros, 0) << what << ": nothing dropped";
}

/// A bf16 value's place on the number line: adjacent bf16 values are one
/// apart (both zeros at 0).
inline int32_t bf16Rank(runtime::Bf16 x) {
  int32_t magnitude = x.bits & 0x7fff;
  return x.bits & 0x8000 ? -magnitude : magnitude;
}

/// `got` is the f32 result `exact` rounded once to bf16, where a kernel that
/// writes bf16 may have summed in another order than the one that wrote
/// `exact` (cuBLAS picks its algorithm per result type): every element
/// within one bf16 step of roundToBf16(exact) and at least 99% of them equal
/// to it, bit for bit; not all zeros.
inline void expectRoundedOnce(const std::string &what,
                              const std::vector<runtime::Bf16> &got,
                              const std::vector<float> &exact) {
  ASSERT_EQ(got.size(), exact.size()) << what;
  int64_t differing = 0, beyondOneStep = 0, nonzero = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    int32_t distance =
        std::abs(bf16Rank(got[i]) - bf16Rank(runtime::roundToBf16(exact[i])));
    differing += distance != 0;
    beyondOneStep += distance > 1;
    nonzero += (got[i].bits & 0x7fff) != 0;
  }
  std::cout << "  " << what << ": " << differing << " of " << got.size()
            << " one bf16 step from the f32 result rounded\n";
  EXPECT_EQ(beyondOneStep, 0) << what;
  EXPECT_LE(differing, static_cast<int64_t>(got.size() / 100)) << what;
  EXPECT_GT(nonzero, 0) << what << " is all zeros";
}

} // namespace tgc::test

#endif // TGC_TEST_UNIT_KERNELS_CUDA_KERNELTESTSUPPORT_H
