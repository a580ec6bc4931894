//===- ExamplesTest.cpp - op values against hand-computed formulas -------===//
#include "test/unit/interpreter/InterpreterTestUtil.h"

#include <cmath>

using namespace tgc;
using tgc::test::f32;
using tgc::test::i32;
using tgc::test::Program;

namespace {

//===--- The seed examples --------------------------------------------===//

const char *kAttentionExample = R"mlir(
func.func @unfused(%q: tensor<3x2xf32>, %k: tensor<3x2xf32>, %v: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %s = tg.matmul %q, %k transpose_rhs : tensor<3x2xf32>, tensor<3x2xf32> -> tensor<3x3xf32>
  %t = tg.scale %s by 0.707106769 : tensor<3x3xf32>
  %p = tg.softmax %t axis 1 : tensor<3x3xf32>
  %o = tg.matmul %p, %v : tensor<3x3xf32>, tensor<3x2xf32> -> tensor<3x2xf32>
  return %o : tensor<3x2xf32>
}
func.func @fused(%q: tensor<1x1x3x2xf32>, %k: tensor<1x1x3x2xf32>, %v: tensor<1x1x3x2xf32>) -> tensor<1x1x3x2xf32> {
  %o, %lse = tg.attention %q, %k, %v scale 0.707106769 dropout 0.0 op_id 0
      : (tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>) -> (tensor<1x1x3x2xf32>, tensor<1x1x3xf32>)
  return %o : tensor<1x1x3x2xf32>
}
)mlir";

// softmax(Q K^T / sqrt(2)) V with Q = [[1,0],[0,1],[1,1]], K = [[1,1],[0,1],
// [1,0]], V = [[0,2],[1,1],[2,0]]. The scores are a * [[1,0,1],[1,1,0],
// [2,1,1]] with a = 1/sqrt(2); with e = exp(a) the rows are
//   row 0: weights [e,1,e]/(2e+1)    -> [1, 1]
//   row 1: weights [e,e,1]/(2e+1)    -> [(e+2)/(2e+1), 3e/(2e+1)]
//   row 2: weights [e,1,1]/(e+2)     -> [3/(e+2), (2e+1)/(e+2)]
// i.e. about [[1.00,1.00],[0.80,1.20],[0.75,1.25]]. `a` is the f32
// attribute's value, float(1/sqrt(2)).
HostTensor attentionExpected() {
  double e = std::exp(static_cast<double>(static_cast<float>(M_SQRT1_2)));
  return f32({3, 2}, {1.0, 1.0, (e + 2) / (2 * e + 1), 3 * e / (2 * e + 1),
                      3 / (e + 2), (2 * e + 1) / (e + 2)});
}

TEST(Examples, AttentionUnfusedChain) {
  Program p(kAttentionExample, Precision::F64);
  ASSERT_TRUE(p.ok()) << p.diagnostics();
  auto out = p.run("unfused", {f32({3, 2}, {1, 0, 0, 1, 1, 1}),
                               f32({3, 2}, {1, 1, 0, 1, 1, 0}),
                               f32({3, 2}, {0, 2, 1, 1, 2, 0})});
  ASSERT_EQ(out.size(), 1u);
  test::expectClose(out[0], attentionExpected(), 1e-14, "unfused");
  test::expectClose(out[0], f32({3, 2}, {1.00, 1.00, 0.80, 1.20, 0.75, 1.25}),
                    0.01, "rounded");
}

TEST(Examples, AttentionFused) {
  Program p(kAttentionExample, Precision::F64);
  ASSERT_TRUE(p.ok()) << p.diagnostics();
  auto out = p.run("fused", {f32({1, 1, 3, 2}, {1, 0, 0, 1, 1, 1}),
                             f32({1, 1, 3, 2}, {1, 1, 0, 1, 1, 0}),
                             f32({1, 1, 3, 2}, {0, 2, 1, 1, 2, 0})});
  ASSERT_EQ(out.size(), 1u);
  out[0].shape = {3, 2};
  test::expectClose(out[0], attentionExpected(), 1e-14, "fused");
}

