//===- LinearEpilogueEmulatedTest.cpp - linear's epilogue on the host -----===//
//
// runtime/kernels/cuda/LinearEpilogue.cuh's biasActivation (four adjacent
// elements a thread) run by KernelEmulator.h against its definition,
// act(in + bias[c]) element by element, bit for bit: rows whose width is
// not a multiple of 4 (quads across rows), tensors off a 16-byte boundary
// (element by element), a bias off one, no bias, with and without the
// pre-activation, f32 and bf16 results, f32 and bf16 (widened) biases. On
// a GPU, GemmTest.cpp checks it through cuda::linear.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cuda/KernelEmulator.h"

#include "runtime/kernels/cuda/LinearEpilogue.cuh"
#include "test/unit/kernels/KernelTestCases.h"

#include <gtest/gtest.h>

namespace tgc::test {
namespace {

using runtime::Activation;
using runtime::Bf16;

uint32_t bitsOf(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}
uint32_t bitsOf(Bf16 x) { return x.bits; }

float widened(float x) { return x; }
float widened(Bf16 x) { return runtime::widen(x); }

/// biasActivation<Out, Pre, Bias> over rows x n starting `offset` elements
/// into its buffers, the bias `biasShift` into its own (none where
/// negative), on two blocks (so the grid-stride loop turns), against the
/// definition.
template <typename Out, typename Pre, typename Bias = float>
void expectEpilogue(int64_t rows, int64_t n, int offset, int biasShift,
                    Activation activation, bool withPre) {
  const int64_t count = rows * n;
  const std::vector<float> in = uniform(count + offset, 61, -3.0f, 3.0f);
  std::vector<Bias> bias;
  for (float b : uniform(n + 4, 62))
    bias.push_back(cuda::convertedTo<Bias>(b));
  const Bias *biasAt = biasShift < 0 ? nullptr : bias.data() + biasShift;
  std::vector<Out> out(count + offset, cuda::convertedTo<Out>(7.0f));
  std::vector<Pre> pre(count + offset, cuda::convertedTo<Pre>(7.0f));
  emulator::launch(dim3(2), dim3(cuda::kThreads), 0, [&] {
    cuda::biasActivation<Out, Pre, Bias>(
        in.data() + offset, out.data() + offset,
        withPre ? pre.data() + offset : nullptr, biasAt, rows, n, activation);
  });
  std::string what = std::to_string(rows) + "x" + std::to_string(n) +
                     " offset " + std::to_string(offset) + " bias shift " +
                     std::to_string(biasShift) + " activation " +
                     std::to_string(static_cast<int>(activation));
  int64_t wrongOut = 0, wrongPre = 0;
  for (int64_t i = 0; i < count; ++i) {
    float y = in[offset + i];
    if (biasAt)
      y += widened(biasAt[i % n]);
    wrongOut +=
        bitsOf(out[offset + i]) !=
        bitsOf(cuda::convertedTo<Out>(elementwise::activate(activation, y)));
    if (withPre)
      wrongPre += bitsOf(pre[offset + i]) != bitsOf(cuda::convertedTo<Pre>(y));
  }
  EXPECT_EQ(wrongOut, 0) << what << ": results not act(in + bias)";
  EXPECT_EQ(wrongPre, 0) << what << ": pre-activations not in + bias";
  for (int i = 0; i < offset; ++i)
    EXPECT_EQ(bitsOf(out[i]), bitsOf(cuda::convertedTo<Out>(7.0f)))
        << what << ": wrote before its tensor";
}

TEST(LinearEpilogueEmulated, IsActOfTheSumElementByElement) {
  for (Activation activation :
       {Activation::none, Activation::relu, Activation::geluTanh})
    for (int offset : {0, 1})
      for (int biasShift : {0, 1, -1}) {
        expectEpilogue<Bf16, float>(37, 70, offset, biasShift, activation,
                                    false);
        expectEpilogue<float, float>(37, 72, offset, biasShift, activation,
                                     true);
        expectEpilogue<Bf16, Bf16>(300, 64, offset, biasShift, activation,
                                   true);
        expectEpilogue<Bf16, float, Bf16>(37, 70, offset, biasShift, activation,
                                          false);
        expectEpilogue<Bf16, float, Bf16>(300, 64, offset, biasShift,
                                          activation, false);
      }
}

} // namespace
} // namespace tgc::test
