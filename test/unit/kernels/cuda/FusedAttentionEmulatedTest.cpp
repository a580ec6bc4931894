//===- FusedAttentionEmulatedTest.cpp - fused attention on the host -------===//
//
// runtime/kernels/cuda/FusedAttentionKernels.cuh run by KernelEmulator.h
// (a CUDA thread a host thread, the tensor-core product emulated from the
// PTX ISA's fragment layouts), against the CPU kernels with the same
// roundings, within expectBf16Products' bounds: the fused kernels' tiling,
// masks, dropout factors and roundings checked where no GPU is.
// FusedAttentionTest.cpp checks the same kernels on a GPU.
//
//===----------------------------------------------------------------------===//
#include "test/unit/kernels/cuda/KernelEmulator.h"

#include "runtime/kernels/cuda/FusedAttentionKernels.cuh"
#include "test/unit/kernels/KernelTestCases.h"

#include <gtest/gtest.h>

namespace tgc::cuda::tiles {

/// mma.m16n8k16 .row.col .f32.bf16.bf16.f32, as the PTX ISA lays its
/// fragments out (written here from the ISA, not from FragmentLayout.h):
/// register r of A holds a_{2r} (low half) and a_{2r+1}; a_i sits at row
/// group (+8 where i % 4 >= 2), column 2 pair + i % 2 (+8 where i >= 4).
/// Register r of B holds b_{2r}, b_{2r+1}; b_i at k = 2 pair + i % 2 (+8
/// where i >= 2), n = group. c_i and d_i at row group (+8 where i >= 2),
/// column 2 pair + i % 2.
void emulatedMma(Accumulator &d, const OperandA &a, const OperandB &b) {
  auto half = [](uint32_t word, int h) {
    return runtime::widen(
        runtime::Bf16{static_cast<uint16_t>(word >> (16 * h))});
  };
  float result[4];
  emulator::exchange(
      [&](auto &slot) {
        for (int r = 0; r < 4; ++r)
          slot[r] = a[r];
        slot[4] = b[0];
        slot[5] = b[1];
      },
      [&](const auto &slots) {
        float tileA[16][16], tileB[16][8];
        for (int lane = 0; lane < 32; ++lane) {
          const int group = lane / 4, pair = lane % 4;
          for (int i = 0; i < 8; ++i)
            tileA[group + (i % 4 >= 2 ? 8 : 0)]
                 [2 * pair + i % 2 + (i >= 4 ? 8 : 0)] =
                     half(slots[lane][i / 2], i % 2);
          for (int i = 0; i < 4; ++i)
            tileB[2 * pair + i % 2 + (i >= 2 ? 8 : 0)][group] =
                half(slots[lane][4 + i / 2], i % 2);
        }
        const int lane = emulator::currentLane(), group = lane / 4,
                  pair = lane % 4;
        for (int i = 0; i < 4; ++i) {
          const int row = group + (i >= 2 ? 8 : 0), column = 2 * pair + i % 2;
          float sum = 0.0f;
          for (int k = 0; k < 16; ++k)
            sum += tileA[row][k] * tileB[k][column];
          result[i] = d[i] + sum;
        }
      });
  for (int i = 0; i < 4; ++i)
    d[i] = result[i];
}

} // namespace tgc::cuda::tiles

namespace tgc::test {
namespace {

using namespace cuda::fused;
using cuda::fusedTileWidth;
using runtime::Bf16;

/// One attention problem in the call's layout, its bf16 q, k, v and what
/// the CPU computes from them with and without bf16 products.
struct EmulatedProblem {
  EmulatedProblem(const AttentionCase &c, bool sequenceMajor)
      : problem(c), c(c), sequenceMajor(sequenceMajor),
        q(roundedToBf16(problem.q)), k(roundedToBf16(problem.k)),
        v(roundedToBf16(problem.v)) {
    shape = problem.shape;
    shape.sequenceMajor = sequenceMajor;
    config = problem.cpuConfig;
    config.bf16Products = true;
    want = cpuSide(config);
    plain = cpuSide(problem.cpuConfig);
  }

  struct Results {
    std::vector<float> out, lse, dq, dk, dv;
  };
  Results cpuSide(const cpu::AttentionConfig &cpuConfig) const {
    Results r{std::vector<float>(problem.rows() * c.valueDim),
              std::vector<float>(problem.rows()), std::vector<float>(q.size()),
              std::vector<float>(k.size()), std::vector<float>(v.size())};
    cpu::attention(q.data(), k.data(), v.data(), r.out.data(), r.lse.data(),
                   problem.shape, cpuConfig);
    cpu::attentionGrad(problem.grad.data(), q.data(), k.data(), v.data(),
                       r.out.data(), r.lse.data(), r.dq.data(), r.dk.data(),
                       r.dv.data(), problem.shape, cpuConfig);
    return r;
  }

  /// A head-major host tensor in the call's layout, and back.
  template <typename T>
  std::vector<T> toLayout(const std::vector<T> &x, int64_t rows,
                          int64_t width) const {
    return sequenceMajor ? swapMiddle(x, c.batch, c.heads, rows, width) : x;
  }
  std::vector<float> toHeads(const std::vector<float> &x, int64_t rows,
                             int64_t width) const {
    return sequenceMajor ? swapMiddle(x, c.batch, rows, c.heads, width) : x;
  }