// max(0, x W1 + b1) W2 + b2: x W1 + b1 = [[1,2],[0,2],[1,3]] (all >= 0),
// times W2 = [[5,2],[4,2],[7,3]], plus b2 = [[6,1],[5,1],[8,2]].
TEST(Examples, FeedForward) {
  const char *source = R"mlir(
func.func @ffn(%x: tensor<3x2xf32>, %w1: tensor<2x2xf32>, %b1: tensor<2xf32>,
               %w2: tensor<2x2xf32>, %b2: tensor<2xf32>) -> tensor<3x2xf32> {
  %h = tg.matmul %x, %w1 : tensor<3x2xf32>, tensor<2x2xf32> -> tensor<3x2xf32>
  %b1b = tg.broadcast %b1 dims [1] : tensor<2xf32> -> tensor<3x2xf32>
  %hb = tg.add %h, %b1b : tensor<3x2xf32>
  %r = tg.relu %hb : tensor<3x2xf32>
  %y = tg.matmul %r, %w2 : tensor<3x2xf32>, tensor<2x2xf32> -> tensor<3x2xf32>
  %b2b = tg.broadcast %b2 dims [1] : tensor<2xf32> -> tensor<3x2xf32>
  %out = tg.add %y, %b2b : tensor<3x2xf32>
  return %out : tensor<3x2xf32>
}
)mlir";
  for (Precision precision : {Precision::F64, Precision::F32}) {
    Program p(source, precision);
    ASSERT_TRUE(p.ok()) << p.diagnostics();
    auto out = p.run("ffn", {f32({3, 2}, {1, 0, 0, 1, 1, 1}),
                             f32({2, 2}, {1, 1, 0, 1}), f32({2}, {0, 1}),
                             f32({2, 2}, {1, 0, 2, 1}), f32({2}, {1, -1})});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].data, std::vector<double>({6, 1, 5, 1, 8, 2}));
  }
}

// PE[pos, 2i] = sin(pos / 10000^(2i/D)), PE[pos, 2i+1] = cos(...); with
// D = 16 the denominators of columns 0-1, 4-5, 8-9, 12-13 are 1, 10, 100, 1000.
TEST(Examples, PositionalEncoding) {
  Program p(R"mlir(
func.func @pe() -> tensor<50x16xf32> {
  %pe = tg.positional_encoding : tensor<50x16xf32>
  return %pe : tensor<50x16xf32>
}
)mlir",
            Precision::F64);
  ASSERT_TRUE(p.ok()) << p.diagnostics();
  auto out = p.run("pe", {});
  ASSERT_EQ(out.size(), 1u);
  auto at = [&](int pos, int col) { return out[0][pos * 16 + col]; };
  for (int col = 0; col < 16; ++col)
    EXPECT_EQ(at(0, col), col % 2 == 0 ? 0.0 : 1.0) << col;
  EXPECT_NEAR(at(1, 0), std::sin(1.0), 1e-15);
  EXPECT_NEAR(at(1, 1), std::cos(1.0), 1e-15);
  EXPECT_NEAR(at(7, 4), std::sin(0.7), 1e-14);
  EXPECT_NEAR(at(7, 5), std::cos(0.7), 1e-14);
  EXPECT_NEAR(at(49, 8), std::sin(0.49), 1e-14);
  EXPECT_NEAR(at(30, 13), std::cos(0.03), 1e-14);
  EXPECT_NEAR(at(49, 14), std::sin(49.0 / std::pow(10000.0, 14.0 / 16.0)),
              1e-15);
  EXPECT_NEAR(at(49, 15), std::cos(49.0 / std::pow(10000.0, 14.0 / 16.0)),
              1e-15);
}

