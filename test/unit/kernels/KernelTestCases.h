//===- KernelTestCases.h - problems both kernel backends run ----*- C++ -*-===//
//
// The inputs the CPU tests (test/unit/kernels/cpu) and the CUDA tests
// (test/unit/kernels/cuda) feed the same op family: the same shapes and
// seeded values (test/unit/RandomInputs.h), so that a case is the same
// problem on every backend. Shapes are not multiples of the kernels' tiles.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TEST_UNIT_KERNELS_KERNELTESTCASES_H
#define TGC_TEST_UNIT_KERNELS_KERNELTESTCASES_H

#include "runtime/kernels/cpu/Kernels.h"
#include "test/unit/RandomInputs.h"
#include "test/unit/kernels/KernelTestSupport.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace tgc::test {

//===--- Gemm -------------------------------------------------------------===//

/// One batched matmul [batch, m, k] x [k, n] of the transposition sweep;
/// a shared right-hand side has no batch dimension.
struct MatmulCase {
  static constexpr int64_t batch = 3, m = 37, n = 29, k = 53;
  bool sharedRhs, transposeLhs, transposeRhs;
  std::vector<float> lhs, rhs;

  std::vector<int64_t> lhsShape() const {
    return {batch, transposeLhs ? k : m, transposeLhs ? m : k};
  }
  std::vector<int64_t> rhsShape() const {
    if (sharedRhs)
      return {transposeRhs ? n : k, transposeRhs ? k : n};
    return {batch, transposeRhs ? n : k, transposeRhs ? k : n};
  }
  std::string name() const {
    return "matmul shared=" + std::to_string(sharedRhs) +
           " transposeLhs=" + std::to_string(transposeLhs) +
           " transposeRhs=" + std::to_string(transposeRhs);
  }
};

/// Calls `test` on every combination of a shared right-hand side and
/// either operand transposed.
template <typename Test> void forEachMatmulCase(Test test) {
  const int64_t batch = MatmulCase::batch, m = MatmulCase::m, n = MatmulCase::n,
                k = MatmulCase::k;
  for (bool shared : {false, true})
    for (bool tl : {false, true})
      for (bool tr : {false, true})
        test(MatmulCase{shared, tl, tr, uniform(batch * m * k, 1),
                        uniform((shared ? 1 : batch) * k * n, 2)});
}

//===--- Tensor -----------------------------------------------------------===//

/// The elements of a tensor of `shape` (1 for a scalar).
inline int64_t countOf(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  return count;
}

struct TransposeCase {
  std::vector<int64_t> shape, permutation;
};
/// Heads split ([B, S, H, D] -> [B, H, S, D]), a 2-D transpose, and a
/// permutation whose innermost output dimension is strided in the input.
inline const std::vector<TransposeCase> kTransposeCases = {
    {{3, 37, 4, 8}, {0, 2, 1, 3}},
    {{37, 53}, {1, 0}},
    {{3, 5, 7, 4}, {3, 1, 0, 2}},
    {{200, 3, 70}, {1, 0, 2}}};

struct BroadcastCase {
  std::vector<int64_t> inputShape, dims, resultShape;
};
/// A bias over [batch, seq, d], a padding mask over scores, a column
/// replicated along the innermost result dimension, a large case, size-1
/// input dimensions expanded (a keep-dims reduction's gradient), and a
/// scalar.
inline const std::vector<BroadcastCase> kBroadcastCases = {
    {{7}, {2}, {2, 5, 7}},
    {{2, 7}, {0, 3}, {2, 4, 7, 7}},
    {{5}, {0}, {5, 6}},
    {{70}, {2}, {4, 150, 70}},
    {{1, 7}, {0, 1}, {4, 7}},
    {{37, 1}, {0, 1}, {37, 53}},
    {{2, 1, 5}, {0, 1, 3}, {2, 3, 4, 5}},
    {{}, {}, {3, 4}}};

struct ReduceCase {
  std::vector<int64_t> shape, dims;

