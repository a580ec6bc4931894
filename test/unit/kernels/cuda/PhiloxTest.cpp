//===- PhiloxTest.cpp - CUDA dropout bits against the CPU -----------------===//
//
// runtime/kernels/Philox.h evaluated on the device (DropoutProbe.cu)
// against the host: the dropout factors every CUDA kernel draws. Helpers:
// KernelTestSupport.h.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cuda/KernelTestSupport.h"
#include "test/unit/kernels/cuda/DropoutProbe.h"

namespace tgc::test {
namespace {

// The device's Philox stream is the host's, bit for bit, including indices
// past 2^32 (the counter's second word).
TEST_F(CudaKernels, DropoutStream) {
  for (uint64_t first : {uint64_t{0}, (uint64_t{1} << 32) - 1001}) {
    const int64_t count = 5003;
    std::vector<float> device =
        deviceDropoutFactors(testDropout(0.3f), first, count);
    std::vector<float> host(count);
    for (int64_t x = 0; x < count; ++x)
      host[x] = testDropout(0.3f).factor(first + x);
    EXPECT_EQ(device, host) << "from index " << first;
    expectSameZeros("dropout factors from " + std::to_string(first), device,
                    host);
  }
}

// A site reading its key from device memory (Dropout::deviceKey, what a
// replayed CUDA graph's kernels do) draws the mask of the same key given by
// value, and another step's key gives another mask.
TEST_F(CudaKernels, DropoutDeviceKey) {
  const int64_t count = 4099;
  runtime::Dropout byValue = testDropout(0.3f);
  DeviceArray<int32_t> key(std::vector<int32_t>{
      static_cast<int32_t>(byValue.seed), static_cast<int32_t>(byValue.step)});
  runtime::Dropout fromDevice = byValue;
  fromDevice.seed = fromDevice.step = 0; // not read
  fromDevice.deviceKey = key.get();
  EXPECT_EQ(deviceDropoutFactors(fromDevice, 17, count),
            deviceDropoutFactors(byValue, 17, count));
  DeviceArray<int32_t> nextStep(std::vector<int32_t>{
      static_cast<int32_t>(byValue.seed), static_cast<int32_t>(byValue.step + 1)});
  fromDevice.deviceKey = nextStep.get();
  EXPECT_NE(deviceDropoutFactors(fromDevice, 17, count),
            deviceDropoutFactors(byValue, 17, count));
}

} // namespace
} // namespace tgc::test
