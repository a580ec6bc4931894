//===- CpuKernelsTest.cpp - CPU kernels against the reference interpreter ===//
//
// Every kernel of runtime/kernels/cpu/Kernels.h runs on random f32 inputs (fixed
// seeds) and is compared with the interpreter's double-precision kernel on
// the same values. Shapes are not multiples of the kernels' tiles (GEMM row
// blocks of 128, attention tiles of 16 queries x 64 keys) and are large
// enough to take the OpenMP paths.
//
// Error of element i: |actual_i - expected_i| / max(|expected_i|, rms), rms
// the expected tensor's root mean square: relative for the large elements,
// absolute at the tensor's own scale for those near zero (where relative
// error means nothing after cancellation). Float rounding of one operation
// is 6e-8; the tolerances say how much accumulation each kernel adds. Each
// comparison prints its worst error; tolerance 0 means bit-exact.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/reference/HostTensor.h"
#include "runtime/kernels/reference/Kernels.h"
#include "runtime/kernels/cpu/Kernels.h"
#include "test/unit/RandomInputs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <random>
#include <string>
#include <vector>

using tgc::HostTensor;
namespace cpu = tgc::cpu;
namespace reference = tgc::reference;

namespace {

using tgc::test::randomIds;
using tgc::test::uniform;

HostTensor host(const std::vector<float> &values, std::vector<int64_t> shape) {
  return HostTensor::f32(std::move(shape),
                         std::vector<double>(values.begin(), values.end()));
}
HostTensor hostIds(const std::vector<int32_t> &values,
                   std::vector<int64_t> shape) {
  return HostTensor::i32(std::move(shape),
                         std::vector<double>(values.begin(), values.end()));
}
std::vector<float> toFloats(const HostTensor &t) {
  return std::vector<float>(t.data.begin(), t.data.end());
}

/// The worst per-element error (see the file comment).
double worstError(const std::vector<float> &actual,
                  const HostTensor &expected) {
  double squares = 0.0;
  for (double e : expected.data)
    squares += e * e;
  double rms = std::sqrt(squares / std::max<int64_t>(1, expected.data.size()));
  double worst = 0.0;
  for (size_t i = 0; i < actual.size(); ++i) {
    double diff = std::abs(static_cast<double>(actual[i]) - expected[i]);
    double scale = std::max(std::abs(expected[i]), rms);
    worst = std::max(worst, scale > 0.0 ? diff / scale : diff);
  }
  return worst;
}

/// Compares, prints the worst error, and rejects an all-zero result (a
/// kernel that wrote nothing must not pass against a zero expectation).
void expectClose(const std::string &what, const std::vector<float> &actual,
                 const HostTensor &expected, double tolerance) {
  ASSERT_EQ(static_cast<int64_t>(actual.size()), expected.numElements())
      << what;
  double worst = worstError(actual, expected);
  std::cout << "  worst error " << what << ": " << worst << " (tolerance "
            << tolerance << ")\n";
  EXPECT_LE(worst, tolerance) << what;
  EXPECT_TRUE(std::any_of(actual.begin(), actual.end(),
                          [](float x) { return x != 0.0f; }))
      << what << " is all zeros";
}

//===--- Gemm.cpp ---------------------------------------------------------===//

// k = 53 products of values in [-1, 1]: float accumulation error grows like
// sqrt(k) eps; 1e-5 leaves room for OpenBLAS's blocked summation order.
constexpr double kGemmTolerance = 1e-5;

TEST(CpuKernels, Matmul) {
  const int64_t batch = 3, m = 37, n = 29, k = 53;
  for (bool shared : {false, true})
    for (bool tl : {false, true})
      for (bool tr : {false, true}) {
        std::vector<float> lhs = uniform(batch * m * k, 1);
        std::vector<float> rhs = uniform((shared ? 1 : batch) * k * n, 2);
        std::vector<int64_t> lShape = {batch, tl ? k : m, tl ? m : k};
        std::vector<int64_t> rShape = {tr ? n : k, tr ? k : n};
        if (!shared)
          rShape.insert(rShape.begin(), batch);
        HostTensor expected =
            reference::matmul(host(lhs, lShape), host(rhs, rShape), tl, tr);
        std::vector<float> out(batch * m * n, 0.0f);
        cpu::matmul(lhs.data(), rhs.data(), out.data(), batch, m, n, k, tl, tr,
                    shared);
        expectClose("matmul shared=" + std::to_string(shared) +
                        " transposeLhs=" + std::to_string(tl) +
                        " transposeRhs=" + std::to_string(tr),
                    out, expected, kGemmTolerance);
      }
}

TEST(CpuKernels, Linear) {
  // 300 rows: two full blocks of 128 and a partial one.
  const int64_t rows = 300, k = 45, n = 70;
  std::vector<float> input = uniform(rows * k, 3), weight = uniform(k * n, 4),
                     bias = uniform(n, 5);
  HostTensor product =
      reference::matmul(host(input, {rows, k}), host(weight, {k, n}), false,
                     false);
  for (bool relu : {false, true}) {
    HostTensor expected = product;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < n; ++c) {
        double &y = expected[r * n + c];
        y += bias[c];
        if (relu)
          y = std::max(y, 0.0);
      }
    std::vector<float> out(rows * n, 0.0f);
    cpu::linear(input.data(), weight.data(), bias.data(), out.data(), rows, k,
                n, relu);
    expectClose(std::string("linear relu=") + (relu ? "1" : "0"), out,
                expected, kGemmTolerance);
  }
}