// Rotary embedding. D = 2, base 10000: theta_0 = 1, so position 0 is
// unchanged and position 1 turns (x0, x1) by 1 radian. D = 4, base 100,
// inverse from offset 2: theta = (1, 0.1), so the pairs (x0, x2) and
// (x1, x3) turn by -2 and -0.2 radians.
TEST(Examples, Rotary) {
  Program p(R"mlir(
func.func @f(%x: tensor<1x2x2xf32>, %y: tensor<1x1x4xf32>, %offset: tensor<i32>)
    -> (tensor<1x2x2xf32>, tensor<1x1x4xf32>) {
  %rx = tg.rotary %x base 1.000000e+04 : tensor<1x2x2xf32>
  %ry = tg.rotary %y offset %offset base 1.000000e+02 inverse : tensor<1x1x4xf32>
  return %rx, %ry : tensor<1x2x2xf32>, tensor<1x1x4xf32>
}
)mlir",
            Precision::F64);
  ASSERT_TRUE(p.ok()) << p.diagnostics();
  auto out = p.run("f", {f32({1, 2, 2}, {1, 2, 3, 4}),
                         f32({1, 1, 4}, {1, 2, 3, 4}), i32({}, {2})});
  ASSERT_EQ(out.size(), 2u);
  const double c1 = std::cos(1.0), s1 = std::sin(1.0);
  EXPECT_EQ(out[0][0], 1.0);
  EXPECT_EQ(out[0][1], 2.0);
  EXPECT_NEAR(out[0][2], 3 * c1 - 4 * s1, 1e-15);
  EXPECT_NEAR(out[0][3], 4 * c1 + 3 * s1, 1e-15);
  const double c2 = std::cos(2.0), s2 = std::sin(2.0);
  const double c02 = std::cos(0.2), s02 = std::sin(0.2);
  EXPECT_NEAR(out[1][0], c2 + 3 * s2, 1e-15);
  EXPECT_NEAR(out[1][1], 2 * c02 + 4 * s02, 1e-15);
  EXPECT_NEAR(out[1][2], 3 * c2 - s2, 1e-15);
  EXPECT_NEAR(out[1][3], 4 * c02 - 2 * s02, 1e-15);
}

//===--- Every other op on small hand-checked inputs ---------------------===//

TEST(Ops, Elementwise) {
  Program p(R"mlir(
func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>) {
  %sub = tg.sub %x, %y : tensor<4xf32>
  %div = tg.div %x, %y : tensor<4xf32>
  %mul = tg.mul %x, %y : tensor<4xf32>
  %neg = tg.neg %x : tensor<4xf32>
  %exp = tg.exp %x : tensor<4xf32>
  %log = tg.log %y : tensor<4xf32>
  %sqrt = tg.sqrt %y : tensor<4xf32>
  %rsqrt = tg.rsqrt %y : tensor<4xf32>
  %scale = tg.scale %x by 2.500000e-01 : tensor<4xf32>
  %rg = tg.relu_grad %y, %x : tensor<4xf32>
  %tanh = tg.tanh %x : tensor<4xf32>
  return %sub, %div, %mul, %neg, %exp, %log, %sqrt, %rsqrt, %scale, %rg, %tanh
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>
}
)mlir",
            Precision::F64);
  ASSERT_TRUE(p.ok()) << p.diagnostics();
  auto out = p.run("f", {f32({4}, {-1, 0, 2, 3}), f32({4}, {4, 1, 0.25, 9})});
  ASSERT_EQ(out.size(), 11u);
  EXPECT_EQ(out[0].data, std::vector<double>({-5, -1, 1.75, -6}));
  EXPECT_EQ(out[1].data, std::vector<double>({-0.25, 0, 8, 1.0 / 3}));
  EXPECT_EQ(out[2].data, std::vector<double>({-4, 0, 0.5, 27}));
  EXPECT_EQ(out[3].data, std::vector<double>({1, 0, -2, -3}));
  EXPECT_EQ(out[4].data, std::vector<double>({std::exp(-1.0), 1, std::exp(2.0),
                                              std::exp(3.0)}));
  EXPECT_EQ(out[5].data, std::vector<double>({std::log(4.0), 0, std::log(0.25),
                                              std::log(9.0)}));
  EXPECT_EQ(out[6].data, std::vector<double>({2, 1, 0.5, 3}));
  EXPECT_EQ(out[7].data, std::vector<double>({0.5, 1, 2, 1.0 / 3}));
  EXPECT_EQ(out[8].data, std::vector<double>({-0.25, 0, 0.5, 0.75}));
  // relu_grad passes grad (%y) where the input (%x) is > 0.
  EXPECT_EQ(out[9].data, std::vector<double>({0, 0, 0.25, 9}));
  // tanh(-1) = -0.76159415595576..., tanh(2) = 0.96402758007581...
  EXPECT_NEAR(out[10].data[0], -0.7615941559557649, 1e-15);
  EXPECT_EQ(out[10].data[1], 0);
  EXPECT_NEAR(out[10].data[2], 0.9640275800758169, 1e-15);
  EXPECT_NEAR(out[10].data[3], 0.9950547536867305, 1e-15);
}

