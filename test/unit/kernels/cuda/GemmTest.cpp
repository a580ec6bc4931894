//===- GemmTest.cpp - CUDA GEMM kernels against the CPU -------------------===//
//
// runtime/kernels/cuda/Gemm.cu: batched matmul in every transposition (and
// matmulAdd, with beta 1) and linear (cuBLASLt's fused epilogue, or cuBLAS
// and the epilogue kernel), on aligned and 4-byte aligned tensors, on f32
// and bf16 operands, with f32 and bf16 results and biases; and
// runtime/kernels/cuda/Stream.cu seen through linear on a stream. Helpers
// and the error measure: KernelTestSupport.h.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cuda/KernelTestSupport.h"

#include <limits>

namespace tgc::test {
namespace {

// Full-f32 cuBLAS against OpenBLAS: k = 53 products in different orders.
constexpr double kGemmTolerance = 1e-5;
// The activations besides: CUDA's erff, expf and tanhf against oneDNN's, a
// few float steps apart.
constexpr double kActivationTolerance = 2e-5;

runtime::Activation reluIf(bool relu) {
  return relu ? runtime::Activation::relu : runtime::Activation::none;
}

TEST_F(CudaKernels, Matmul) {
  forEachMatmulCase([](const MatmulCase &c) {
    std::vector<float> expected(c.batch * c.m * c.n);
    cpu::matmul(c.lhs.data(), c.rhs.data(), expected.data(), c.batch, c.m, c.n,
                c.k, c.transposeLhs, c.transposeRhs, c.sharedRhs);
    DeviceArray<float> dl(c.lhs), dr(c.rhs), out(c.batch * c.m * c.n);
    cuda::matmul(dl.get(), dr.get(), out.get(), c.batch, c.m, c.n, c.k,
                 c.transposeLhs, c.transposeRhs, c.sharedRhs);
    expectClose(c.name(), out.read(), expected, kGemmTolerance);
  });
}

TEST_F(CudaKernels, Linear) {
  const int64_t rows = 300, k = 45, n = 70;
  std::vector<float> input = uniform(rows * k, 3), weight = uniform(k * n, 4),
                     bias = uniform(n, 5);
  DeviceArray<float> di(input), dw(weight), db(bias);
  for (bool withBias : {true, false})
    for (bool relu : {false, true}) {
      const float *hostBias = withBias ? bias.data() : nullptr;
      std::vector<float> expected(rows * n);
      cpu::linear(input.data(), weight.data(), hostBias, expected.data(), rows,
                  k, n, reluIf(relu));
      DeviceArray<float> out(rows * n);
      int64_t fused = cuda::fusedLinearCalls();
      cuda::linear(di.get(), dw.get(), withBias ? db.get() : nullptr, out.get(),
                   rows, k, n, reluIf(relu));
      std::string tag = "linear bias=" + std::to_string(withBias) +
                        " relu=" + std::to_string(relu);
      expectClose(tag, out.read(), expected, kGemmTolerance);
      // cudaMalloc's 256-byte aligned operands: cuBLASLt's fused epilogue.
      EXPECT_EQ(cuda::fusedLinearCalls(), fused + 1) << tag;
    }
}

// Every activation, alone and beside the pre-activation (the epilogue
// kernel; cuBLASLt's epilogue only for none and ReLU, without it), on f32
// and bf16 operands with f32 and bf16 results, against the CPU.
TEST_F(CudaKernels, LinearActivations) {
  const int64_t rows = 300, k = 45, n = 72;
  std::vector<float> input = uniform(rows * k, 3), weight = uniform(k * n, 4),
                     bias = uniform(n, 5);
  std::vector<runtime::Bf16> input16 = roundedToBf16(input),
                             weight16 = roundedToBf16(weight);
  DeviceArray<float> di(input), dw(weight), db(bias);
  DeviceArray<runtime::Bf16> di16(input16), dw16(weight16);
  for (runtime::Activation activation :
       {runtime::Activation::none, runtime::Activation::relu,
        runtime::Activation::gelu, runtime::Activation::geluTanh,
        runtime::Activation::silu, runtime::Activation::sigmoid,
        runtime::Activation::tanh}) {
    std::string tag = "linear activation " + std::to_string(int(activation));
    std::vector<float> expected(rows * n), pre(rows * n);
    cpu::linear(input.data(), weight.data(), bias.data(), expected.data(),
                pre.data(), rows, k, n, activation);
    DeviceArray<float> out(rows * n), kept(rows * n);
    cuda::linear(di.get(), dw.get(), db.get(), out.get(), rows, k, n,
                 activation);
    expectClose(tag, out.read(), expected, kActivationTolerance);
    cuda::linear(di.get(), dw.get(), db.get(), out.get(), kept.get(), rows, k,
                 n, activation);
    expectClose(tag + " beside pre", out.read(), expected,
                kActivationTolerance);
    expectClose(tag + " pre", kept.read(), pre, kGemmTolerance);
    std::vector<float> expected16(rows * n), pre16(rows * n);
    cpu::linear(input16.data(), weight16.data(), bias.data(),
                expected16.data(), pre16.data(), rows, k, n, activation);
    DeviceArray<runtime::Bf16> rounded(rows * n), roundedPre(rows * n);
    cuda::linear(di16.get(), dw16.get(), db.get(), rounded.get(),
                 roundedPre.get(), rows, k, n, activation);
    cuda::linear(di16.get(), dw16.get(), db.get(), out.get(), kept.get(),
                 rows, k, n, activation);
    std::vector<float> sums = out.read(), sumsPre = kept.read();
    expectClose(tag + " bf16", sums, expected16, kActivationTolerance);
    expectClose(tag + " bf16 pre", sumsPre, pre16, kGemmTolerance);
    expectRoundedOnce(tag + " bf16 written in bf16", rounded.read(), sums);
    expectRoundedOnce(tag + " bf16 pre written in bf16", roundedPre.read(),
                      sumsPre);
  }
}

// bf16 operands (tg-mixed-precision) on the tensor cores: the products of
// bf16 values are exact in f32, so the f32 results match the CPU's as the
// f32 GEMMs do; the bf16 results (tg-fold-bf16-roundings) are those f32
// results rounded once.
TEST_F(CudaKernels, MatmulBf16) {
  forEachMatmulCase([](const MatmulCase &c) {
    std::vector<runtime::Bf16> lhs = roundedToBf16(c.lhs),
                               rhs = roundedToBf16(c.rhs);
    const int64_t count = c.batch * c.m * c.n;
    std::vector<float> expected(count);
    cpu::matmul(lhs.data(), rhs.data(), expected.data(), c.batch, c.m, c.n,
                c.k, c.transposeLhs, c.transposeRhs, c.sharedRhs);
    DeviceArray<runtime::Bf16> dl(lhs), dr(rhs), rounded(count);
    DeviceArray<float> out(count, 7.0f);
    cuda::matmul(dl.get(), dr.get(), out.get(), c.batch, c.m, c.n, c.k,
                 c.transposeLhs, c.transposeRhs, c.sharedRhs);
    cuda::matmul(dl.get(), dr.get(), rounded.get(), c.batch, c.m, c.n, c.k,
                 c.transposeLhs, c.transposeRhs, c.sharedRhs);
    std::vector<float> sums = out.read();
    expectClose("bf16 " + c.name(), sums, expected, kGemmTolerance);
    expectRoundedOnce("bf16 " + c.name() + " written in bf16", rounded.read(),
                      sums);
  });
}

// matmulAdd: the CPU kernel's sums (the product plus the summand) from
// cuBLAS with beta 1, into their own bytes (the summand copied first) and
// into the summand's, on f32 and bf16 operands.
TEST_F(CudaKernels, MatmulAdd) {
  forEachMatmulCase([](const MatmulCase &c) {
    const int64_t count = c.batch * c.m * c.n;
    std::vector<float> addend = uniform(count, 9);
    std::vector<runtime::Bf16> lhs = roundedToBf16(c.lhs),
                               rhs = roundedToBf16(c.rhs);
    std::vector<float> expected(count), expectedBf16(count);
    cpu::matmulAdd(c.lhs.data(), c.rhs.data(), addend.data(), expected.data(),
                   c.batch, c.m, c.n, c.k, c.transposeLhs, c.transposeRhs,
                   c.sharedRhs);
    cpu::matmulAdd(lhs.data(), rhs.data(), addend.data(), expectedBf16.data(),
                   c.batch, c.m, c.n, c.k, c.transposeLhs, c.transposeRhs,
                   c.sharedRhs);
    DeviceArray<float> dl(c.lhs), dr(c.rhs), da(addend), out(count, 7.0f),
        inPlace(addend);
    DeviceArray<runtime::Bf16> bl(lhs), br(rhs);
    cuda::matmulAdd(dl.get(), dr.get(), da.get(), out.get(), c.batch, c.m, c.n,
                    c.k, c.transposeLhs, c.transposeRhs, c.sharedRhs);
    cuda::matmulAdd(dl.get(), dr.get(), inPlace.get(), inPlace.get(), c.batch,
                    c.m, c.n, c.k, c.transposeLhs, c.transposeRhs,
                    c.sharedRhs);
    expectClose("matmulAdd " + c.name(), out.read(), expected, kGemmTolerance);
    expectClose("matmulAdd in place " + c.name(), inPlace.read(), expected,
                kGemmTolerance);
    DeviceArray<float> bf16Out(count, 7.0f), bf16InPlace(addend);
    cuda::matmulAdd(bl.get(), br.get(), da.get(), bf16Out.get(), c.batch, c.m,
                    c.n, c.k, c.transposeLhs, c.transposeRhs, c.sharedRhs);
    cuda::matmulAdd(bl.get(), br.get(), bf16InPlace.get(), bf16InPlace.get(),
                    c.batch, c.m, c.n, c.k, c.transposeLhs, c.transposeRhs,
                    c.sharedRhs);
    expectClose("bf16 matmulAdd " + c.name(), bf16Out.read(), expectedBf16,
                kGemmTolerance);
    expectClose("bf16 matmulAdd in place " + c.name(), bf16InPlace.read(),
                expectedBf16, kGemmTolerance);
  });
}

// linear on bf16 operands, the bias and ReLU on the f32 sums (one rounding
// after them for a bf16 result), on cudaMalloc's aligned tensors and one
// element in (2-byte aligned bf16, 4-byte f32: cuBLASLt's epilogue where it
// has an algorithm, cuBLAS and the epilogue kernel elsewhere).
TEST_F(CudaKernels, LinearBf16) {
  const int64_t rows = 300, k = 45, n = 70;
  std::vector<runtime::Bf16> input = roundedToBf16(uniform(rows * k + 1, 3)),
                             weight = roundedToBf16(uniform(k * n + 1, 4));
  std::vector<float> bias = uniform(n, 5);
  DeviceArray<runtime::Bf16> di(input), dw(weight);
  DeviceArray<float> db(bias);
  for (int64_t shift : {0, 1})
    for (bool withBias : {true, false})
      for (bool relu : {false, true}) {
        const float *hostBias = withBias ? bias.data() : nullptr;
        std::vector<float> expected(rows * n);
        cpu::linear(input.data() + shift, weight.data() + shift, hostBias,
                    expected.data(), rows, k, n, reluIf(relu));
        DeviceArray<float> out(rows * n + 1, 7.0f);
        DeviceArray<runtime::Bf16> rounded(rows * n + 1);
        std::string tag = "bf16 linear shift=" + std::to_string(shift) +
                          " bias=" + std::to_string(withBias) +
                          " relu=" + std::to_string(relu);
        int64_t fused = cuda::fusedLinearCalls();
        cuda::linear(di.get() + shift, dw.get() + shift,
                     withBias ? db.get() : nullptr, out.get() + shift,
                     rows, k, n, reluIf(relu));
        int64_t fusedF32 = cuda::fusedLinearCalls() - fused;
        cuda::linear(di.get() + shift, dw.get() + shift,
                     withBias ? db.get() : nullptr, rounded.get() + shift,
                     rows, k, n, reluIf(relu));
        std::cout << "  " << tag << ": cuBLASLt's epilogue for the f32 result "
                  << fusedF32 << ", for the bf16 result "
                  << cuda::fusedLinearCalls() - fused - fusedF32 << "\n";
        std::vector<float> sums = out.read();
        sums.erase(sums.begin(), sums.begin() + shift);
        sums.resize(rows * n);
        expectClose(tag, sums, expected, kGemmTolerance);
        std::vector<runtime::Bf16> got = rounded.read();
        got.erase(got.begin(), got.begin() + shift);
        got.resize(rows * n);
        expectRoundedOnce(tag + " written in bf16", got, sums);
        // Aligned operands: cuBLASLt's fused epilogue for the f32 result.
        if (shift == 0) {
          EXPECT_EQ(fusedF32, 1) << tag;
        }
      }
}

// linear on bf16 operands with a bf16 bias (tg-mixed-precision's, for a
// result read only in bf16), against the CPU's with the same bias: the
// widened bias on the f32 sums, one rounding after the ReLU for a bf16
// result. Aligned tensors whose rows are whole 16-byte words: cuBLASLt's
// epilogue adds the bias as it writes the bf16 result (what the bf16 bias
// is for); the bias one element in (2-byte aligned), or an f32 result (a
// bias of another type than the result's): the epilogue kernel.
TEST_F(CudaKernels, LinearBf16Bias) {
  const int64_t rows = 300, k = 48, n = 72;
  std::vector<runtime::Bf16> input = roundedToBf16(uniform(rows * k, 3)),
                             weight = roundedToBf16(uniform(k * n, 4)),
                             bias = roundedToBf16(uniform(n + 1, 5));
  DeviceArray<runtime::Bf16> di(input), dw(weight), db(bias);
  for (int64_t biasShift : {0, 1})
    for (bool relu : {false, true}) {
      std::vector<float> expected(rows * n);
      cpu::linear(input.data(), weight.data(), bias.data() + biasShift,
                  expected.data(), rows, k, n, reluIf(relu));
      std::string tag =
          "bf16-bias linear bias shift=" + std::to_string(biasShift) +
          " relu=" + std::to_string(relu);
      DeviceArray<float> out(rows * n, 7.0f);
      DeviceArray<runtime::Bf16> rounded(rows * n);
      int64_t fused = cuda::fusedLinearCalls();
      cuda::linear(di.get(), dw.get(), db.get() + biasShift, out.get(), rows, k,
                   n, reluIf(relu));
      // A bias of another type than the result: never cuBLASLt's epilogue,
      // which documents no such bias for these operands.
      EXPECT_EQ(cuda::fusedLinearCalls(), fused) << tag << " (f32 result)";
      fused = cuda::fusedLinearCalls();
      cuda::linear(di.get(), dw.get(), db.get() + biasShift, rounded.get(),
                   rows, k, n, reluIf(relu));
      int64_t fusedBf16 = cuda::fusedLinearCalls() - fused;
      std::cout << "  " << tag << ": cuBLASLt's epilogue for the bf16 result "
                << fusedBf16 << "\n";
      std::vector<float> sums = out.read();
      expectClose(tag, sums, expected, kGemmTolerance);
      expectRoundedOnce(tag + " written in bf16", rounded.read(), sums);
      if (biasShift == 0) {
        EXPECT_EQ(fusedBf16, 1) << tag << ": not on cuBLASLt's epilogue";
      }
    }
}

// tg.weight_bias_grad against the CPU's matmul and reduce, f32 and bf16
// operands: the weight gradient as matmul's tolerance, the bias gradient's
// f32 sums (cuBLASLt's BGRADA epilogue, where it has an algorithm, adds in
// f32 in its own order; the CPU in double) within 1e-5 of their scale. A
// bias gradient one float off a 16-byte boundary goes to matmul and reduce.
TEST_F(CudaKernels, WeightBiasGrad) {
  const int64_t rows = 300, k = 48, n = 72;
  std::vector<float> input = uniform(rows * k, 21),
                     grad = uniform(rows * n, 22);
  std::vector<runtime::Bf16> input16 = roundedToBf16(input),
                             grad16 = roundedToBf16(grad);
  const int64_t shape[] = {rows, n};
  const bool reduced[] = {true, false};
  for (bool bf16 : {false, true})
    for (int64_t shift : {0, 1}) {
      std::string tag = std::string(bf16 ? "bf16" : "f32") +
                        " weightBiasGrad bias shift=" + std::to_string(shift);
      std::vector<float> wantDw(k * n), wantDb(n);
      DeviceArray<float> dw(k * n, 7.0f), db(n + 1, 7.0f);
      int64_t fused = cuda::fusedWeightBiasGradCalls();
      if (bf16) {
        cpu::matmul(input16.data(), grad16.data(), wantDw.data(), 1, k, n, rows,
                    true, false, false);
        cpu::reduce(grad16.data(), wantDb.data(), shape, 2, reduced,
                    runtime::Reduction::Sum);
        DeviceArray<runtime::Bf16> di(input16), dg(grad16);
        cuda::weightBiasGrad(di.get(), dg.get(), dw.get(), db.get() + shift,
                             rows, k, n);
      } else {
        cpu::matmul(input.data(), grad.data(), wantDw.data(), 1, k, n, rows,
                    true, false, false);
        cpu::reduce(grad.data(), wantDb.data(), shape, 2, reduced,
                    runtime::Reduction::Sum);
        DeviceArray<float> di(input), dg(grad);
        cuda::weightBiasGrad(di.get(), dg.get(), dw.get(), db.get() + shift,
                             rows, k, n);
      }
      std::cout << "  " << tag << ": cuBLASLt's BGRADA epilogue "
                << cuda::fusedWeightBiasGradCalls() - fused << "\n";
      expectClose(tag + " weight gradient", dw.read(), wantDw, kGemmTolerance);
      std::vector<float> got = db.read();
      got.erase(got.begin(), got.begin() + shift);
      got.resize(n);
      expectClose(tag + " bias gradient", got, wantDb, kGemmTolerance);
    }
}

// Tensors inside the arena are only 4-byte aligned at worst: cuBLASLt must
// then pick an algorithm for that alignment (one float past cudaMalloc's 256
// bytes), or linear falls back to cuBLAS and the epilogue kernel. Biases
// aligned to 256, 4, 16 and 64 bytes (the state's variables: 64); an empty
// sum gives the bias.
TEST_F(CudaKernels, LinearOnUnalignedTensors) {
  for (int64_t k : {33, 0})
    for (int64_t biasShift : {0, 1, 4, 16}) {
      const int64_t rows = 130, n = 66;
      // Input, weight and output start one float into their buffers: the
      // host vectors hold one float more, which the pointers skip.
      std::vector<float> input = uniform(rows * k + 1, 9),
                         weight = uniform(k * n + 1, 10),
                         bias = uniform(n + 16, 11);
      std::vector<float> expected(rows * n + 1);
      cpu::linear(input.data() + 1, weight.data() + 1, bias.data() + biasShift,
                  expected.data() + 1, rows, k, n,
                  runtime::Activation::relu);
      DeviceArray<float> di(input), dw(weight), db(bias), out(rows * n + 1);
      cuda::linear(di.get() + 1, dw.get() + 1, db.get() + biasShift,
                   out.get() + 1, rows, k, n, runtime::Activation::relu);
      std::vector<float> got = out.read();
      expectClose("linear, 4-byte aligned, k=" + std::to_string(k) +
                      ", bias shifted by " + std::to_string(biasShift),
                  std::vector<float>(got.begin() + 1, got.end()),
                  std::vector<float>(expected.begin() + 1, expected.end()),
                  kGemmTolerance);
    }
}

// Kernels enqueue on the stream set, cuBLAS included.
TEST_F(CudaKernels, Stream) {
  cudaStream_t stream;
  TGC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cuda::setStream(stream);
  EXPECT_EQ(cuda::stream(), stream);
  const int64_t rows = 64, k = 32, n = 48;
  std::vector<float> input = uniform(rows * k, 6), weight = uniform(k * n, 7),
                     bias = uniform(n, 8);
  std::vector<float> expected(rows * n);
  cpu::linear(input.data(), weight.data(), bias.data(), expected.data(), rows,
              k, n, runtime::Activation::relu);
  DeviceArray<float> di(input), dw(weight), db(bias), out(rows * n);
  // The uploads ran on the legacy stream, which a non-blocking stream does
  // not wait for.
  TGC_CUDA_CHECK(cudaDeviceSynchronize());
  cuda::linear(di.get(), dw.get(), db.get(), out.get(), rows, k, n,
               runtime::Activation::relu);
  TGC_CUDA_CHECK(cudaStreamSynchronize(stream));
  cuda::setStream(nullptr);
  TGC_CUDA_CHECK(cudaStreamDestroy(stream));
  expectClose("linear on a stream", out.read(), expected, kGemmTolerance);
}

// tg.to_bf16 rounds as runtime::roundToBf16 does, bit for bit: four values
// a thread where the pointers allow (with a tail), one a thread elsewhere.
TEST_F(CudaKernels, ToBf16) {
  std::vector<float> values = uniform(1003, 21, -3.0f, 3.0f);
  values[0] = std::numeric_limits<float>::quiet_NaN();
  values[1] = std::numeric_limits<float>::infinity();
  values[2] = -0.0f;
  values[5] = 1.00390625f; // halfway between two bf16 values: to even
  DeviceArray<float> input(values);
  for (int64_t skip : {0, 1}) { // aligned; one float in (4-byte aligned)
    const int64_t count = static_cast<int64_t>(values.size()) - skip;
    DeviceArray<runtime::Bf16> out(static_cast<size_t>(count));
    cuda::toBf16(input.get() + skip, out.get(), count);
    std::vector<runtime::Bf16> rounded = out.read();
    int64_t differing = 0;
    for (int64_t i = 0; i < count; ++i)
      differing += rounded[i].bits != runtime::roundToBf16(values[i + skip]).bits;
    EXPECT_EQ(differing, 0) << "starting at element " << skip;
  }
}

} // namespace
} // namespace tgc::test
