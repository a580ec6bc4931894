//===- ElementQuadsProbe.h - a generated kernel's quads on the GPU -*- C++
//-*-===//
#ifndef TGC_TEST_UNIT_CUDA_ELEMENTQUADSPROBE_H
#define TGC_TEST_UNIT_CUDA_ELEMENTQUADSPROBE_H

#include "runtime/kernels/cuda/Kernels.h"

#include <vector>

namespace tgc::test {

/// What a generated elementwise kernel of one dropout does
/// (runtime/kernels/cuda/ElementQuads.cuh: loadQuad, dropoutQuad,
/// storeQuad, four elements a thread) over the `count` elements that start
/// `start` elements into `input`, written `start` elements into a copy of
/// `output` (the rest of it untouched): in, out f32 or bf16 (`bf16In`,
/// `bf16Out`: the values are taken rounded and given back widened).
std::vector<float> deviceQuadDropout(const std::vector<float> &input,
                                     const std::vector<float> &output,
                                     int64_t start, int64_t count,
                                     const cuda::Dropout &dropout, bool bf16In,
                                     bool bf16Out, bool inPlace);

/// The same threads' work run one after another on the host.
std::vector<float> hostQuadDropout(const std::vector<float> &input,
                                   const std::vector<float> &output,
                                   int64_t start, int64_t count,
                                   const cuda::Dropout &dropout, bool bf16In,
                                   bool bf16Out, bool inPlace);

} // namespace tgc::test

#endif // TGC_TEST_UNIT_CUDA_ELEMENTQUADSPROBE_H