TEST(Ops, Activations) {
  Program p(R"mlir(
func.func @f(%x: tensor<4xf32>, %dy: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>, tensor<4xf32>) {
  %sig = tg.sigmoid %x : tensor<4xf32>
  %abs = tg.abs %x : tensor<4xf32>
  %gelu = tg.gelu %x : tensor<4xf32>
  %gelut = tg.gelu_tanh %x : tensor<4xf32>
  %dgelu = tg.gelu_grad %dy, %x : tensor<4xf32>
  %dgelut = tg.gelu_tanh_grad %dy, %x : tensor<4xf32>
  return %sig, %abs, %gelu, %gelut, %dgelu, %dgelut
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>, tensor<4xf32>
}
)mlir",
            Precision::F64);
  ASSERT_TRUE(p.ok()) << p.diagnostics();
  auto out = p.run("f", {f32({4}, {-1, 0, 2, 3}), f32({4}, {4, 1, 0.25, 9})});
  ASSERT_EQ(out.size(), 6u);
  // The expected values are Python's math module's (erf, tanh, exp).
  auto near = [](const std::vector<double> &got,
                 std::vector<double> expected) {
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], expected[i], 1e-14) << "element " << i;
  };
  near(out[0].data, {0.2689414213699951, 0.5, 0.8807970779778823,
                     0.9525741268224334});
  near(out[1].data, {1, 0, 2, 3});
  near(out[2].data, {-0.15865525393145707, 0, 1.9544997361036416,
                     2.99595030590511});
  near(out[3].data, {-0.15880800939172324, 0, 1.954597694087775,
                     2.996362607918227});
  near(out[4].data, {-0.33326188235074516, 0.5, 0.27130795026954924,
                     9.107510824837656});
  near(out[5].data, {-0.3318563353831302, 0.5, 0.27152481415590457,
                     9.104257499678726});
}