//===--- TensorKernels.cpp ------------------------------------------------===//

// Data movement: bit-exact.
TEST(CpuKernels, Transpose) {
  struct Case {
    std::vector<int64_t> shape, permutation;
  };
  // Heads split ([B, S, H, D] -> [B, H, S, D]), a 2-D transpose, and a
  // permutation whose innermost output dimension is strided in the input.
  for (const Case &c : {Case{{3, 37, 4, 8}, {0, 2, 1, 3}},
                        Case{{37, 53}, {1, 0}}, Case{{3, 5, 7, 4}, {3, 1, 0, 2}},
                        Case{{200, 3, 70}, {1, 0, 2}}}) {
    int64_t count = HostTensor::countOf(c.shape);
    std::vector<float> input = uniform(count, 6);
    HostTensor expected = reference::transpose(host(input, c.shape),
                                            c.permutation);
    std::vector<float> out(count, 0.0f);
    cpu::transpose(input.data(), out.data(), c.shape.data(),
                   c.permutation.data(), static_cast<int>(c.shape.size()));
    expectClose("transpose rank " + std::to_string(c.shape.size()), out,
                expected, 0.0);
  }
}

TEST(CpuKernels, Broadcast) {
  struct Case {
    std::vector<int64_t> inputShape, dims, resultShape;
  };
  // A bias over [batch, seq, d], a padding mask over scores, a column
  // replicated along the innermost result dimension, a large case, size-1
  // input dimensions expanded (a keep-dims reduction's gradient), and a
  // scalar.
  for (const Case &c : {Case{{7}, {2}, {2, 5, 7}},
                        Case{{2, 7}, {0, 3}, {2, 4, 7, 7}},
                        Case{{5}, {0}, {5, 6}},
                        Case{{70}, {2}, {4, 150, 70}},
                        Case{{1, 7}, {0, 1}, {4, 7}},
                        Case{{37, 1}, {0, 1}, {37, 53}},
                        Case{{2, 1, 5}, {0, 1, 3}, {2, 3, 4, 5}},
                        Case{{}, {}, {3, 4}}}) {
    std::vector<float> input = uniform(HostTensor::countOf(c.inputShape), 7);
    HostTensor expected =
        reference::broadcast(host(input, c.inputShape), c.dims, c.resultShape);
    std::vector<float> out(HostTensor::countOf(c.resultShape), 0.0f);
    cpu::broadcast(input.data(), out.data(), c.resultShape.data(),
                   static_cast<int>(c.resultShape.size()), c.dims.data(),
                   c.inputShape.data(), static_cast<int>(c.dims.size()));
    expectClose("broadcast to rank " + std::to_string(c.resultShape.size()),
                out, expected, 0.0);
  }
}

