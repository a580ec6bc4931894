//===- FusionTest.cpp - fused ops against the unfused chains they replace ===//
//
// Each module has @fused and @unfused returning the same values (forward
// outputs and gradients). Dropout in both uses the same key and op_id over
// the same index layout, so the masks agree by construction. Tolerances
// (min(absolute, relative)): 1e-12 in f64, where only summation order
// differs; 1e-5 in f32, where the unfused chain also rounds every
// intermediate to float.
//
//===----------------------------------------------------------------------===//
#include "test/unit/interpreter/InterpreterTestUtil.h"

using namespace tgc;
using namespace tgc::test;

namespace {

void expectFusedMatchesUnfused(const std::string &source,
                               const std::vector<HostTensor> &args) {
  for (auto [precision, tolerance] :
       {std::pair{Precision::F64, 1e-12}, std::pair{Precision::F32, 1e-5}}) {
    SCOPED_TRACE(precision == Precision::F64 ? "f64" : "f32");
    Program p(source, precision);
    ASSERT_TRUE(p.ok()) << p.diagnostics();
    auto fused = p.run("fused", args);
    auto unfused = p.run("unfused", args);
    ASSERT_EQ(fused.size(), unfused.size());
    for (size_t i = 0; i < fused.size(); ++i)
      test::expectClose(fused[i], unfused[i], tolerance,
                        "result " + std::to_string(i));
  }
}

// softmax(scale Q K^T + padding mask + causal mask), dropout on the
// probabilities, times V; and the backward through the same chain.
const char *kAttention = R"mlir(
func.func @fused(%q: {Q}, %k: {K}, %v: {V}, %m: {M}, %key: tensor<2xi32>, %w: {O})
    -> ({O}, {Q}, {K}, {V}) {
  %o, %lse = tg.attention %q, %k, %v mask %m key %key causal scale 5.000000e-01
      dropout 2.000000e-01 op_id 9
      : ({Q}, {K}, {V}, {M}, tensor<2xi32>) -> ({O}, {L})
  %dq, %dk, %dv = tg.attention_grad %w, %q, %k, %v, %o, %lse mask %m key %key causal
      scale 5.000000e-01 dropout 2.000000e-01 op_id 9
      : ({O}, {Q}, {K}, {V}, {O}, {L}, {M}, tensor<2xi32>) -> ({Q}, {K}, {V})
  return %o, %dq, %dk, %dv : {O}, {Q}, {K}, {V}
}
func.func @unfused(%q: {Q}, %k: {K}, %v: {V}, %m: {M}, %key: tensor<2xi32>, %w: {O})
    -> ({O}, {Q}, {K}, {V}) {
  %s = tg.matmul %q, %k transpose_rhs : {Q}, {K} -> {S}
  %t = tg.scale %s by 5.000000e-01 : {S}
  %mb = tg.broadcast %m dims [0, 3] : {M} -> {S}
  %t2 = tg.add %t, %mb : {S}
  %c = tg.causal_mask : {C}
  %cb = tg.broadcast %c dims [2, 3] : {C} -> {S}
  %t3 = tg.add %t2, %cb : {S}
  %p = tg.softmax %t3 axis 3 : {S}
  %pd = tg.dropout %p, %key rate 2.000000e-01 op_id 9 : {S}
  %o = tg.matmul %pd, %v : {S}, {V} -> {O}
  %dpd = tg.matmul %w, %v transpose_rhs : {O}, {V} -> {S}
  %dv = tg.matmul %pd, %w transpose_lhs : {S}, {O} -> {V}
  %dp = tg.dropout_grad %dpd, %key rate 2.000000e-01 op_id 9 : {S}
  %ds = tg.softmax_grad %p, %dp axis 3 : {S}
  %dss = tg.scale %ds by 5.000000e-01 : {S}
  %dq = tg.matmul %dss, %k : {S}, {K} -> {Q}
  %dk = tg.matmul %dss, %q transpose_lhs : {S}, {Q} -> {K}
  return %o, %dq, %dk, %dv : {O}, {Q}, {K}, {V}
}
)mlir";

TEST(Fusion, AttentionMatchesTheUnfusedChain) {
  Random rng(21);
  int64_t b = 2, h = 3, s = 5, dk = 4, dv = 3;
  std::string source = substitute(kAttention, {{"Q", tensorType({b, h, s, dk})},
                                               {"K", tensorType({b, h, s, dk})},
                                               {"V", tensorType({b, h, s, dv})},
                                               {"M", tensorType({b, s})},
                                               {"O", tensorType({b, h, s, dv})},
                                               {"L", tensorType({b, h, s})},
                                               {"S", tensorType({b, h, s, s})},
                                               {"C", tensorType({s, s})}});
  // Padding at the end of each sequence, as the data loader produces it.
  HostTensor mask =
      HostTensor::f32({b, s}, {0, 0, 0, -1e9, -1e9, 0, 0, 0, 0, -1e9});
  expectFusedMatchesUnfused(
      source, {rng.tensor({b, h, s, dk}, -2, 2),
               rng.tensor({b, h, s, dk}, -2, 2), rng.tensor({b, h, s, dv}),
               mask, HostTensor::i32({2}, {5, 8}), rng.tensor({b, h, s, dv})});
}