  int rank() const { return static_cast<int>(shape.size()); }
  /// The elements of the input.
  int64_t count() const {
    int64_t elements = 1;
    for (int64_t size : shape)
      elements *= size;
    return elements;
  }
  /// The kernels' per-dimension flags (rank <= 8).
  std::array<bool, 8> reduced() const {
    std::array<bool, 8> flags = {};
    for (int64_t d : dims)
      flags[d] = true;
    return flags;
  }
  /// The elements of the result: the kept dimensions' product.
  int64_t outCount() const {
    const std::array<bool, 8> flags = reduced();
    int64_t count = 1;
    for (int d = 0; d < rank(); ++d)
      count *= flags[d] ? 1 : shape[d];
    return count;
  }
};
inline const std::vector<ReduceCase> kReduceCases = {
    {{4, 37, 6, 5}, {0}},
    {{4, 37, 6, 5}, {3}},
    {{4, 37, 6, 5}, {1, 3}},
    {{4, 37, 6, 5}, {0, 2}},
    {{4, 37, 6, 5}, {0, 1, 2, 3}},
    {{4, 1, 37, 5}, {1}},
    {{600, 70}, {0}},
    {{600, 70}, {1}},
    {{3, 200, 70}, {1}},
    // Enough rows that the GPU splits them into slices (bias gradients).
    {{9000, 70}, {0}},
    {{6000, 2, 40}, {0, 1}}};

/// Every reduction, with the name the tests print.
struct NamedReduction {
  runtime::Reduction kind;
  const char *name;
};
inline constexpr NamedReduction kReductions[] = {
    {runtime::Reduction::Sum, "sum"},
    {runtime::Reduction::Max, "max"},
    {runtime::Reduction::Mean, "mean"}};

/// A tensor seen as [outer, extent, inner] and the block of `length`
/// positions at `index` of its middle dimension (slices and their stores):
/// a middle block, the first positions, a last position of single floats,
/// and a large block (the CPU's parallel copies).
struct BlockCase {
  int64_t outer, length, extent, inner, index;
};
inline const std::vector<BlockCase> kBlockCases = {{6, 3, 20, 24, 7},
                                                   {1, 5, 37, 53, 0},
                                                   {70, 1, 9, 1, 8},
                                                   {3, 150, 200, 70, 50}};

/// A rotary embedding of q or k [rows of `positions`, width]: a large case
/// (the CPU's parallel path, LLaMA's head width), the decoder's step (one
/// position from 137, inverse, a large base), and narrow heads.
struct RotaryCase {
  int64_t rows, positions, width;
  double base;
  bool inverse;
  int64_t first;
};
inline const std::vector<RotaryCase> kRotaryCases = {
    {4 * 8 * 200, 200, 128, 10000.0, false, 0},
    {2 * 4, 1, 64, 500000.0, true, 137},
    {3 * 37, 37, 6, 10000.0, true, 0}};

/// A gather along the middle of [outer, extent, inner] by `count` indices:
/// rows of a table (an embedding's shape), a middle dimension, the last
/// dimension, and a large case (the CPU's parallel paths).
struct GatherCase {
  int64_t outer, extent, count, inner;
};
inline const std::vector<GatherCase> kGatherCases = {{1, 50, 74, 33},
                                                     {6, 20, 13, 24},
                                                     {70, 16, 40, 1},
                                                     {3, 200, 500, 70}};

/// The case's indices from `seed`, in [0, extent); with `outside`, two of
/// them (-1 and extent) outside it where there are enough: compiled kernels
/// must neither read nor write there.
inline std::vector<int32_t> gatherIndices(const GatherCase &c, uint32_t seed,
                                          bool outside) {
  std::vector<int32_t> indices =
      randomIds(c.count, seed, 0, static_cast<int32_t>(c.extent - 1));
  if (outside && c.count > 10) {
    indices[3] = -1;
    indices[7] = static_cast<int32_t>(c.extent);
  }
  return indices;
}

//===--- Norm -------------------------------------------------------------===//

/// residualLayerNorm's inputs from seeds `seed` .. `seed + 2`.
struct ResidualNormInputs {
  std::vector<float> residual, sublayer, gamma;

  ResidualNormInputs(int64_t rows, int64_t width, uint32_t seed)
      : residual(uniform(rows * width, seed)),
        sublayer(uniform(rows * width, seed + 1, -2.0f, 2.0f)),
        gamma(uniform(width, seed + 2, 0.5f, 1.5f)) {}
};

//===--- Attention --------------------------------------------------------===//

/// An additive score bias: none, one per (batch, head), one per head
/// shared by the batch, or one [Sq, Sk] shared by every head.
enum class ScoreBias { None, Full, PerHead, Shared };