TEST(Ops, SelectionAndPowers) {
  Program p(R"mlir(
func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %max = tg.maximum %x, %y : tensor<4xf32>
  %min = tg.minimum %x, %y : tensor<4xf32>
  %sq = tg.pow %x, 2.0 : tensor<4xf32>
  %root = tg.pow %y, 0.5 : tensor<4xf32>
  %lt = tg.less %x, %y : tensor<4xf32>
  %le = tg.less_equal %x, %y : tensor<4xf32>
  %gt = tg.greater %x, %y : tensor<4xf32>
  %ge = tg.greater_equal %x, %y : tensor<4xf32>
  %eq = tg.equal %x, %y : tensor<4xf32>
  %ne = tg.not_equal %x, %y : tensor<4xf32>
  %w = tg.where %lt, %x, %sq : tensor<4xf32>
  return %max, %min, %sq, %root, %lt, %le, %gt, %ge, %eq, %ne, %w
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
)mlir",
            Precision::F64);
  ASSERT_TRUE(p.ok()) << p.diagnostics();
  auto out = p.run("f", {f32({4}, {-1, 1, 2, 3}), f32({4}, {4, 1, 0.25, 9})});
  ASSERT_EQ(out.size(), 11u);
  EXPECT_EQ(out[0].data, std::vector<double>({4, 1, 2, 9}));
  EXPECT_EQ(out[1].data, std::vector<double>({-1, 1, 0.25, 3}));
  EXPECT_EQ(out[2].data, std::vector<double>({1, 1, 4, 9}));
  EXPECT_EQ(out[3].data, std::vector<double>({2, 1, 0.5, 3}));
  EXPECT_EQ(out[4].data, std::vector<double>({1, 0, 0, 1}));  // <
  EXPECT_EQ(out[5].data, std::vector<double>({1, 1, 0, 1}));  // <=
  EXPECT_EQ(out[6].data, std::vector<double>({0, 0, 1, 0}));  // >
  EXPECT_EQ(out[7].data, std::vector<double>({0, 1, 1, 0}));  // >=
  EXPECT_EQ(out[8].data, std::vector<double>({0, 1, 0, 0}));  // ==
  EXPECT_EQ(out[9].data, std::vector<double>({1, 0, 1, 1}));  // !=
  // x where x < y, else x^2
  EXPECT_EQ(out[10].data, std::vector<double>({-1, 1, 4, 3}));

  // NaN: maximum and minimum propagate it; comparisons are false but !=.
  auto nan = p.run("f", {f32({4}, {NAN, 1, 2, 3}), f32({4}, {4, NAN, 0.25, 9})});
  EXPECT_TRUE(std::isnan(nan[0][0]) && std::isnan(nan[0][1]));
  EXPECT_TRUE(std::isnan(nan[1][0]) && std::isnan(nan[1][1]));
  for (int k = 4; k <= 8; ++k)
    EXPECT_EQ(nan[k][0] + nan[k][1], 0) << "result " << k;
  EXPECT_EQ(nan[9][0] + nan[9][1], 2);
}

TEST(Ops, ShapesAndReductions) {
  Program p(R"mlir(
func.func @f(%x: tensor<2x3xf32>)
    -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<2x2x3xf32>, tensor<3xf32>,
        tensor<2x1xf32>, tensor<2xf32>, tensor<f32>) {
  %t = tg.transpose %x permutation [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %r = tg.reshape %x : tensor<2x3xf32> -> tensor<3x2xf32>
  %b = tg.broadcast %x dims [0, 2] : tensor<2x3xf32> -> tensor<2x2x3xf32>
  %s = tg.reduce_sum %x dims [0] : tensor<2x3xf32> -> tensor<3xf32>
  %m = tg.reduce_max %x dims [1] keep_dims : tensor<2x3xf32> -> tensor<2x1xf32>
  %mean = tg.reduce_mean %x dims [1] : tensor<2x3xf32> -> tensor<2xf32>
  %all = tg.reduce_sum %x dims [0, 1] : tensor<2x3xf32> -> tensor<f32>
  return %t, %r, %b, %s, %m, %mean, %all
      : tensor<3x2xf32>, tensor<3x2xf32>, tensor<2x2x3xf32>, tensor<3xf32>,
        tensor<2x1xf32>, tensor<2xf32>, tensor<f32>
}
)mlir",
            Precision::F64);
  ASSERT_TRUE(p.ok()) << p.diagnostics();
  auto out = p.run("f", {f32({2, 3}, {1, 2, 3, 4, 5, 7})});
  ASSERT_EQ(out.size(), 7u);
  EXPECT_EQ(out[0].data, std::vector<double>({1, 4, 2, 5, 3, 7}));
  EXPECT_EQ(out[1].shape, std::vector<int64_t>({3, 2}));
  EXPECT_EQ(out[1].data, std::vector<double>({1, 2, 3, 4, 5, 7}));
  EXPECT_EQ(out[2].data,
            std::vector<double>({1, 2, 3, 1, 2, 3, 4, 5, 7, 4, 5, 7}));
  EXPECT_EQ(out[3].data, std::vector<double>({5, 7, 10}));
  EXPECT_EQ(out[4].shape, std::vector<int64_t>({2, 1}));
  EXPECT_EQ(out[4].data, std::vector<double>({3, 7}));
  EXPECT_EQ(out[5].data, std::vector<double>({2, 16.0 / 3}));
  EXPECT_EQ(out[6].shape, std::vector<int64_t>{});
  EXPECT_EQ(out[6].data, std::vector<double>({22}));
}

