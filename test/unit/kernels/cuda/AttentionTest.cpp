//===- AttentionTest.cpp - CUDA fused attention against the CPU -----------===//
//
// runtime/kernels/cuda/Attention.cu and AttentionGrad.cu: the tiled
// attention forward (with the decoder's key-cache cases) and backward,
// masked, causal and with dropout (the same dropped probabilities as the
// CPU), head sizes up to 128. Helpers and the error measure:
// KernelTestSupport.h.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cuda/KernelTestSupport.h"

#include <iterator>

namespace cpu = tgc::cpu;
namespace cuda = tgc::cuda;
using namespace tgc::test;

namespace {

struct AttentionCase {
  const char *name;
  int64_t batch, heads, queries, keys, keyDim, valueDim;
  bool mask, causal;
  float rate;
  /// The decoder's step: query i sits at key position causalOffset + i.
  int64_t causalOffset = 0;
};

// Queries 37 = 2 full blocks of 16 and a partial one; keys 150 = 4 full
// tiles of 32 and a partial one (the online softmax rescales). Causal
// self-attention skips the keys after each block's last query. Head sizes
// 64 and 128 take the shared memory past 48 KiB.
const AttentionCase kAttentionCases[] = {
    {"cross masked", 2, 3, 37, 150, 24, 20, true, false, 0.0f},
    {"cross masked dropout", 2, 3, 37, 150, 24, 20, true, false, 0.1f},
    {"self causal masked dropout", 2, 2, 150, 150, 16, 16, true, true, 0.1f},
    {"causal unmasked", 1, 2, 37, 53, 8, 12, false, true, 0.0f},
    {"head 64 masked dropout", 2, 2, 70, 90, 64, 64, true, false, 0.1f},
    {"head 128 causal dropout", 1, 2, 70, 70, 128, 128, true, true, 0.1f},
};

// The incremental decoder's attention over a key cache (forward only):
// the keys past each query's position hold stale values and must not count.
const AttentionCase kDecodingCases[] = {
    {"decoding one query at 40 of 64", 3, 2, 1, 64, 16, 16, true, true, 0.0f,
     40},
    {"decoding 3 queries at 61 of 64", 1, 2, 3, 64, 16, 16, false, true, 0.0f,
     61},
    {"decoding the first position", 2, 2, 1, 64, 64, 64, true, true, 0.0f, 0},
};

/// Random q, k, v, mask and output gradient of one case, on both sides,
/// and both sides' configurations.
struct AttentionInputs {
  cpu::AttentionShape cpuShape;
  cuda::AttentionShape cudaShape;
  std::vector<float> q, k, v, mask, grad;
  cpu::AttentionConfig cpuConfig;
  cuda::AttentionConfig cudaConfig;
  DeviceArray<float> qDevice, kDevice, vDevice, maskDevice, gradDevice;

  static std::vector<float> maskOf(const AttentionCase &c) {
    // About one key in five padded, never key 0: every row keeps an
    // unmasked key.
    std::vector<int32_t> pads = randomIds(c.batch * c.keys, 35, 0, 4);
    std::vector<float> mask;
    for (int64_t i = 0; i < c.batch * c.keys; ++i)
      mask.push_back(i % c.keys != 0 && pads[i] == 0 ? cpu::kMaskedScore
                                                     : 0.0f);
    return mask;
  }

  explicit AttentionInputs(const AttentionCase &c)
      : cpuShape{c.batch, c.heads, c.queries, c.keys, c.keyDim, c.valueDim},
        cudaShape{c.batch, c.heads, c.queries, c.keys, c.keyDim, c.valueDim},
        // Scores up to about +-3: rows far from uniform, so the running max
        // and the rescaling matter.
        q(uniform(c.batch * c.heads * c.queries * c.keyDim, 31, -1.5f, 1.5f)),
        k(uniform(c.batch * c.heads * c.keys * c.keyDim, 32, -1.5f, 1.5f)),
        v(uniform(c.batch * c.heads * c.keys * c.valueDim, 33)),
        mask(maskOf(c)),
        grad(uniform(c.batch * c.heads * c.queries * c.valueDim, 34)),
        qDevice(q), kDevice(k), vDevice(v), maskDevice(mask), gradDevice(grad) {
    float scale = 1.0f / std::sqrt(static_cast<float>(c.keyDim));
    cpuConfig.mask = c.mask ? mask.data() : nullptr;
    cpuConfig.causal = c.causal;
    cpuConfig.causalOffset = c.causalOffset;
    cpuConfig.scale = scale;
    cpuConfig.dropout = cpuDropout(c.rate);
    cudaConfig.mask = c.mask ? maskDevice.get() : nullptr;
    cudaConfig.causal = c.causal;
    cudaConfig.causalOffset = c.causalOffset;
    cudaConfig.scale = scale;
    cudaConfig.dropout = cudaDropout(c.rate);
  }