// A sequence that is all padding masks every key of its rows: the output
// stays finite and, in f64, equal to the unfused chain. (In f32 the unfused
// chain rounds score - 1e9 to float, which erases the scores, so the two
// legitimately differ there: only finiteness is checked.)
TEST(Fusion, AttentionWithFullyMaskedRowsStaysFinite) {
  const char *source = R"mlir(
func.func @fused(%q: tensor<1x1x2x2xf32>, %k: tensor<1x1x3x2xf32>, %v: tensor<1x1x3x2xf32>,
                 %m: tensor<1x3xf32>) -> tensor<1x1x2x2xf32> {
  %o, %lse = tg.attention %q, %k, %v mask %m scale 1.000000e+00 dropout 0.0 op_id 0
      : (tensor<1x1x2x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x3xf32>)
      -> (tensor<1x1x2x2xf32>, tensor<1x1x2xf32>)
  return %o : tensor<1x1x2x2xf32>
}
func.func @unfused(%q: tensor<1x1x2x2xf32>, %k: tensor<1x1x3x2xf32>, %v: tensor<1x1x3x2xf32>,
                   %m: tensor<1x3xf32>) -> tensor<1x1x2x2xf32> {
  %s = tg.matmul %q, %k transpose_rhs : tensor<1x1x2x2xf32>, tensor<1x1x3x2xf32> -> tensor<1x1x2x3xf32>
  %mb = tg.broadcast %m dims [0, 3] : tensor<1x3xf32> -> tensor<1x1x2x3xf32>
  %t = tg.add %s, %mb : tensor<1x1x2x3xf32>
  %p = tg.softmax %t axis 3 : tensor<1x1x2x3xf32>
  %o = tg.matmul %p, %v : tensor<1x1x2x3xf32>, tensor<1x1x3x2xf32> -> tensor<1x1x2x2xf32>
  return %o : tensor<1x1x2x2xf32>
}
)mlir";
  Random rng(22);
  std::vector<HostTensor> args{
      rng.tensor({1, 1, 2, 2}), rng.tensor({1, 1, 3, 2}),
      rng.tensor({1, 1, 3, 2}), HostTensor::f32({1, 3}, {-1e9, -1e9, -1e9})};
  Program f64(source, Precision::F64), f32(source, Precision::F32);
  ASSERT_TRUE(f64.ok() && f32.ok()) << f64.diagnostics();
  auto fused = f64.run("fused", args), unfused = f64.run("unfused", args);
  ASSERT_EQ(fused.size(), 1u);
  ASSERT_EQ(unfused.size(), 1u);
  test::expectClose(fused[0], unfused[0], 1e-12, "f64");
  for (const char *func : {"fused", "unfused"}) {
    auto out = f32.run(func, args);
    ASSERT_EQ(out.size(), 1u);
    for (double x : out[0].data)
      EXPECT_TRUE(std::isfinite(x)) << func;
  }
  // In f32 both add the mask in float, as the kernels do: every key weighs
  // alike (the fused one added it in double and kept the hidden scores).
  auto fused32 = f32.run("fused", args), unfused32 = f32.run("unfused", args);
  ASSERT_EQ(fused32.size(), 1u);
  ASSERT_EQ(unfused32.size(), 1u);
  test::expectClose(fused32[0], unfused32[0], 1e-6, "f32");
}