// Sums accumulate in double and round once: within one float rounding of
// the reference (1e-6 leaves room for the Mean's division). Max is exact.
TEST(CpuKernels, Reduce) {
  struct Case {
    std::vector<int64_t> shape, dims;
  };
  const std::vector<Case> cases = {
      {{4, 37, 6, 5}, {0}},        {{4, 37, 6, 5}, {3}},
      {{4, 37, 6, 5}, {1, 3}},     {{4, 37, 6, 5}, {0, 2}},
      {{4, 37, 6, 5}, {0, 1, 2, 3}}, {{4, 1, 37, 5}, {1}},
      {{600, 70}, {0}},            {{600, 70}, {1}},
      {{3, 200, 70}, {1}}};
  const std::pair<reference::Reduction, cpu::Reduction> kinds[] = {
      {reference::Reduction::Sum, cpu::Reduction::Sum},
      {reference::Reduction::Max, cpu::Reduction::Max},
      {reference::Reduction::Mean, cpu::Reduction::Mean}};
  const char *names[] = {"sum", "max", "mean"};
  for (const Case &c : cases)
    for (int kind = 0; kind < 3; ++kind) {
      std::vector<float> input = uniform(HostTensor::countOf(c.shape), 8);
      HostTensor expected =
          reference::reduce(host(input, c.shape), c.dims, false, kinds[kind].first);
      bool reduced[8] = {};
      for (int64_t d : c.dims)
        reduced[d] = true;
      std::vector<float> out(expected.numElements(), 0.0f);
      cpu::reduce(input.data(), out.data(), c.shape.data(),
                  static_cast<int>(c.shape.size()), reduced,
                  kinds[kind].second);
      std::string what = std::string("reduce ") + names[kind] + " of " +
                         std::to_string(HostTensor::countOf(c.shape)) +
                         " into " + std::to_string(out.size());
      expectClose(what, out, expected, kind == 1 ? 0.0 : 1e-6);
    }
}

TEST(CpuKernels, Embedding) {
  const int64_t vocab = 50, width = 33, rows = 2 * 37;
  std::vector<float> table = uniform(vocab * width, 9);
  std::vector<int32_t> ids = randomIds(rows, 10, 0, vocab - 1);
  HostTensor expected =
      reference::embedding(host(table, {vocab, width}), hostIds(ids, {2, 37}));
  std::vector<float> out(rows * width, 0.0f);
  cpu::embedding(table.data(), ids.data(), out.data(), rows, width);
  expectClose("embedding", out, expected, 0.0);
}

// Each vocabulary row sums about 50 gradient rows in float.
TEST(CpuKernels, EmbeddingGrad) {
  const int64_t rows = 1000, width = 40, vocab = 23;
  std::vector<float> grad = uniform(rows * width, 11);
  // Ids below 20 only: the last vocabulary rows must come out zero.
  std::vector<int32_t> ids = randomIds(rows, 12, 0, 19);
  HostTensor expected = reference::embeddingGrad(host(grad, {rows, width}),
                                              hostIds(ids, {rows}), vocab);
  std::vector<float> out(vocab * width, 1.0f); // must be overwritten
  cpu::embeddingGrad(grad.data(), ids.data(), out.data(), rows, width, vocab);
  expectClose("embeddingGrad", out, expected, 1e-5);
}

// One float rounding of a double sin/cos.
TEST(CpuKernels, PositionalEncoding) {
  for (int64_t width : {64, 50}) {
    const int64_t positions = 300;
    HostTensor expected = reference::positionalEncoding(positions, width);
    std::vector<float> out(positions * width, 0.0f);
    cpu::positionalEncoding(out.data(), positions, width);
    expectClose("positionalEncoding width " + std::to_string(width), out,
                expected, 1e-6);
  }
}

TEST(CpuKernels, PaddingMask) {
  const int64_t count = 2 * 37;
  std::vector<int32_t> ids = randomIds(count, 13, 0, 5); // about 1/6 pads
  HostTensor expected = reference::paddingMask(hostIds(ids, {2, 37}), 0);
  std::vector<float> out(count, 1.0f);
  cpu::paddingMask(ids.data(), out.data(), count, 0);
  expectClose("paddingMask", out, expected, 0.0);
}

TEST(CpuKernels, CausalMask) {
  const int64_t size = 37;
  HostTensor expected = reference::causalMask(size);
  std::vector<float> out(size * size, 1.0f);
  cpu::causalMask(out.data(), size);
  expectClose("causalMask", out, expected, 0.0);
}