TEST(Ops, ConstantsMasksAndEmbeddings) {
  Program p(R"mlir(
func.func @f(%table: tensor<4x2xf32>, %ids: tensor<2x2xi32>)
    -> (tensor<2x3xf32>, tensor<2xi32>, tensor<3x3xf32>, tensor<2x2xf32>,
        tensor<2x2x2xf32>, tensor<4x2xf32>, tensor<2x3xf32>) {
  %c = tg.constant dense<1.5> : tensor<2x3xf32>
  %ci = tg.constant dense<[7, -3]> : tensor<2xi32>
  %causal = tg.causal_mask : tensor<3x3xf32>
  %pad = tg.padding_mask %ids pad_id 0 : tensor<2x2xi32> -> tensor<2x2xf32>
  %e = tg.embedding %table[%ids] : tensor<4x2xf32>, tensor<2x2xi32> -> tensor<2x2x2xf32>
  %de = tg.embedding_grad %e[%ids] : tensor<2x2x2xf32>, tensor<2x2xi32> -> tensor<4x2xf32>
  %cd = tg.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  return %c, %ci, %causal, %pad, %e, %de, %cd
      : tensor<2x3xf32>, tensor<2xi32>, tensor<3x3xf32>, tensor<2x2xf32>,
        tensor<2x2x2xf32>, tensor<4x2xf32>, tensor<2x3xf32>
}
)mlir",
            Precision::F64);
  ASSERT_TRUE(p.ok()) << p.diagnostics();
  auto out = p.run("f", {f32({4, 2}, {0, 1, 10, 11, 20, 21, 30, 31}),
                         i32({2, 2}, {3, 0, 1, 3})});
  ASSERT_EQ(out.size(), 7u);
  EXPECT_EQ(out[0].data, std::vector<double>(6, 1.5));
  EXPECT_EQ(out[1].type, ElementType::I32);
  EXPECT_EQ(out[1].data, std::vector<double>({7, -3}));
  EXPECT_EQ(out[2].data,
            std::vector<double>({0, -1e9, -1e9, 0, 0, -1e9, 0, 0, 0}));
  EXPECT_EQ(out[3].data, std::vector<double>({0, -1e9, 0, 0}));
  EXPECT_EQ(out[4].data, std::vector<double>({30, 31, 0, 1, 10, 11, 30, 31}));
  // Row 3 is gathered twice, so its gradient is twice the row.
  EXPECT_EQ(out[5].data, std::vector<double>({0, 1, 10, 11, 0, 0, 60, 62}));
  EXPECT_EQ(out[6].data, std::vector<double>({1, 2, 3, 4, 5, 6}));
}

// Hand-computed slices, concatenation and gathers of x = [[1, 2], [3, 4],
// [5, 6]], and their backward ops.
const char *kStructuralExample = R"mlir(
func.func @f(%a: tensor<1x2xf32>, %b: tensor<1x2xf32>, %x: tensor<3x2xf32>,
             %rows: tensor<2xi32>)
    -> (tensor<2x2xf32>, tensor<3x1xf32>, tensor<2x2xf32>, tensor<3x2x1xf32>,
        tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) {
  %c = tg.concat %a, %b dim 0 : tensor<1x2xf32>, tensor<1x2xf32> -> tensor<2x2xf32>
  %s = tg.slice %x dim 1 start 1 : tensor<3x2xf32> -> tensor<3x1xf32>
  %g = tg.gather %x[%rows] dim 0 : tensor<3x2xf32>, tensor<2xi32> -> tensor<2x2xf32>
  %cols = tg.constant dense<[[1], [0]]> : tensor<2x1xi32>
  %gc = tg.gather %x[%cols] dim 1 : tensor<3x2xf32>, tensor<2x1xi32> -> tensor<3x2x1xf32>
  %ds = tg.slice_grad %s dim 1 start 0 : tensor<3x1xf32> -> tensor<3x2xf32>
  %dg = tg.gather_grad %g[%rows] dim 0 : tensor<2x2xf32>, tensor<2xi32> -> tensor<3x2xf32>
  %twice = tg.constant dense<1> : tensor<2xi32>
  %dt = tg.gather_grad %g[%twice] dim 0 : tensor<2x2xf32>, tensor<2xi32> -> tensor<3x2xf32>
  return %c, %s, %g, %gc, %ds, %dg, %dt
      : tensor<2x2xf32>, tensor<3x1xf32>, tensor<2x2xf32>, tensor<3x2x1xf32>,
        tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>
}
)mlir";

