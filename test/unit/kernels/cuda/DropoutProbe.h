//===- DropoutProbe.h - dropout factors computed on the GPU ----*- C++ -*-===//
#ifndef TGC_TEST_UNIT_CUDA_DROPOUTPROBE_H
#define TGC_TEST_UNIT_CUDA_DROPOUTPROBE_H

#include "runtime/kernels/cuda/Kernels.h"

#include <vector>

namespace tgc::test {

/// dropout.factor(first + x) for x < count, each evaluated by a GPU thread.
std::vector<float> deviceDropoutFactors(const cuda::Dropout &dropout,
                                        uint64_t first, int64_t count);

} // namespace tgc::test

#endif // TGC_TEST_UNIT_CUDA_DROPOUTPROBE_H
