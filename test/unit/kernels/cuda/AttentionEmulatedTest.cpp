//===- AttentionEmulatedTest.cpp - attention's row kernels on the host ----===//
//
// The row kernels of attention on batched GEMMs (AttentionKernels.cuh,
// AttentionGradKernels.cuh, AttentionBf16Kernels.cuh) run by
// KernelEmulator.h between products the test computes on the host in place
// of cuBLAS's GEMMs (one group of every head), against the CPU kernels:
// f32 forward and backward (a score bias's gradient too), and with bf16
// products by quads and by single keys (forward with f32 and bf16 outputs,
// backward), in both layouts (sequence-major: the lse's and the output's
// indices). On a GPU, AttentionTest.cpp checks the same through cuBLAS.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cuda/KernelEmulator.h"

#include "runtime/kernels/cuda/AttentionBf16Kernels.cuh"
#include "runtime/kernels/cuda/AttentionGradKernels.cuh"
#include "runtime/kernels/cuda/AttentionKernels.cuh"
#include "test/unit/kernels/KernelTestCases.h"

#include <gtest/gtest.h>

#include <string>

namespace tgc::test {
namespace {

using runtime::Bf16;

constexpr double kRowKernelTolerance = 1e-4; // AttentionTest.cpp's

float plainValue(float x) { return x; }
float plainValue(Bf16 x) { return runtime::widen(x); }

// Keys not in whole quads (150, 53: a Philox draw a factor), 64 keys (quads,
// half a warp a row), 200 keys (quads, a warp a row), a decoder's step over
// a key cache; masks, dropout, causal, and each kind of score bias.
constexpr AttentionCase kRowCases[] = {
    {"cross masked dropout, bias per head", 2, 3, 37, 150, 24, 20, true, false,
     0.1f, 0, ScoreBias::PerHead},
    {"self causal masked dropout, 64 keys", 1, 2, 64, 64, 16, 16, true, true,
     0.1f},
    {"cross masked dropout, 200 keys, full bias", 1, 2, 20, 200, 8, 8, true,
     false, 0.1f, 0, ScoreBias::Full},
    {"causal unmasked, 53 keys, shared bias", 2, 2, 37, 53, 8, 12, false, true,
     0.0f, 0, ScoreBias::Shared},
    {"decoding 3 queries at 61 of 64", 1, 2, 3, 64, 16, 16, false, true, 0.0f,
     61},
};

/// out[h] = a[h] b[h] (or a[h]^T, b[h]^T) for every head h, [m, k] x [k, n]
/// after the transposes, packed head-major, summed in double: the batched
/// GEMMs' place.
template <typename A, typename B>
std::vector<float> headProducts(const std::vector<A> &a, const std::vector<B> &b,
                                int64_t heads, int64_t m, int64_t n, int64_t k,
                                bool transposeA, bool transposeB) {
  auto value = [](auto x) { return static_cast<double>(plainValue(x)); };
  std::vector<float> out(heads * m * n);
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (int64_t l = 0; l < k; ++l)
          sum += value(a[h * m * k + (transposeA ? l * m + i : i * k + l)]) *
                 value(b[h * k * n + (transposeB ? j * k + l : l * n + j)]);
        out[(h * m + i) * n + j] = static_cast<float>(sum);
      }
  return out;
}

/// kernel() on blocksFor(rows * lanes) blocks of kThreads, as the sources
/// launch the row kernels.
template <typename Kernel>
void launchRowKernel(int64_t rows, int lanes, Kernel kernel) {
  emulator::launch(dim3(cuda::blocksFor(rows * lanes)), dim3(cuda::kThreads), 0,
                   kernel);
}

/// One case in one layout: its CPU results, f32 and with bf16 products.
struct RowProblem {
  RowProblem(const AttentionCase &c, bool sequenceMajor)
      : p(c), c(c), sequenceMajor(sequenceMajor), q16(roundedToBf16(p.q)),
        k16(roundedToBf16(p.k)), v16(roundedToBf16(p.v)) {
    shape = p.shape;
    shape.sequenceMajor = sequenceMajor;
    config = p.cpuConfig;
    cpuSide(p.q, p.k, p.v, p.cpuConfig, f32);
    runtime::AttentionConfig bf16Config = p.cpuConfig;
    bf16Config.bf16Products = true;
    cpuSide(q16, k16, v16, bf16Config, bf16);
    cpuSide(q16, k16, v16, p.cpuConfig, plain);
  }