//===--- NormKernels.cpp --------------------------------------------------===//

// 200 rows of 97 (parallel, odd width); float sums over a row of 97.
constexpr int64_t kNormRows = 200, kNormWidth = 97;
constexpr float kEpsilon = 1e-5f;

TEST(CpuKernels, Softmax) {
  std::vector<float> input = uniform(kNormRows * kNormWidth, 14, -5.0f, 5.0f);
  HostTensor expected =
      reference::softmax(host(input, {kNormRows, kNormWidth}), 1);
  std::vector<float> out(input.size(), 0.0f);
  cpu::softmax(input.data(), out.data(), kNormRows, kNormWidth);
  expectClose("softmax", out, expected, 1e-5);
}

TEST(CpuKernels, SoftmaxGrad) {
  HostTensor y = reference::softmax(
      host(uniform(kNormRows * kNormWidth, 15, -3.0f, 3.0f),
           {kNormRows, kNormWidth}),
      1);
  std::vector<float> output = toFloats(y);
  std::vector<float> grad = uniform(output.size(), 16);
  // The reference reads the same float-rounded y.
  HostTensor expected = reference::softmaxGrad(
      host(output, {kNormRows, kNormWidth}),
      host(grad, {kNormRows, kNormWidth}), 1);
  std::vector<float> out(output.size(), 0.0f);
  cpu::softmaxGrad(output.data(), grad.data(), out.data(), kNormRows,
                   kNormWidth);
  expectClose("softmaxGrad", out, expected, 1e-5);
}

/// The reference's mean and rstd of `input` rows: residualLayerNorm with a
/// zero sublayer normalizes the residual itself.
reference::ResidualLayerNormResult referenceStatistics(const HostTensor &input,
                                                    const HostTensor &gamma,
                                                    const HostTensor &beta) {
  return reference::residualLayerNorm(input, HostTensor(input.shape), gamma, beta,
                                   reference::Dropout{}, kEpsilon);
}

TEST(CpuKernels, LayerNorm) {
  std::vector<float> input = uniform(kNormRows * kNormWidth, 17, -2.0f, 3.0f);
  std::vector<float> gamma = uniform(kNormWidth, 18, 0.5f, 1.5f);
  std::vector<float> beta = uniform(kNormWidth, 19);
  HostTensor x = host(input, {kNormRows, kNormWidth});
  HostTensor g = host(gamma, {kNormWidth}), b = host(beta, {kNormWidth});
  HostTensor expected = reference::layerNorm(x, g, b, kEpsilon);
  reference::ResidualLayerNormResult stats = referenceStatistics(x, g, b);
  std::vector<float> out(input.size(), 0.0f), mean(kNormRows, 0.0f),
      rstd(kNormRows, 0.0f);
  cpu::layerNorm(input.data(), gamma.data(), beta.data(), out.data(),
                 mean.data(), rstd.data(), kNormRows, kNormWidth, kEpsilon);
  expectClose("layerNorm", out, expected, 1e-5);
  expectClose("layerNorm mean", mean, stats.mean, 1e-5);
  expectClose("layerNorm rstd", rstd, stats.rstd, 1e-5);
  // Without statistics.
  std::vector<float> again(input.size(), 0.0f);
  cpu::layerNorm(input.data(), gamma.data(), beta.data(), again.data(),
                 nullptr, nullptr, kNormRows, kNormWidth, kEpsilon);
  EXPECT_EQ(again, out);
}

// dgamma and dbeta sum 200 rows (in double); dx cancels three terms of a
// row, so errors relative to the row's scale reach a few float roundings.
TEST(CpuKernels, LayerNormGrad) {
  std::vector<float> input = uniform(kNormRows * kNormWidth, 20, -2.0f, 3.0f);
  std::vector<float> gamma = uniform(kNormWidth, 21, 0.5f, 1.5f);
  std::vector<float> grad = uniform(input.size(), 22);
  reference::LayerNormGrads expected = reference::layerNormGrad(
      host(grad, {kNormRows, kNormWidth}), host(input, {kNormRows, kNormWidth}),
      host(gamma, {kNormWidth}), kEpsilon);
  std::vector<float> dx(input.size(), 0.0f), dgamma(kNormWidth, 0.0f),
      dbeta(kNormWidth, 0.0f);
  cpu::layerNormGrad(grad.data(), input.data(), gamma.data(), dx.data(),
                     dgamma.data(), dbeta.data(), kNormRows, kNormWidth,
                     kEpsilon);
  expectClose("layerNormGrad input", dx, expected.input, 2e-5);
  expectClose("layerNormGrad gamma", dgamma, expected.gamma, 2e-5);
  expectClose("layerNormGrad beta", dbeta, expected.beta, 2e-5);
}