struct AttentionCase {
  const char *name;
  int64_t batch, heads, queries, keys, keyDim, valueDim;
  bool mask, causal;
  float rate;
  /// The decoder's step: query i sits at key position causalOffset + i.
  int64_t causalOffset = 0;
  ScoreBias bias = ScoreBias::None;
  /// Every key of batch element 1 masked (a padding row of a partial
  /// batch): its rows' lse rounds to the mask's -1e9 in f32.
  bool batch1Padded = false;
};

/// Queries 37: two full blocks of 16 and a partial one; keys 150: full key
/// tiles (64 keys on the CPU, 32 on the GPU) and a partial one (the online
/// softmax rescales), or 53 (one partial tile). Causal self-attention skips
/// the keys after each block's last query.
inline constexpr AttentionCase kAttentionCases[] = {
    {"cross masked", 2, 3, 37, 150, 24, 20, true, false, 0.0f},
    {"cross masked dropout", 2, 3, 37, 150, 24, 20, true, false, 0.1f},
    {"self causal masked dropout", 2, 2, 150, 150, 16, 16, true, true, 0.1f},
    {"causal unmasked", 1, 2, 37, 53, 8, 12, false, true, 0.0f},
    {"cross masked dropout, bias per head", 2, 3, 37, 150, 24, 20, true,
     false, 0.1f, 0, ScoreBias::PerHead},
    {"self causal, shared bias", 2, 2, 150, 150, 16, 16, false, true, 0.0f, 0,
     ScoreBias::Shared},
    {"cross, full bias", 2, 2, 37, 53, 8, 12, false, false, 0.0f, 0,
     ScoreBias::Full},
};

/// Random q, k, v, mask, score bias and output gradient of one case, and
/// the CPU kernels' configuration (its mask and bias point into `mask` and
/// `bias`: not copyable).
struct AttentionProblem {
  runtime::AttentionShape shape;
  /// [B or 1, H or 1, Sq, Sk]; empty without a bias.
  std::vector<int64_t> biasShape;
  std::vector<float> q, k, v, mask, bias, grad;
  runtime::AttentionConfig cpuConfig;

  explicit AttentionProblem(const AttentionCase &c)
      : shape{c.batch, c.heads, c.queries, c.keys, c.keyDim, c.valueDim},
        // Scores of standard deviation 0.75 (up to about +-3): rows far
        // from uniform, so the running max and the rescaling matter.
        q(uniform(c.batch * c.heads * c.queries * c.keyDim, 31, -1.5f, 1.5f)),
        k(uniform(c.batch * c.heads * c.keys * c.keyDim, 32, -1.5f, 1.5f)),
        v(uniform(c.batch * c.heads * c.keys * c.valueDim, 33)),
        mask(maskOf(c)),
        grad(uniform(c.batch * c.heads * c.queries * c.valueDim, 34)) {
    cpuConfig.mask = c.mask ? mask.data() : nullptr;
    if (c.bias != ScoreBias::None) {
      bool perBatch = c.bias == ScoreBias::Full,
           perHead = c.bias != ScoreBias::Shared;
      biasShape = {perBatch ? c.batch : 1, perHead ? c.heads : 1, c.queries,
                   c.keys};
      bias = uniform(biasSize(), 36, -2.0f, 2.0f);
      cpuConfig.bias = bias.data();
      cpuConfig.biasHeadStride = perHead ? c.queries * c.keys : 0;
      cpuConfig.biasBatchStride =
          perBatch ? biasShape[1] * c.queries * c.keys : 0;
    }
    cpuConfig.causal = c.causal;
    cpuConfig.causalOffset = c.causalOffset;
    cpuConfig.scale = scale();
    cpuConfig.dropout = testDropout(c.rate);
  }
  AttentionProblem(const AttentionProblem &) = delete;
  AttentionProblem &operator=(const AttentionProblem &) = delete;