  struct Results {
    std::vector<float> out, lse, dq, dk, dv, dbias;
  };
  template <typename T>
  void cpuSide(const std::vector<T> &q, const std::vector<T> &k,
               const std::vector<T> &v, runtime::AttentionConfig cpuConfig,
               Results &r) const {
    r = {std::vector<float>(p.rows() * c.valueDim),
         std::vector<float>(p.rows()),
         std::vector<float>(q.size()),
         std::vector<float>(k.size()),
         std::vector<float>(v.size()),
         std::vector<float>(p.biasSize())};
    cpu::attention(q.data(), k.data(), v.data(), r.out.data(), r.lse.data(),
                   p.shape, cpuConfig);
    cpuConfig.biasGrad = r.dbias.empty() ? nullptr : r.dbias.data();
    cpu::attentionGrad(p.grad.data(), q.data(), k.data(), v.data(),
                       r.out.data(), r.lse.data(), r.dq.data(), r.dk.data(),
                       r.dv.data(), p.shape, cpuConfig);
  }

  int64_t heads() const { return c.batch * c.heads; }
  std::string name() const {
    return std::string(c.name) + (sequenceMajor ? " (sequence-major)" : "");
  }
  /// lse and output rows as the kernels index them (shape.sequenceMajor),
  /// and back to head-major.
  template <typename T>
  std::vector<T> toLayout(const std::vector<T> &x, int64_t width) const {
    return sequenceMajor ? swapMiddle(x, c.batch, c.heads, c.queries, width)
                         : x;
  }
  template <typename T>
  std::vector<T> toHeads(const std::vector<T> &x, int64_t width) const {
    return sequenceMajor ? swapMiddle(x, c.batch, c.queries, c.heads, width)
                         : x;
  }