cpu::Dropout cpuDropout(float rate) { return {1234, 7, 3, rate}; }
reference::Dropout interpDropout(float rate) { return {1234, 7, 3, rate}; }

TEST(CpuKernels, ResidualLayerNorm) {
  std::vector<float> residual = uniform(kNormRows * kNormWidth, 23);
  std::vector<float> sublayer = uniform(residual.size(), 24, -2.0f, 2.0f);
  std::vector<float> gamma = uniform(kNormWidth, 25, 0.5f, 1.5f);
  std::vector<float> beta = uniform(kNormWidth, 26);
  std::vector<float> outputs[2];
  for (float rate : {0.0f, 0.1f}) {
    reference::ResidualLayerNormResult expected = reference::residualLayerNorm(
        host(residual, {kNormRows, kNormWidth}),
        host(sublayer, {kNormRows, kNormWidth}), host(gamma, {kNormWidth}),
        host(beta, {kNormWidth}), interpDropout(rate), kEpsilon);
    std::vector<float> out(residual.size(), 0.0f), mean(kNormRows, 0.0f),
        rstd(kNormRows, 0.0f);
    cpu::residualLayerNorm(residual.data(), sublayer.data(), gamma.data(),
                           beta.data(), out.data(), mean.data(), rstd.data(),
                           kNormRows, kNormWidth, cpuDropout(rate), kEpsilon);
    std::string tag = " rate " + std::to_string(rate);
    expectClose("residualLayerNorm" + tag, out, expected.result, 1e-5);
    expectClose("residualLayerNorm mean" + tag, mean, expected.mean, 1e-5);
    expectClose("residualLayerNorm rstd" + tag, rstd, expected.rstd, 1e-5);
    outputs[rate > 0.0f] = out;
  }
  EXPECT_NE(outputs[0], outputs[1]) << "dropout 0.1 changed nothing";
}

TEST(CpuKernels, ResidualLayerNormGrad) {
  std::vector<float> residual = uniform(kNormRows * kNormWidth, 27);
  std::vector<float> sublayer = uniform(residual.size(), 28, -2.0f, 2.0f);
  std::vector<float> gamma = uniform(kNormWidth, 29, 0.5f, 1.5f);
  std::vector<float> grad = uniform(residual.size(), 30);
  HostTensor res = host(residual, {kNormRows, kNormWidth});
  HostTensor sub = host(sublayer, {kNormRows, kNormWidth});
  HostTensor g = host(gamma, {kNormWidth});
  for (float rate : {0.0f, 0.1f}) {
    // Both sides read the same (float-rounded) saved statistics.
    reference::ResidualLayerNormResult forward = reference::residualLayerNorm(
        res, sub, g, HostTensor({kNormWidth}), interpDropout(rate), kEpsilon);
    std::vector<float> mean = toFloats(forward.mean),
                       rstd = toFloats(forward.rstd);
    reference::ResidualLayerNormGrads expected = reference::residualLayerNormGrad(
        host(grad, {kNormRows, kNormWidth}), res, sub, g,
        host(mean, {kNormRows}), host(rstd, {kNormRows}), interpDropout(rate));
    std::vector<float> dres(residual.size(), 0.0f), dsub(residual.size(), 0.0f),
        dgamma(kNormWidth, 0.0f), dbeta(kNormWidth, 0.0f);
    cpu::residualLayerNormGrad(grad.data(), residual.data(), sublayer.data(),
                               gamma.data(), mean.data(), rstd.data(),
                               dres.data(), dsub.data(), dgamma.data(),
                               dbeta.data(), kNormRows, kNormWidth,
                               cpuDropout(rate));
    std::string tag = " rate " + std::to_string(rate);
    // As layerNormGrad.
    expectClose("residualLayerNormGrad residual" + tag, dres,
                expected.residual, 2e-5);
    expectClose("residualLayerNormGrad sublayer" + tag, dsub,
                expected.sublayer, 2e-5);
    expectClose("residualLayerNormGrad gamma" + tag, dgamma, expected.gamma,
                2e-5);
    expectClose("residualLayerNormGrad beta" + tag, dbeta, expected.beta,
                2e-5);
  }
}

