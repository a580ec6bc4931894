//===- ElementQuadsTest.cpp - the generated kernels' quads
//-----------------===//
//
// A generated elementwise kernel takes four adjacent elements a thread
// (runtime/kernels/cuda/ElementQuads.cuh, ElementQuadsProbe.cu): whole,
// aligned quads move as one load or store and draw their dropout factors
// from one Philox block; partial ones, views off a 16-byte boundary and
// index offsets that split a Philox block go element by element. Each way
// must give every element the CPU's value, bit for bit, and write nothing
// past the view. Helpers: KernelTestSupport.h.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cuda/ElementQuadsProbe.h"
#include "test/unit/kernels/cuda/KernelTestSupport.h"

#include <random>

namespace tgc::test {
namespace {

float asStored(float value, bool bf16) {
  return bf16 ? runtime::widen(runtime::roundToBf16(value)) : value;
}

using QuadRun = std::vector<float> (*)(const std::vector<float> &,
                                       const std::vector<float> &, int64_t,
                                       int64_t, const cuda::Dropout &, bool,
                                       bool, bool);

/// Runs `quads` over views of every kind, into another array and in place,
/// and compares each element with the CPU's value and everything else
/// with what was there.
void expectTheCpusElementsAndNothingElse(QuadRun quads) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  for (int64_t count : {1, 3, 4, 5, 1023, 4097})
    for (int64_t start : {0, 1, 2, 4})
      for (uint64_t indexOffset : {uint64_t{0}, uint64_t{2}})
        for (bool bf16In : {false, true})
          for (bool bf16Out : {false, true})
            for (bool inPlace : {false, true}) {
              if (inPlace && bf16In != bf16Out)
                continue;
              const int64_t size = start + count + 9; // elements past the view
              std::vector<float> input(size), output(size);
              for (float &x : input)
                x = uniform(rng);
              for (float &x : output)
                x = uniform(rng);
              runtime::Dropout dropout = testDropout(0.3f);
              dropout.indexOffset = indexOffset;
              std::vector<float> got = quads(input, output, start, count,
                                             dropout, bf16In, bf16Out, inPlace);
              std::vector<float> expected(size);
              for (int64_t i = 0; i < size; ++i) {
                const int64_t element = i - start;
                expected[i] =
                    element >= 0 && element < count
                        ? asStored(asStored(input[i], bf16In) *
                                       dropout.factor(uint64_t(element)),
                                   bf16Out)
                        : asStored(inPlace ? input[i] : output[i],
                                   bf16Out); // untouched
              }
              ASSERT_EQ(got, expected)
                  << count << " elements from " << start << ", index offset "
                  << indexOffset << (bf16In ? ", bf16" : ", f32") << " in"
                  << (bf16Out ? ", bf16" : ", f32") << " out"
                  << (inPlace ? ", in place" : "");
            }
}

TEST_F(CudaKernels, ElementQuadsGiveTheCpusElementsAndNothingElse) {
  expectTheCpusElementsAndNothingElse(deviceQuadDropout);
}

// The same functions as host code, thread after thread: runs without a GPU.
TEST(ElementQuadsOnTheHost, GiveTheCpusElementsAndNothingElse) {
  expectTheCpusElementsAndNothingElse(hostQuadDropout);
}

} // namespace
} // namespace tgc::test