  AttentionProblem problem;
  const AttentionCase &c;
  bool sequenceMajor;
  std::vector<Bf16> q, k, v;
  runtime::AttentionShape shape;
  runtime::AttentionConfig config;
  Results want, plain;
};

/// The forward and backward kernels of tile width D on the emulator; every
/// result starts as garbage (7), which the kernels must overwrite.
template <int D> void expectFusedAsTheCpu(const EmulatedProblem &p) {
  const std::string name =
      std::string(p.c.name) + (p.sequenceMajor ? " (sequence-major)" : "");
  std::vector<Bf16> q = p.toLayout(p.q, p.c.queries, p.c.keyDim),
                    k = p.toLayout(p.k, p.c.keys, p.c.keyDim),
                    v = p.toLayout(p.v, p.c.keys, p.c.valueDim);
  std::vector<float> grad =
      p.toLayout(p.problem.grad, p.c.queries, p.c.valueDim);
  const runtime::AttentionShape &s = p.shape;
  const FusedArgs a = argsOf(q.data(), k.data(), v.data(), s, p.config);
  std::vector<float> out(p.want.out.size(), 7.0f), lse(p.want.lse.size(), 7.0f);
  emulator::launch(gridOf(s, s.queries), kBlockThreads, forwardBytes<D>(), [&] {
    fusedForwardKernel<D, float>(a, out.data(), lse.data());
  });
  expectBf16Products("emulated fused output " + name,
                     p.toHeads(out, p.c.queries, p.c.valueDim), p.want.out,
                     p.plain.out);
  expectClose("emulated fused lse " + name, p.toHeads(lse, p.c.queries, 1),
              p.want.lse, 1e-4);

  const int64_t rows = s.batch * s.heads * s.queries;
  std::vector<float> rowScratch(3 * rows, 7.0f), dq(q.size(), 7.0f),
      dk(k.size(), 7.0f), dv(v.size(), 7.0f);
  const RowTerms terms = RowTerms::in(rowScratch.data(), rows);
  emulator::launch(gridOf(s, s.queries), kBlockThreads,
                   BackwardShared<D>::bytes, [&] {
                     fusedQueryGradKernel<D, float>(a, grad.data(), lse.data(),
                                                    terms, dq.data());
                   });
  emulator::launch(
      gridOf(s, s.keys), kBlockThreads, BackwardShared<D>::bytes, [&] {
        fusedKeyValueGradKernel<D, float>(a, grad.data(), lse.data(),
                                          terms, dk.data(), dv.data());
      });
  expectBf16Products("emulated fused query grad " + name,
                     p.toHeads(dq, p.c.queries, p.c.keyDim), p.want.dq,
                     p.plain.dq);
  expectBf16Products("emulated fused key grad " + name,
                     p.toHeads(dk, p.c.keys, p.c.keyDim), p.want.dk,
                     p.plain.dk);
  expectBf16Products("emulated fused value grad " + name,
                     p.toHeads(dv, p.c.keys, p.c.valueDim), p.want.dv,
                     p.plain.dv);
}

/// expectFusedAsTheCpu of the kernels' tile width for the problem's head.
void expectFusedAsTheCpu(const EmulatedProblem &p) {
  switch (cuda::fusedTileWidth(p.c.keyDim)) {
  case 16:
    expectFusedAsTheCpu<16>(p);
    break;
  case 32:
    expectFusedAsTheCpu<32>(p);
    break;
  default:
    expectFusedAsTheCpu<64>(p);
    break;
  }
}

// FusedAttentionTest.cpp's cases that the host runs in seconds: one key
// tile (causal, masked, dropped; the base model's head), three key tiles
// with a partial one, keys not in whole quads (one Philox draw a factor),
// a narrow head padded to its tile, a decoder's step over a key cache (a
// causal offset), in both layouts.
TEST(FusedAttentionEmulated, MatchesTheCpu) {
  const AttentionCase cases[] = {
      {"one key tile, causal masked dropout, head 64", 1, 2, 64, 64, 64, 64,
       true, true, 0.1f},
      {"3 key tiles, masked dropout, head 32", 1, 2, 37, 150, 32, 32, true,
       false, 0.1f},
      {"53 keys (no whole quads), head 64, dropout", 1, 1, 37, 53, 64, 64,
       false, false, 0.1f},
      {"head 8 in a tile of 16, causal dropout", 1, 2, 70, 70, 8, 8, true, true,
       0.1f},
      {"decoding 3 queries at 61 of 64", 1, 2, 3, 64, 16, 16, false, true, 0.0f,
       61},
  };
  for (const AttentionCase &c : cases)
    for (bool sequenceMajor : {false, true})
      expectFusedAsTheCpu(EmulatedProblem(c, sequenceMajor));
}

// A padding row of a partial batch: every key of batch 1 masked. Its lse
// rounds to -1e9, and the backward must weigh its keys as the forward did
// (exp(s - m) / l, found again), not exp(s - lse) = 1 each: with one key
// tile and with three (the dq kernel's two extra passes), causal too.
TEST(FusedAttentionEmulated, RowsWhoseEveryKeyIsMaskedMatchTheCpu) {
  const AttentionCase cases[] = {
      {"one key tile, masked dropout, batch 1 padding", 2, 2, 20, 40, 16, 16,
       true, false, 0.1f, 0, ScoreBias::None, true},
      {"3 key tiles, masked dropout, batch 1 padding", 2, 1, 37, 150, 32, 32,
       true, false, 0.1f, 0, ScoreBias::None, true},
      {"self causal masked dropout, 70 keys, batch 1 padding", 2, 1, 70, 70,
       16, 16, true, true, 0.1f, 0, ScoreBias::None, true},
  };
  for (const AttentionCase &c : cases)
    for (bool sequenceMajor : {false, true})
      expectFusedAsTheCpu(EmulatedProblem(c, sequenceMajor));
}

} // namespace
} // namespace tgc::test