//===--- Attention.cpp ----------------------------------------------------===//

struct AttentionCase {
  const char *name;
  cpu::AttentionShape shape;
  bool mask, causal;
  float rate;
};

// Queries 37 = 2 full tiles of 16 and a partial one; keys 150 = 2 full
// tiles of 64 and a partial one (the online softmax rescales), or 53 (one
// partial tile). Causal self-attention over 150 skips the tiles above the
// diagonal.
const AttentionCase kAttentionCases[] = {
    {"cross masked", {2, 3, 37, 150, 24, 20}, true, false, 0.0f},
    {"cross masked dropout", {2, 3, 37, 150, 24, 20}, true, false, 0.1f},
    {"self causal masked dropout", {2, 2, 150, 150, 16, 16}, true, true, 0.1f},
    {"causal unmasked", {1, 2, 37, 53, 8, 12}, false, true, 0.0f},
};

/// Random q, k, v, mask and output gradient of one case, and both sides'
/// configurations.
struct AttentionInputs {
  std::vector<float> q, k, v, mask, grad;
  HostTensor hq, hk, hv, hmask, hgrad;
  cpu::AttentionConfig cpuConfig;
  reference::AttentionConfig interpConfig;

  explicit AttentionInputs(const AttentionCase &c) {
    const cpu::AttentionShape &s = c.shape;
    int64_t heads = s.batch * s.heads;
    // Scores of standard deviation 0.75 (up to about +-3): rows far from
    // uniform, so the running max and the rescaling matter.
    q = uniform(heads * s.queries * s.keyDim, 31, -1.5f, 1.5f);
    k = uniform(heads * s.keys * s.keyDim, 32, -1.5f, 1.5f);
    v = uniform(heads * s.keys * s.valueDim, 33);
    grad = uniform(heads * s.queries * s.valueDim, 34);
    // About one key in five padded, never key 0: every row keeps an
    // unmasked key (see Attention.cpp on fully masked rows).
    std::vector<int32_t> pads = randomIds(s.batch * s.keys, 35, 0, 4);
    for (int64_t i = 0; i < s.batch * s.keys; ++i)
      mask.push_back(i % s.keys != 0 && pads[i] == 0 ? cpu::kMaskedScore
                                                      : 0.0f);
    hq = host(q, {s.batch, s.heads, s.queries, s.keyDim});
    hk = host(k, {s.batch, s.heads, s.keys, s.keyDim});
    hv = host(v, {s.batch, s.heads, s.keys, s.valueDim});
    hgrad = host(grad, {s.batch, s.heads, s.queries, s.valueDim});
    hmask = host(mask, {s.batch, s.keys});
    float scale = 1.0f / std::sqrt(static_cast<float>(s.keyDim));
    cpuConfig.mask = c.mask ? mask.data() : nullptr;
    cpuConfig.causal = c.causal;
    cpuConfig.scale = scale;
    cpuConfig.dropout = cpuDropout(c.rate);
    interpConfig.mask = c.mask ? &hmask : nullptr;
    interpConfig.causal = c.causal;
    interpConfig.scale = scale;
    interpConfig.dropout = interpDropout(c.rate);
  }
};

// Scores, exponentials and the weighted sum of up to 150 values in float.
constexpr double kAttentionTolerance = 1e-5;