  int64_t rows() const {
    return cpuShape.batch * cpuShape.heads * cpuShape.queries;
  }
};

// Scores, exponentials and weighted sums of up to 150 values in float.
constexpr double kAttentionTolerance = 1e-4;

TEST_F(CudaKernels, Attention) {
  std::vector<AttentionCase> cases(std::begin(kAttentionCases),
                                   std::end(kAttentionCases));
  cases.insert(cases.end(), std::begin(kDecodingCases),
               std::end(kDecodingCases));
  for (const AttentionCase &c : cases) {
    AttentionInputs in(c);
    std::vector<float> out(in.rows() * c.valueDim), lse(in.rows());
    cpu::attention(in.q.data(), in.k.data(), in.v.data(), out.data(),
                   lse.data(), in.cpuShape, in.cpuConfig);
    DeviceArray<float> dout(out.size(), 7.0f), dlse(lse.size(), 7.0f);
    cuda::attention(in.qDevice.get(), in.kDevice.get(), in.vDevice.get(),
                    dout.get(), dlse.get(), in.cudaShape, in.cudaConfig);
    std::vector<float> gpuLse = dlse.read();
    expectClose(std::string("attention output ") + c.name, dout.read(), out,
                kAttentionTolerance);
    expectClose(std::string("attention lse ") + c.name, gpuLse, lse,
                kAttentionTolerance);
    if (c.rate > 0.0f) {
      // The normalizer is the undropped sum: lse does not see dropout.
      cuda::AttentionConfig kept = in.cudaConfig;
      kept.dropout.rate = 0.0f;
      DeviceArray<float> plain(out.size()), plainLse(lse.size());
      cuda::attention(in.qDevice.get(), in.kDevice.get(), in.vDevice.get(),
                      plain.get(), plainLse.get(), in.cudaShape, kept);
      EXPECT_EQ(plainLse.read(), gpuLse) << c.name;
    }
  }
}

// With v the identity (keys = value width) and no mask, out_ij = p_ij f_ij /
// l_i: zero exactly where dropout dropped probability (i, j). Both sides
// must drop the same ones, indexed flat into [B, H, Sq, Sk].
TEST_F(CudaKernels, AttentionDropoutMask) {
  const AttentionCase c{
      "identity values", 2, 3, 37, 70, 16, 70, false, false, 0.3f};
  AttentionInputs in(c);
  for (int64_t bh = 0; bh < c.batch * c.heads; ++bh)
    for (int64_t j = 0; j < c.keys; ++j)
      for (int64_t col = 0; col < c.valueDim; ++col)
        in.v[(bh * c.keys + j) * c.valueDim + col] = j == col ? 1.0f : 0.0f;
  DeviceArray<float> identity(in.v);
  std::vector<float> out(in.rows() * c.valueDim), lse(in.rows());
  cpu::attention(in.q.data(), in.k.data(), in.v.data(), out.data(), lse.data(),
                 in.cpuShape, in.cpuConfig);
  DeviceArray<float> dout(out.size()), dlse(lse.size());
  cuda::attention(in.qDevice.get(), in.kDevice.get(), identity.get(),
                  dout.get(), dlse.get(), in.cudaShape, in.cudaConfig);
  std::vector<float> probabilities = dout.read();
  expectSameZeros("attention dropout mask", probabilities, out);
  expectClose("attention dropped probabilities", probabilities, out,
              kAttentionTolerance);
}

// Each gradient sums up to 150 terms p (dp - D) in float, in different
// orders on the two sides.
constexpr double kAttentionGradTolerance = 1e-4;

TEST_F(CudaKernels, AttentionGrad) {
  for (const AttentionCase &c : kAttentionCases) {
    AttentionInputs in(c);
    // Each side's backward reads its own forward's output and lse, as in a
    // generated step.
    std::vector<float> out(in.rows() * c.valueDim), lse(in.rows());
    cpu::attention(in.q.data(), in.k.data(), in.v.data(), out.data(),
                   lse.data(), in.cpuShape, in.cpuConfig);
    std::vector<float> dq(in.q.size()), dk(in.k.size()), dv(in.v.size());
    cpu::attentionGrad(in.grad.data(), in.q.data(), in.k.data(), in.v.data(),
                       out.data(), lse.data(), dq.data(), dk.data(), dv.data(),
                       in.cpuShape, in.cpuConfig);
    DeviceArray<float> dout(out.size()), dlse(lse.size());
    cuda::attention(in.qDevice.get(), in.kDevice.get(), in.vDevice.get(),
                    dout.get(), dlse.get(), in.cudaShape, in.cudaConfig);
    // Outputs start as garbage: the kernels must write every element.
    DeviceArray<float> gq(dq.size(), 7.0f), gk(dk.size(), 7.0f),
        gv(dv.size(), 7.0f);
    cuda::attentionGrad(in.gradDevice.get(), in.qDevice.get(), in.kDevice.get(),
                        in.vDevice.get(), dout.get(), dlse.get(), gq.get(),
                        gk.get(), gv.get(), in.cudaShape, in.cudaConfig);
    expectClose(std::string("attentionGrad query ") + c.name, gq.read(), dq,
                kAttentionGradTolerance);
    expectClose(std::string("attentionGrad key ") + c.name, gk.read(), dk,
                kAttentionGradTolerance);
    expectClose(std::string("attentionGrad value ") + c.name, gv.read(), dv,
                kAttentionGradTolerance);
  }
}

} // namespace