TEST(Ops, SlicesConcatAndGathers) {
  Program p(kStructuralExample, Precision::F64);
  ASSERT_TRUE(p.ok()) << p.diagnostics();
  auto out = p.run("f", {f32({1, 2}, {1, 2}), f32({1, 2}, {3, 4}),
                         f32({3, 2}, {1, 2, 3, 4, 5, 6}), i32({2}, {2, 0})});
  ASSERT_EQ(out.size(), 7u);
  EXPECT_EQ(out[0].data, std::vector<double>({1, 2, 3, 4}));
  EXPECT_EQ(out[1].data, std::vector<double>({2, 4, 6}));
  EXPECT_EQ(out[2].data, std::vector<double>({5, 6, 1, 2}));
  // Columns 1 then 0 of each row, each as a [1] entry.
  EXPECT_EQ(out[3].data, std::vector<double>({2, 1, 4, 3, 6, 5}));
  EXPECT_EQ(out[4].data, std::vector<double>({2, 0, 4, 0, 6, 0}));
  // Each gathered row back where it came from; row 1 was not taken.
  EXPECT_EQ(out[5].data, std::vector<double>({1, 2, 0, 0, 5, 6}));
  // Both rows to row 1: they add up.
  EXPECT_EQ(out[6].data, std::vector<double>({0, 0, 6, 8, 0, 0}));
}

// The verifier cannot see the indices: the interpreter checks them and
// names the op.
TEST(Ops, GatherIndexOutOfRangeIsAnError) {
  Program p(kStructuralExample, Precision::F64);
  ASSERT_TRUE(p.ok()) << p.diagnostics();
  EXPECT_TRUE(failed(p.interp->run(
      "f", {f32({1, 2}, {1, 2}), f32({1, 2}, {3, 4}),
            f32({3, 2}, {1, 2, 3, 4, 5, 6}), i32({2}, {0, 3})})));
  ASSERT_EQ(p.t.messages.size(), 1u) << p.diagnostics();
  EXPECT_EQ(p.t.messages[0],
            "'tg.gather' op index 3 at flat index 1 is outside [0, 3)");
}