// layer_norm(x + dropout(y)) with its statistics spelled out in tg ops, and
// the backward through layer_norm_grad and dropout_grad.
const char *kResidualLayerNorm = R"mlir(
func.func @fused(%x: {X}, %y: {X}, %g: {G}, %b: {G}, %key: tensor<2xi32>, %w: {X})
    -> ({X}, {R}, {R}, {X}, {X}, {G}, {G}) {
  %out, %mean, %rstd = tg.residual_layer_norm %x, %y, %g, %b, %key
      rate 1.000000e-01 op_id 4 eps 1.000000e-05 : {X}, {G}
  %dx, %dy, %dg, %db = tg.residual_layer_norm_grad %w, %out, %g, %b, %rstd, %key
      rate 1.000000e-01 op_id 4 eps 1.000000e-05 : {X}, {G}
  return %out, %mean, %rstd, %dx, %dy, %dg, %db : {X}, {R}, {R}, {X}, {X}, {G}, {G}
}
func.func @unfused(%x: {X}, %y: {X}, %g: {G}, %b: {G}, %key: tensor<2xi32>, %w: {X})
    -> ({X}, {R}, {R}, {X}, {X}, {G}, {G}) {
  %yd = tg.dropout %y, %key rate 1.000000e-01 op_id 4 : {X}
  %h = tg.add %x, %yd : {X}
  %out = tg.layer_norm %h, %g, %b eps 1.000000e-05 : {X}, {G}
  %mean = tg.reduce_mean %h dims [2] : {X} -> {R}
  %mb = tg.broadcast %mean dims [0, 1] : {R} -> {X}
  %c = tg.sub %h, %mb : {X}
  %sq = tg.mul %c, %c : {X}
  %var = tg.reduce_mean %sq dims [2] : {X} -> {R}
  %eps = tg.constant dense<1.000000e-05> : {R}
  %ve = tg.add %var, %eps : {R}
  %rstd = tg.rsqrt %ve : {R}
  %dh, %dg, %db = tg.layer_norm_grad %w, %h, %g eps 1.000000e-05 : {X}, {G}
  %dy = tg.dropout_grad %dh, %key rate 1.000000e-01 op_id 4 : {X}
  return %out, %mean, %rstd, %dh, %dy, %dg, %db : {X}, {R}, {R}, {X}, {X}, {G}, {G}
}
)mlir";

TEST(Fusion, ResidualLayerNormMatchesTheUnfusedChain) {
  Random rng(23);
  int64_t b = 2, s = 7, d = 16;
  std::string source =
      substitute(kResidualLayerNorm, {{"X", tensorType({b, s, d})},
                                      {"G", tensorType({d})},
                                      {"R", tensorType({b, s})}});
  expectFusedMatchesUnfused(
      source, {rng.tensor({b, s, d}, -2, 2), rng.tensor({b, s, d}, -2, 2),
               rng.tensor({d}, 0.5, 1.5), rng.tensor({d}),
               HostTensor::i32({2}, {31, 2}), rng.tensor({b, s, d})});
}

// A pre-LN block: rms_norm(x + dropout(y)) whose sum h is also returned
// (the next residual's), its statistic spelled out in tg ops, and the
// backward through rms_norm_grad, the sum's own gradient %v and
// dropout_grad.
const char *kResidualRmsNorm = R"mlir(
func.func @fused(%x: {X}, %y: {X}, %g: {G}, %key: tensor<2xi32>, %w: {X}, %v: {X})
    -> ({X}, {R}, {X}, {X}, {X}, {G}) {
  %out, %rstd, %h = tg.residual_layer_norm rms %x, %y, %g, %key
      rate 1.000000e-01 op_id 4 eps 1.000000e-05 : {X}, {G} sum {X}
  %dx, %dy, %dg = tg.residual_layer_norm_grad rms %w, %out, %g, %rstd, %key sum_grad %v
      rate 1.000000e-01 op_id 4 eps 1.000000e-05 : {X}, {G}
  return %out, %rstd, %h, %dx, %dy, %dg : {X}, {R}, {X}, {X}, {X}, {G}
}
func.func @unfused(%x: {X}, %y: {X}, %g: {G}, %key: tensor<2xi32>, %w: {X}, %v: {X})
    -> ({X}, {R}, {X}, {X}, {X}, {G}) {
  %yd = tg.dropout %y, %key rate 1.000000e-01 op_id 4 : {X}
  %h = tg.add %x, %yd : {X}
  %out = tg.rms_norm %h, %g eps 1.000000e-05 : {X}, {G}
  %sq = tg.mul %h, %h : {X}
  %ms = tg.reduce_mean %sq dims [2] : {X} -> {R}
  %eps = tg.constant dense<1.000000e-05> : {R}
  %mse = tg.add %ms, %eps : {R}
  %rstd = tg.rsqrt %mse : {R}
  %dn, %dg = tg.rms_norm_grad %w, %h, %g eps 1.000000e-05 : {X}, {G}
  %dh = tg.add %dn, %v : {X}
  %dy = tg.dropout_grad %dh, %key rate 1.000000e-01 op_id 4 : {X}
  return %out, %rstd, %h, %dh, %dy, %dg : {X}, {R}, {X}, {X}, {X}, {G}
}
)mlir";

TEST(Fusion, ResidualRmsNormKeepingTheSumMatchesTheUnfusedChain) {
  Random rng(24);
  int64_t b = 2, s = 7, d = 16;
  std::string source =
      substitute(kResidualRmsNorm, {{"X", tensorType({b, s, d})},
                                    {"G", tensorType({d})},
                                    {"R", tensorType({b, s})}});
  expectFusedMatchesUnfused(
      source, {rng.tensor({b, s, d}, -2, 2), rng.tensor({b, s, d}, -2, 2),
               rng.tensor({d}, 0.5, 1.5), HostTensor::i32({2}, {31, 2}),
               rng.tensor({b, s, d}), rng.tensor({b, s, d})});
}