TEST(CpuKernels, Attention) {
  for (const AttentionCase &c : kAttentionCases) {
    AttentionInputs in(c);
    const cpu::AttentionShape &s = c.shape;
    reference::AttentionResult expected =
        reference::attention(in.hq, in.hk, in.hv, in.interpConfig);
    int64_t heads = s.batch * s.heads;
    std::vector<float> out(heads * s.queries * s.valueDim, 0.0f),
        lse(heads * s.queries, 0.0f);
    cpu::attention(in.q.data(), in.k.data(), in.v.data(), out.data(),
                   lse.data(), s, in.cpuConfig);
    expectClose(std::string("attention output ") + c.name, out,
                expected.output, kAttentionTolerance);
    expectClose(std::string("attention lse ") + c.name, lse, expected.lse,
                kAttentionTolerance);
    if (c.rate > 0.0f) {
      // Dropout must actually drop: the same inputs without it differ.
      cpu::AttentionConfig kept = in.cpuConfig;
      kept.dropout.rate = 0.0f;
      std::vector<float> plain(out.size(), 0.0f), plainLse(lse.size(), 0.0f);
      cpu::attention(in.q.data(), in.k.data(), in.v.data(), plain.data(),
                     plainLse.data(), s, kept);
      double diff = 0.0;
      for (size_t i = 0; i < out.size(); ++i)
        diff = std::max(diff, static_cast<double>(std::abs(out[i] - plain[i])));
      EXPECT_GT(diff, 1e-2) << c.name << ": dropout changed nothing";
      // The normalizer is the undropped sum: lse does not see dropout.
      EXPECT_EQ(lse, plainLse) << c.name;
    }
  }
}

// Each gradient sums up to 150 terms p (dp - D) computed in float; D comes
// from the float output rather than the reference's sum of p dp.
constexpr double kAttentionGradTolerance = 1e-5;

TEST(CpuKernels, AttentionGrad) {
  for (const AttentionCase &c : kAttentionCases) {
    AttentionInputs in(c);
    const cpu::AttentionShape &s = c.shape;
    reference::AttentionResult forward =
        reference::attention(in.hq, in.hk, in.hv, in.interpConfig);
    reference::AttentionGrads expected = reference::attentionGrad(
        in.hgrad, in.hq, in.hk, in.hv, forward.lse, in.interpConfig);
    // The CPU backward reads the CPU forward's output and lse, as in a
    // generated step.
    int64_t heads = s.batch * s.heads;
    std::vector<float> out(heads * s.queries * s.valueDim, 0.0f),
        lse(heads * s.queries, 0.0f);
    cpu::attention(in.q.data(), in.k.data(), in.v.data(), out.data(),
                   lse.data(), s, in.cpuConfig);
    // Outputs start as garbage: the kernel must write every element.
    std::vector<float> dq(in.q.size(), 7.0f), dk(in.k.size(), 7.0f),
        dv(in.v.size(), 7.0f);
    cpu::attentionGrad(in.grad.data(), in.q.data(), in.k.data(), in.v.data(),
                       out.data(), lse.data(), dq.data(), dk.data(), dv.data(),
                       s, in.cpuConfig);
    expectClose(std::string("attentionGrad query ") + c.name, dq,
                expected.query, kAttentionGradTolerance);
    expectClose(std::string("attentionGrad key ") + c.name, dk, expected.key,
                kAttentionGradTolerance);
    expectClose(std::string("attentionGrad value ") + c.name, dv,
                expected.value, kAttentionGradTolerance);
  }
}

//===--- Loss.cpp ---------------------------------------------------------===//

// 64 rows of 1000 classes (parallel); some targets ignored.
constexpr int64_t kLossRows = 64, kClasses = 1000;
constexpr int32_t kIgnore = 0;

TEST(CpuKernels, CrossEntropy) {
  std::vector<float> logits = uniform(kLossRows * kClasses, 36, -4.0f, 4.0f);
  std::vector<int32_t> targets = randomIds(kLossRows, 37, 0, 7);
  for (int32_t &t : targets) // ignored when 0, else a class anywhere
    t = t == 0 ? kIgnore : t * 111;
  HostTensor hl = host(logits, {kLossRows, kClasses});
  HostTensor ht = hostIds(targets, {kLossRows});
  for (float smoothing : {0.0f, 0.1f}) {
    reference::CrossEntropyResult expected =
        reference::crossEntropy(hl, ht, smoothing, kIgnore);
    float loss = 0.0f;
    int32_t tokens = -1;
    cpu::crossEntropy(logits.data(), targets.data(), &loss, &tokens, kLossRows,
                      kClasses, smoothing, kIgnore);
    EXPECT_EQ(tokens, static_cast<int32_t>(expected.tokens[0]));
    EXPECT_LT(tokens, kLossRows);
    // Double row sums and total: one float rounding of the result.
    expectClose("crossEntropy smoothing " + std::to_string(smoothing), {loss},
                expected.loss, 1e-6);
  }
  // Every target ignored: zero loss over zero tokens.
  std::vector<int32_t> ignored(kLossRows, kIgnore);
  float loss = 1.0f;
  int32_t tokens = -1;
  cpu::crossEntropy(logits.data(), ignored.data(), &loss, &tokens, kLossRows,
                    kClasses, 0.1f, kIgnore);
  EXPECT_EQ(loss, 0.0f);
  EXPECT_EQ(tokens, 0);
}

