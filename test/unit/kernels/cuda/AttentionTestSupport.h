//===- AttentionTestSupport.h - attention problems on both sides -*- C++
//-*-===//
//
// What the CUDA attention tests share: a problem's inputs on the device,
// and the CPU kernels' forward and backward on bf16 q, k, v (the
// expectation of the bf16 and bf16-products tests).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TEST_UNIT_KERNELS_CUDA_ATTENTIONTESTSUPPORT_H
#define TGC_TEST_UNIT_KERNELS_CUDA_ATTENTIONTESTSUPPORT_H

#include "test/unit/kernels/cuda/KernelTestSupport.h"

namespace tgc::test {

/// A problem's inputs on the device, and the GPU's configuration: the
/// CPU's but for the pointers, which point to the device's copies.
struct AttentionInputs : AttentionProblem {
  DeviceArray<float> qDevice, kDevice, vDevice, maskDevice, biasDevice,
      gradDevice;
  cuda::AttentionConfig cudaConfig;

  explicit AttentionInputs(const AttentionCase &c)
      : AttentionProblem(c), qDevice(q), kDevice(k), vDevice(v),
        maskDevice(mask), biasDevice(bias), gradDevice(grad),
        cudaConfig(cpuConfig) {
    cudaConfig.mask = c.mask ? maskDevice.get() : nullptr;
    cudaConfig.bias = bias.empty() ? nullptr : biasDevice.get();
  }
};

/// One side's attention forward and backward on bf16 q, k, v.
struct Bf16AttentionResults {
  AttentionForward forward;
  std::vector<float> dq, dk, dv;
};

inline Bf16AttentionResults
cpuBf16Attention(const AttentionInputs &in, const std::vector<runtime::Bf16> &q,
                 const std::vector<runtime::Bf16> &k,
                 const std::vector<runtime::Bf16> &v,
                 const cpu::AttentionConfig &config) {
  Bf16AttentionResults r{{std::vector<float>(in.rows() * in.shape.valueDim),
                          std::vector<float>(in.rows())},
                         std::vector<float>(q.size()),
                         std::vector<float>(k.size()),
                         std::vector<float>(v.size())};
  cpu::attention(q.data(), k.data(), v.data(), r.forward.output.data(),
                 r.forward.lse.data(), in.shape, config);
  cpu::attentionGrad(in.grad.data(), q.data(), k.data(), v.data(),
                     r.forward.output.data(), r.forward.lse.data(), r.dq.data(),
                     r.dk.data(), r.dv.data(), in.shape, config);
  return r;
}

/// tg-fold-bf16-roundings' bf16 output and gradients: cuda::attention and
/// cuda::attentionGrad writing bf16 give the f32 results `out`, `dq`, `dk`,
/// `dv` of the same q, k, v, grad and config rounded once.
inline void expectBf16ResultsRoundedOnce(
    const std::string &what, const runtime::Bf16 *q, const runtime::Bf16 *k,
    const runtime::Bf16 *v, const float *grad, float *lse,
    const cuda::AttentionShape &shape, const cuda::AttentionConfig &config,
    const std::vector<float> &out, const std::vector<float> &dq,
    const std::vector<float> &dk, const std::vector<float> &dv) {
  DeviceArray<runtime::Bf16> roundedOut(out.size()), rq(dq.size()),
      rk(dk.size()), rv(dv.size());
  cuda::attention(q, k, v, roundedOut.get(), lse, shape, config);
  expectRoundedOnce(what + " output in bf16", roundedOut.read(), out);
  cuda::attentionGrad(grad, q, k, v, roundedOut.get(), lse, rq.get(), rk.get(),
                      rv.get(), shape, config);
  expectRoundedOnce(what + " query grad in bf16", rq.read(), dq);
  expectRoundedOnce(what + " key grad in bf16", rk.read(), dk);
  expectRoundedOnce(what + " value grad in bf16", rv.read(), dv);
}

/// A problem's q, k, v rounded to bf16, and the CPU's results on them with
/// bf16 products (`want`: the expectation of a bf16-products kernel) and
/// without (`plain`: what it must differ from, the roundings having
/// happened).
struct Bf16ProductsExpectation {
  std::vector<runtime::Bf16> q, k, v;
  Bf16AttentionResults want, plain;

  explicit Bf16ProductsExpectation(const AttentionInputs &in)
      : q(roundedToBf16(in.q)), k(roundedToBf16(in.k)), v(roundedToBf16(in.v)),
        want(cpuBf16Attention(in, q, k, v, withBf16Products(in.cpuConfig))),
        plain(cpuBf16Attention(in, q, k, v, in.cpuConfig)) {}

  static cpu::AttentionConfig withBf16Products(cpu::AttentionConfig config) {
    config.bf16Products = true;
    return config;
  }
};

} // namespace tgc::test

#endif // TGC_TEST_UNIT_KERNELS_CUDA_ATTENTIONTESTSUPPORT_H