// x W + b through each epilogue activation, keeping the pre-activation:
// tg.linear against the matmul, bias broadcast, add and the activation's
// tg ops ({ACT}: one op, or SiLU's sigmoid and product).
const char *kLinear = R"mlir(
func.func @fused(%x: {X}, %w: {W}, %b: {B}) -> ({Y}, {Y}) {
  %y, %pre = tg.linear %x, %w, %b {NAME} : {X}, {W}, {B} -> {Y}, {Y}
  return %y, %pre : {Y}, {Y}
}
func.func @unfused(%x: {X}, %w: {W}, %b: {B}) -> ({Y}, {Y}) {
  %m = tg.matmul %x, %w : {X}, {W} -> {Y}
  %bb = tg.broadcast %b dims [2] : {B} -> {Y}
  %pre = tg.add %m, %bb : {Y}
  {ACT}
  return %y, %pre : {Y}, {Y}
}
)mlir";

TEST(Fusion, LinearMatchesTheUnfusedChainForEachActivation) {
  const std::pair<const char *, const char *> activations[] = {
      {"relu", "%y = tg.relu %pre : {Y}"},
      {"gelu", "%y = tg.gelu %pre : {Y}"},
      {"gelu_tanh", "%y = tg.gelu_tanh %pre : {Y}"},
      {"tanh", "%y = tg.tanh %pre : {Y}"},
      {"sigmoid", "%y = tg.sigmoid %pre : {Y}"},
      {"silu", "%g = tg.sigmoid %pre : {Y}\n  %y = tg.mul %pre, %g : {Y}"}};
  Random rng(25);
  int64_t b = 2, s = 7, k = 16, n = 24;
  std::vector<HostTensor> args = {rng.tensor({b, s, k}, -1, 1),
                                  rng.tensor({k, n}, -1, 1),
                                  rng.tensor({n}, -1, 1)};
  for (auto [name, chain] : activations) {
    SCOPED_TRACE(name);
    std::string source = substitute(kLinear, {{"ACT", chain}, {"NAME", name}});
    source = substitute(source, {{"X", tensorType({b, s, k})},
                                 {"W", tensorType({k, n})},
                                 {"B", tensorType({n})},
                                 {"Y", tensorType({b, s, n})}});
    expectFusedMatchesUnfused(source, args);
  }
}

// The dropout mask is a pure function of (key, op_id, index): dropout_grad
// regenerates it, and a different op_id or step draws another.
TEST(Fusion, DropoutGradRegeneratesTheMask) {
  const char *source = R"mlir(
func.func @f(%x: tensor<100000xf32>, %key: tensor<2xi32>, %key2: tensor<2xi32>)
    -> (tensor<100000xf32>, tensor<100000xf32>, tensor<100000xf32>, tensor<100000xf32>) {
  %y = tg.dropout %x, %key rate 1.000000e-01 op_id 3 : tensor<100000xf32>
  %g = tg.dropout_grad %x, %key rate 1.000000e-01 op_id 3 : tensor<100000xf32>
  %other = tg.dropout %x, %key rate 1.000000e-01 op_id 4 : tensor<100000xf32>
  %next = tg.dropout %x, %key2 rate 1.000000e-01 op_id 3 : tensor<100000xf32>
  return %y, %g, %other, %next
      : tensor<100000xf32>, tensor<100000xf32>, tensor<100000xf32>, tensor<100000xf32>
}
)mlir";
  Program p(source, Precision::F32);
  ASSERT_TRUE(p.ok()) << p.diagnostics();
  HostTensor ones({100000});
  std::fill(ones.data.begin(), ones.data.end(), 1.0);
  auto out = p.run("f", {ones, HostTensor::i32({2}, {42, 1}),
                         HostTensor::i32({2}, {42, 2})});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].data, out[1].data);
  EXPECT_NE(out[0].data, out[2].data);
  EXPECT_NE(out[0].data, out[3].data);
  int64_t kept = 0;
  double scale = static_cast<float>(1.0 / (1.0 - static_cast<double>(0.1f)));
  for (double y : out[0].data) {
    if (y != 0.0) {
      ++kept;
      EXPECT_EQ(y, scale);
    }
  }
  // 0.9 +- 5 standard deviations of the kept fraction (sqrt(0.09 / 1e5)).
  EXPECT_NEAR(kept / 1e5, 0.9, 5 * 0.00095);
}

} // namespace