  float scale() const {
    return 1.0f / std::sqrt(static_cast<float>(shape.keyDim));
  }
  /// Query rows: [batch, heads, queries].
  int64_t rows() const { return shape.batch * shape.heads * shape.queries; }
  int64_t biasSize() const {
    int64_t size = 1;
    for (int64_t d : biasShape)
      size *= d;
    return biasShape.empty() ? 0 : size;
  }

private:
  /// About one key in five padded, never key 0: every row keeps an
  /// unmasked key, but those of batch element 1 where the case pads it
  /// whole (see runtime/kernels/cpu/Attention.cpp on fully masked rows).
  static std::vector<float> maskOf(const AttentionCase &c) {
    std::vector<int32_t> pads = randomIds(c.batch * c.keys, 35, 0, 4);
    std::vector<float> mask;
    for (int64_t i = 0; i < c.batch * c.keys; ++i) {
      const bool padded = (c.batch1Padded && i / c.keys == 1) ||
                          (i % c.keys != 0 && pads[i] == 0);
      mask.push_back(padded ? runtime::kMaskedScore : 0.0f);
    }
    return mask;
  }
};

/// What the attention forward returns.
struct AttentionForward {
  std::vector<float> output, lse;
};

/// The CPU kernel's forward of `p` under `config`.
inline AttentionForward cpuAttention(const AttentionProblem &p,
                                     const runtime::AttentionConfig &config) {
  AttentionForward result{std::vector<float>(p.rows() * p.shape.valueDim),
                          std::vector<float>(p.rows())};
  cpu::attention(p.q.data(), p.k.data(), p.v.data(), result.output.data(),
                 result.lse.data(), p.shape, config);
  return result;
}
inline AttentionForward cpuAttention(const AttentionProblem &p) {
  return cpuAttention(p, p.cpuConfig);
}

//===--- Loss -------------------------------------------------------------===//

/// 64 rows of 1000 classes; targets kIgnore are ignored.
/// [B, A, C, D] -> [B, C, A, D]: head-major rows to sequence-major ones
/// and back (A and C swap roles).
template <typename T>
std::vector<T> swapMiddle(const std::vector<T> &x, int64_t b, int64_t a,
                          int64_t c, int64_t d) {
  std::vector<T> out(x.size());
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < a; ++j)
      for (int64_t k = 0; k < c; ++k)
        for (int64_t l = 0; l < d; ++l)
          out[((i * c + k) * a + j) * d + l] = x[((i * a + j) * c + k) * d + l];
  return out;
}

inline constexpr int64_t kLossRows = 64, kClasses = 1000;
inline constexpr int32_t kIgnore = 0;

inline std::vector<float> lossLogits(uint32_t seed) {
  return uniform(kLossRows * kClasses, seed, -4.0f, 4.0f);
}

/// About one target in eight ignored, the others classes anywhere.
inline std::vector<int32_t> lossTargets(uint32_t seed) {
  std::vector<int32_t> targets = randomIds(kLossRows, seed, 0, 7);
  for (int32_t &t : targets)
    t = t == 0 ? kIgnore : t * 111;
  return targets;
}

//===--- Adam -------------------------------------------------------------===//

/// Three tensors' parameters, moments and gradients for one multi-tensor
/// update. Parameters are of the update's own size, so that comparing them
/// measures the update, not the parameter.
struct AdamProblem {
  static constexpr int kTensors = 3;
  /// Many chunks, a tiny tensor.
  static constexpr int64_t sizes[kTensors] = {1000, 37, 40000};
  static constexpr float lr = 1e-2f, beta1 = 0.9f, beta2 = 0.98f,
                         epsilon = 1e-9f;
  std::vector<std::vector<float>> p, m, v, g;

  AdamProblem() {
    for (size_t x = 0; x < kTensors; ++x) {
      uint32_t seed = 40 + 4 * static_cast<uint32_t>(x);
      p.push_back(uniform(sizes[x], seed, -0.02f, 0.02f));
      m.push_back(uniform(sizes[x], seed + 1, -0.1f, 0.1f));
      v.push_back(uniform(sizes[x], seed + 2, 0.0f, 0.01f));
      g.push_back(uniform(sizes[x], seed + 3));
    }
  }

  /// The CPU kernel's view: pointers into p, m, v and g.
  std::vector<runtime::AdamTensor> cpuTensors() {
    std::vector<runtime::AdamTensor> tensors;
    for (size_t x = 0; x < kTensors; ++x)
      tensors.push_back(
          {p[x].data(), m[x].data(), v[x].data(), g[x].data(), sizes[x]});
    return tensors;
  }
};

} // namespace tgc::test

#endif // TGC_TEST_UNIT_KERNELS_KERNELTESTCASES_H