TEST(Ops, SoftmaxLayerNormAndLoss) {
  Program p(R"mlir(
func.func @f(%x: tensor<2x3xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>, %t: tensor<2xi32>)
    -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<f32>, tensor<i32>, tensor<2x3xf32>) {
  %s = tg.softmax %x axis 0 : tensor<2x3xf32>
  %ln = tg.layer_norm %x, %g, %b eps 0.5 : tensor<2x3xf32>, tensor<3xf32>
  %loss, %n = tg.cross_entropy %x, %t smoothing 1.000000e-01 ignore -1 : tensor<2x3xf32>, tensor<2xi32>
  %one = tg.constant dense<2.0> : tensor<f32>
  %dl = tg.cross_entropy_grad %one, %x, %t smoothing 1.000000e-01 ignore -1 : tensor<2x3xf32>, tensor<2xi32>
  return %s, %ln, %loss, %n, %dl : tensor<2x3xf32>, tensor<2x3xf32>, tensor<f32>, tensor<i32>, tensor<2x3xf32>
}
)mlir",
            Precision::F64);
  ASSERT_TRUE(p.ok()) << p.diagnostics();
  auto out = p.run("f", {f32({2, 3}, {1, 2, 3, 1, 0, 5}), f32({3}, {1, 2, 3}),
                         f32({3}, {0, 0, 1}), i32({2}, {2, -1})});
  ASSERT_EQ(out.size(), 5u);
  // softmax over axis 0: column (2, 0) -> [e^2, 1] / (e^2 + 1).
  double e2 = std::exp(2.0);
  EXPECT_DOUBLE_EQ(out[0][1], e2 / (e2 + 1));
  EXPECT_DOUBLE_EQ(out[0][4], 1 / (e2 + 1));
  EXPECT_DOUBLE_EQ(out[0][0], 0.5);
  // layer_norm of row [1, 2, 3]: mean 2, biased var 2/3, eps 0.5 inside sqrt.
  double r = 1 / std::sqrt(2.0 / 3 + 0.5);
  EXPECT_DOUBLE_EQ(out[1][0], -r);
  EXPECT_DOUBLE_EQ(out[1][1], 0.0);
  EXPECT_DOUBLE_EQ(out[1][2], 3 * r + 1);
  // Row 0 counts (target 2), row 1 is ignored: with l = log(e + e^2 + e^3)
  // and s the f32 smoothing 0.1, loss = -((1 - s)(3 - l) + s/3 (6 - 3 l)).
  double s = static_cast<float>(0.1);
  double l = std::log(std::exp(1.0) + e2 + std::exp(3.0));
  EXPECT_NEAR(out[2][0], -((1 - s) * (3 - l) + s / 3 * (6 - 3 * l)), 1e-15);
  EXPECT_EQ(out[3].type, ElementType::I32);
  EXPECT_EQ(out[3][0], 1);
  // d = 2 (softmax - q) / 1 at row 0, 0 at the ignored row.
  double q = s / 3;
  EXPECT_NEAR(out[4][0], 2 * (std::exp(1 - l) - q), 1e-15);
  EXPECT_NEAR(out[4][2], 2 * (std::exp(3 - l) - (1 - s + q)), 1e-15);
  EXPECT_EQ(out[4][3], 0.0);
  EXPECT_EQ(out[4][5], 0.0);
}

// Rows x = [1, 2, 3, 4] (mean square 7.5) and [1, -2, 1, 2] (2.5), with
// eps 1.5 making the root mean squares 3 and 2.
TEST(Ops, RmsNormAndItsGradient) {
  Program p(R"mlir(
func.func @f(%x: tensor<2x4xf32>, %g: tensor<4xf32>)
    -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>) {
  %y = tg.rms_norm %x, %g eps 1.500000e+00 : tensor<2x4xf32>, tensor<4xf32>
  %dy = tg.constant dense<1.0> : tensor<2x4xf32>
  %one = tg.constant dense<1.0> : tensor<4xf32>
  %dx, %dg = tg.rms_norm_grad %dy, %x, %one eps 1.500000e+00 : tensor<2x4xf32>, tensor<4xf32>
  return %y, %dx, %dg : tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>
}
)mlir",
            Precision::F64);
  ASSERT_TRUE(p.ok()) << p.diagnostics();
  auto out = p.run("f", {f32({2, 4}, {1, 2, 3, 4, 1, -2, 1, 2}),
                         f32({4}, {1, 2, 0.5, -1})});
  ASSERT_EQ(out.size(), 3u);
  // x / 3 and x / 2, times gamma.
  test::expectClose(out[0],
                    f32({2, 4}, {1.0 / 3, 4.0 / 3, 0.5, -4.0 / 3, 0.5, -2,
                                 0.25, -1}),
                    1e-15, "rms_norm");
  // With dy = gamma = 1: dx = rstd (1 - xhat mean(xhat)), xhat = x rstd;
  // row 0: mean(xhat) = 5/6, row 1: 1/4. dgamma sums xhat over the rows.
  test::expectClose(out[1],
                    f32({2, 4}, {13.0 / 54, 8.0 / 54, 3.0 / 54, -2.0 / 54,
                                 0.4375, 0.625, 0.4375, 0.375}),
                    1e-15, "rms_norm_grad input");
  test::expectClose(out[2], f32({4}, {5.0 / 6, -1.0 / 3, 1.5, 7.0 / 3}), 1e-15,
                    "rms_norm_grad gamma");
}

} // namespace