  AttentionProblem p;
  const AttentionCase &c;
  bool sequenceMajor;
  std::vector<Bf16> q16, k16, v16;
  runtime::AttentionShape shape;
  runtime::AttentionConfig config;
  Results f32, bf16, plain;
};

void expectF32RowKernelsAsTheCpu(const RowProblem &t) {
  const AttentionCase &c = t.c;
  const int64_t heads = t.heads(), rows = t.p.rows();
  std::vector<float> pf = headProducts(t.p.q, t.p.k, heads, c.queries, c.keys,
                                       c.keyDim, false, true);
  std::vector<float> lse(rows, 7.0f);
  launchRowKernel(rows, 32, [&] {
    cuda::softmaxScoresKernel(pf.data(), lse.data(), t.shape, t.config, 0,
                              rows);
  });
  expectClose("emulated f32 lse " + t.name(), t.toHeads(lse, 1), t.f32.lse,
              kRowKernelTolerance);
  expectClose("emulated f32 output " + t.name(),
              headProducts(pf, t.p.v, heads, c.queries, c.valueDim, c.keys,
                           false, false),
              t.f32.out, kRowKernelTolerance);

  // The backward from the CPU forward's output and lse, as in a step.
  const std::vector<float> grad = t.toLayout(t.p.grad, c.valueDim),
                           output = t.toLayout(t.f32.out, c.valueDim),
                           cpuLse = t.toLayout(t.f32.lse, 1);
  std::vector<float> rowDot(rows, 7.0f);
  launchRowKernel(rows, 32, [&] {
    cuda::rowDotKernel(grad.data(), output.data(), rowDot.data(),
                       cuda::tensorHeads(t.shape, c.queries, c.valueDim),
                       c.queries, rows, static_cast<int>(c.valueDim));
  });
  std::vector<float> products = headProducts(t.p.q, t.p.k, heads, c.queries,
                                             c.keys, c.keyDim, false, true),
                     ds = headProducts(t.p.grad, t.p.v, heads, c.queries,
                                       c.keys, c.valueDim, false, true);
  std::vector<float> dbias(t.p.biasSize(), 0.0f);
  runtime::AttentionConfig config = t.config;
  config.biasGrad = dbias.empty() ? nullptr : dbias.data();
  launchRowKernel(rows, 32, [&] {
    cuda::scoreGradsKernel(products.data(), ds.data(), cpuLse.data(),
                           rowDot.data(), t.shape, config, 0, rows);
  });
  expectClose("emulated f32 value grad " + t.name(),
              headProducts(products, t.p.grad, heads, c.keys, c.valueDim,
                           c.queries, true, false),
              t.f32.dv, kRowKernelTolerance);
  expectClose("emulated f32 query grad " + t.name(),
              headProducts(ds, t.p.k, heads, c.queries, c.keyDim, c.keys,
                           false, false),
              t.f32.dq, kRowKernelTolerance);
  expectClose("emulated f32 key grad " + t.name(),
              headProducts(ds, t.p.q, heads, c.keys, c.keyDim, c.queries, true,
                           false),
              t.f32.dk, kRowKernelTolerance);
  if (!dbias.empty())
    expectClose("emulated f32 bias grad " + t.name(), dbias, t.f32.dbias,
                kRowKernelTolerance);
}

TEST(AttentionEmulated, F32RowKernelsMatchTheCpu) {
  for (const AttentionCase &c : kRowCases)
    for (bool sequenceMajor : {false, true})
      expectF32RowKernelsAsTheCpu(RowProblem(c, sequenceMajor));
}

/// The output rows scaled by `rowScale` (scaleRowsKernel), as Out, back
/// head-major.
template <typename Out>
std::vector<Out> scaledRows(const RowProblem &t, const std::vector<float> &sums,
                            const std::vector<float> &rowScale) {
  const AttentionCase &c = t.c;
  const int64_t rows = t.p.rows();
  std::vector<Out> out(t.bf16.out.size(), cuda::convertedTo<Out>(7.0f));
  const cuda::Heads<Out> outHeads{
      out.data(), cuda::tensorHeads(t.shape, c.queries, c.valueDim)};
  launchRowKernel(rows, 32, [&] {
    cuda::scaleRowsKernel<Out>(sums.data(), outHeads, rowScale.data(),
                               c.queries, rows, c.valueDim);
  });
  return t.toHeads(out, c.valueDim);
}

/// The bf16-products forward: the rounded probabilities by `lanes` lanes a
/// row (16 or 32: by quads; 0: a warp by single keys), their products with
/// v, and the rows scaled into an f32 output, and into a bf16 one (the f32
/// result rounded once).
void expectBf16ForwardAsTheCpu(const RowProblem &t, int lanes) {
  const AttentionCase &c = t.c;
  const int64_t heads = t.heads(), rows = t.p.rows();
  const std::string name =
      t.name() + " (" + std::to_string(lanes) + " lanes a row)";
  std::vector<float> scores = headProducts(t.q16, t.k16, heads, c.queries,
                                           c.keys, c.keyDim, false, true);
  std::vector<Bf16> probabilities(scores.size(), Bf16{0x7fc0});
  std::vector<float> rowScale(rows, 7.0f), lse(rows, 7.0f);
  auto run = [&](auto kernel) {
    kernel(scores.data(), probabilities.data(), rowScale.data(), lse.data(),
           t.shape, t.config, 0, rows);
  };
  if (lanes == 16)
    launchRowKernel(rows, 16,
                    [&] { run(cuda::roundedProbabilityQuadsKernel<16>); });
  else if (lanes == 32)
    launchRowKernel(rows, 32,
                    [&] { run(cuda::roundedProbabilityQuadsKernel<32>); });
  else
    launchRowKernel(rows, 32, [&] { run(cuda::roundedProbabilitiesKernel); });
  expectClose("emulated bf16 lse " + name, t.toHeads(lse, 1), t.bf16.lse,
              kRowKernelTolerance);
  const std::vector<float> sums = headProducts(
      probabilities, t.v16, heads, c.queries, c.valueDim, c.keys, false, false);
  const std::vector<float> out = scaledRows<float>(t, sums, rowScale);
  expectBf16Products("emulated bf16 output " + name, out, t.bf16.out,
                     t.plain.out);
  expectRoundedCopy("emulated bf16 output " + name,
                    scaledRows<Bf16>(t, sums, rowScale), out);
}

/// The bf16-products backward: r(p f) and r(ds) by `lanes` lanes a row as
/// above, then the three gradient products.
void expectBf16BackwardAsTheCpu(const RowProblem &t, int lanes) {
  const AttentionCase &c = t.c;
  const int64_t heads = t.heads(), rows = t.p.rows();
  const std::string name =
      t.name() + " (" + std::to_string(lanes) + " lanes a row)";
  const std::vector<Bf16> dO = roundedToBf16(t.p.grad);
  const std::vector<float> products = headProducts(
                               t.q16, t.k16, heads, c.queries, c.keys,
                               c.keyDim, false, true),
                           outGrads = headProducts(dO, t.v16, heads, c.queries,
                                                   c.keys, c.valueDim, false,
                                                   true),
                           lse = t.toLayout(t.bf16.lse, 1);
  std::vector<Bf16> kept(products.size(), Bf16{0x7fc0}),
      scoreGrads(products.size(), Bf16{0x7fc0});
  std::vector<float> dbias(t.p.biasSize(), 0.0f);
  runtime::AttentionConfig config = t.config;
  config.biasGrad = dbias.empty() ? nullptr : dbias.data();
  auto run = [&](auto kernel) {
    kernel(products.data(), outGrads.data(), lse.data(), kept.data(),
           scoreGrads.data(), t.shape, config, 0, rows);
  };
  if (lanes == 16)
    launchRowKernel(rows, 16, [&] { run(cuda::roundedScoreGradQuadsKernel<16>); });
  else if (lanes == 32)
    launchRowKernel(rows, 32, [&] { run(cuda::roundedScoreGradQuadsKernel<32>); });
  else
    launchRowKernel(rows, 32, [&] { run(cuda::roundedScoreGradsKernel); });
  expectBf16Products("emulated bf16 value grad " + name,
                     headProducts(kept, dO, heads, c.keys, c.valueDim,
                                  c.queries, true, false),
                     t.bf16.dv, t.plain.dv);
  expectBf16Products("emulated bf16 query grad " + name,
                     headProducts(scoreGrads, t.k16, heads, c.queries,
                                  c.keyDim, c.keys, false, false),
                     t.bf16.dq, t.plain.dq);
  expectBf16Products("emulated bf16 key grad " + name,
                     headProducts(scoreGrads, t.q16, heads, c.keys, c.keyDim,
                                  c.queries, true, false),
                     t.bf16.dk, t.plain.dk);
  if (!dbias.empty())
    expectClose("emulated bf16 bias grad " + name, dbias, t.bf16.dbias,
                kBf16ProductsTolerance);
}

// A batch whose every key is masked (a padding row of a batch): the
// forward weighs its keys alike, and the backward must take the same
// weights; its lse, -1e9 + log(Sk), is -1e9 in f32, and exp(s - lse)
// weighed each key 1 (the f32 forward's output too).
TEST(AttentionEmulated, RowsWhoseEveryKeyIsMaskedMatchTheCpu) {
  constexpr AttentionCase kPaddedCases[] = {
      {"cross masked dropout, batch 1 padding", 2, 2, 20, 150, 16, 16, true,
       false, 0.1f, 0, ScoreBias::None, true},
      {"self causal masked dropout, 64 keys, batch 1 padding", 2, 2, 64, 64,
       16, 16, true, true, 0.1f, 0, ScoreBias::None, true},
      {"cross masked dropout, 200 keys, full bias, batch 1 padding", 2, 1, 20,
       200, 8, 8, true, false, 0.1f, 0, ScoreBias::Full, true},
  };
  for (const AttentionCase &c : kPaddedCases)
    for (bool sequenceMajor : {false, true}) {
      const RowProblem t(c, sequenceMajor);
      expectF32RowKernelsAsTheCpu(t);
      const int quadLanes = cuda::quadLanesPerRow(t.shape, t.config);
      for (int lanes : {quadLanes, 0}) {
        expectBf16ForwardAsTheCpu(t, lanes);
        expectBf16BackwardAsTheCpu(t, lanes);
        if (quadLanes == 0)
          break;
      }
    }
}

// AttentionBf16.cu's choice (quadLanesPerRow) and, where it takes quads,
// the single-key kernels on the same rows too.
TEST(AttentionEmulated, Bf16RowKernelsMatchTheCpu) {
  for (const AttentionCase &c : kRowCases)
    for (bool sequenceMajor : {false, true}) {
      const RowProblem t(c, sequenceMajor);
      const int quadLanes = cuda::quadLanesPerRow(t.shape, t.config);
      EXPECT_EQ(quadLanes, c.keys % 4 != 0 ? 0 : c.keys <= 64 ? 16 : 32)
          << t.name();
      for (int lanes : {quadLanes, 0}) {
        expectBf16ForwardAsTheCpu(t, lanes);
        expectBf16BackwardAsTheCpu(t, lanes);
        if (quadLanes == 0)
          break;
      }
    }
}

} // namespace
} // namespace tgc::test