// softmax_c - q_c in float from a double log-sum-exp.
TEST(CpuKernels, CrossEntropyGrad) {
  std::vector<float> logits = uniform(kLossRows * kClasses, 38, -4.0f, 4.0f);
  std::vector<int32_t> targets = randomIds(kLossRows, 39, 0, 7);
  for (int32_t &t : targets)
    t = t == 0 ? kIgnore : t * 111;
  HostTensor hl = host(logits, {kLossRows, kClasses});
  HostTensor ht = hostIds(targets, {kLossRows});
  const float lossGrad = 1.7f;
  for (float smoothing : {0.0f, 0.1f}) {
    HostTensor expected =
        reference::crossEntropyGrad(lossGrad, hl, ht, smoothing, kIgnore);
    std::vector<float> out(logits.size(), 5.0f); // ignored rows must be 0
    cpu::crossEntropyGrad(lossGrad, logits.data(), targets.data(), out.data(),
                          kLossRows, kClasses, smoothing, kIgnore);
    expectClose("crossEntropyGrad smoothing " + std::to_string(smoothing), out,
                expected, 1e-5);
  }
  std::vector<int32_t> ignored(kLossRows, kIgnore);
  std::vector<float> out(logits.size(), 5.0f);
  cpu::crossEntropyGrad(lossGrad, logits.data(), ignored.data(), out.data(),
                        kLossRows, kClasses, 0.1f, kIgnore);
  EXPECT_TRUE(std::all_of(out.begin(), out.end(),
                          [](float x) { return x == 0.0f; }));
}

//===--- Adam.cpp ---------------------------------------------------------===//

// A few float operations per element. Parameters are of the update's own
// size so their comparison measures the update, not the parameter.
TEST(CpuKernels, AdamUpdate) {
  const int64_t sizes[] = {1000, 37, 40000}; // many chunks, a tiny tensor
  const float lr = 1e-2f, beta1 = 0.9f, beta2 = 0.98f, epsilon = 1e-9f;
  for (int32_t step : {1, 7}) {
    std::vector<std::vector<float>> p, m, v, g;
    for (size_t x = 0; x < 3; ++x) {
      uint32_t seed = 40 + 4 * static_cast<uint32_t>(x);
      p.push_back(uniform(sizes[x], seed, -0.02f, 0.02f));
      m.push_back(uniform(sizes[x], seed + 1, -0.1f, 0.1f));
      v.push_back(uniform(sizes[x], seed + 2, 0.0f, 0.01f));
      g.push_back(uniform(sizes[x], seed + 3));
    }
    std::vector<cpu::AdamTensor> tensors;
    std::vector<HostTensor> hp, hm, hv;
    for (size_t x = 0; x < 3; ++x) {
      hp.push_back(host(p[x], {sizes[x]}));
      hm.push_back(host(m[x], {sizes[x]}));
      hv.push_back(host(v[x], {sizes[x]}));
      reference::adamUpdate(hp[x], hm[x], hv[x], host(g[x], {sizes[x]}), lr, step,
                         beta1, beta2, epsilon);
      tensors.push_back({p[x].data(), m[x].data(), v[x].data(), g[x].data(),
                         sizes[x]});
    }
    cpu::adamUpdate(tensors.data(), 3, lr, step, beta1, beta2, epsilon);
    for (size_t x = 0; x < 3; ++x) {
      std::string tag = " step " + std::to_string(step) + " tensor " +
                        std::to_string(x);
      expectClose("adam param" + tag, p[x], hp[x], 1e-5);
      expectClose("adam moment1" + tag, m[x], hm[x], 1e-5);
      expectClose("adam moment2" + tag, v[x], hv[x], 1e-5);
    }
  }
}

} // namespace
