//===- GradientTest.cpp - analytic gradients against central differences -===//
//
// Every module below has @fwd (the op; its first result is y) and @bwd (fwd's
// arguments plus a weight tensor w, returning the gradients of
// L = sum(y * w) for the arguments that `wrt` names, in that order, computed
// with the op's *_grad op or, for matmul, the tg formula autodiff uses).
// Each gradient element is compared with (L(x + h) - L(x - h)) / 2h in f64,
// h = 1e-6; the error is min(absolute, relative) and must stay below 1e-7
// (central differences are accurate to about 1e-9 at these magnitudes; the
// observed worst case is about 3e-10).
//
//===----------------------------------------------------------------------===//
#include "test/unit/interpreter/InterpreterTestUtil.h"

using namespace tgc;
using namespace tgc::test;

namespace {

constexpr double kStep = 1e-6;
constexpr double kTolerance = 1e-7;

double objective(Program &p, const std::vector<HostTensor> &args,
                 const HostTensor &weights) {
  auto out = p.run("fwd", args);
  if (out.empty())
    return 0.0;
  double sum = 0.0;
  for (int64_t i = 0; i < weights.numElements(); ++i)
    sum += out[0][i] * weights[i];
  return sum;
}

void checkGradients(const std::string &source, std::vector<HostTensor> args,
                    const std::vector<size_t> &wrt, Random &rng) {
  Program p(source, Precision::F64);
  ASSERT_TRUE(p.ok()) << p.diagnostics() << source;
  auto y = p.run("fwd", args);
  ASSERT_FALSE(y.empty());
  HostTensor weights = rng.tensor(y[0].shape);
  std::vector<HostTensor> bwdArgs = args;
  bwdArgs.push_back(weights);
  auto grads = p.run("bwd", bwdArgs);
  ASSERT_EQ(grads.size(), wrt.size());
  for (size_t k = 0; k < wrt.size(); ++k) {
    HostTensor &x = args[wrt[k]];
    HostTensor numeric(x.shape);
    for (int64_t i = 0; i < x.numElements(); ++i) {
      double saved = x[i];
      x[i] = saved + kStep;
      double plus = objective(p, args, weights);
      x[i] = saved - kStep;
      double minus = objective(p, args, weights);
      x[i] = saved;
      numeric[i] = (plus - minus) / (2 * kStep);
    }
    std::string what = "gradient of argument " + std::to_string(wrt[k]);
    test::expectClose(grads[k], numeric, kTolerance, what);
    double largest = 0.0;
    for (double g : grads[k].data)
      largest = std::max(largest, std::fabs(g));
    EXPECT_GT(largest, 1e-3) << what << " is all zeros";
  }
}

TEST(Gradient, Embedding) {
  Random rng(1);
  int64_t vocab = rng.index(3, 6), width = rng.index(2, 4);
  std::vector<int64_t> idShape{rng.index(1, 3), rng.index(2, 4)};
  std::vector<int64_t> outShape{idShape[0], idShape[1], width};
  std::string source = substitute(R"mlir(
func.func @fwd(%t: {T}, %ids: {I}) -> {Y} {
  %y = tg.embedding %t[%ids] : {T}, {I} -> {Y}
  return %y : {Y}
}
func.func @bwd(%t: {T}, %ids: {I}, %w: {Y}) -> {T} {
  %d = tg.embedding_grad %w[%ids] : {Y}, {I} -> {T}
  return %d : {T}
}
)mlir",
                                  {{"T", tensorType({vocab, width})},
                                   {"I", tensorType(idShape, "i32")},
                                   {"Y", tensorType(outShape)}});
  checkGradients(source, {rng.tensor({vocab, width}), rng.ids(idShape, vocab)},
                 {0}, rng);
}

/// C = op(A) op(B): the gradients autodiff emits, as tg.matmul calls.
struct MatmulCase {
  bool transposeLhs, transposeRhs;
  const char *dA, *dB;
};

TEST(Gradient, MatmulWithTransposeFlags) {
  // With G = dC: no flags dA = G B^T, dB = A^T G; transpose_rhs dA = G B,
  // dB = G^T A; transpose_lhs dA = B G^T, dB = A G; both dA = B^T G^T,
  // dB = G^T A^T.
  const MatmulCase cases[] = {
      {false, false, "tg.matmul %w, %b transpose_rhs : {C}, {B} -> {A}",
       "tg.matmul %a, %w transpose_lhs : {A}, {C} -> {B}"},
      {false, true, "tg.matmul %w, %b : {C}, {B} -> {A}",
       "tg.matmul %w, %a transpose_lhs : {C}, {A} -> {B}"},
      {true, false, "tg.matmul %b, %w transpose_rhs : {B}, {C} -> {A}",
       "tg.matmul %a, %w : {A}, {C} -> {B}"},
      {true, true,
       "tg.matmul %b, %w transpose_lhs transpose_rhs : {B}, {C} -> {A}",
       "tg.matmul %w, %a transpose_lhs transpose_rhs : {C}, {A} -> {B}"},
  };
  Random rng(2);
  for (const MatmulCase &c : cases) {
    int64_t batch = rng.index(1, 3), m = rng.index(1, 4), k = rng.index(1, 4),
            n = rng.index(1, 4);
    std::vector<int64_t> a = {batch, c.transposeLhs ? k : m,
                              c.transposeLhs ? m : k};
    std::vector<int64_t> b = {batch, c.transposeRhs ? n : k,
                              c.transposeRhs ? k : n};
    std::string flags = std::string(c.transposeLhs ? " transpose_lhs" : "") +
                        (c.transposeRhs ? " transpose_rhs" : "");
    std::string source = substitute(std::string(R"mlir(
func.func @fwd(%a: {A}, %b: {B}) -> {C} {
  %c = tg.matmul %a, %b{F} : {A}, {B} -> {C}
  return %c : {C}
}
func.func @bwd(%a: {A}, %b: {B}, %w: {C}) -> ({A}, {B}) {
  %da = )mlir") + c.dA + R"mlir(
  %db = )mlir" + c.dB + R"mlir(
  return %da, %db : {A}, {B}
}
)mlir",
                                    {{"A", tensorType(a)},
                                     {"B", tensorType(b)},
                                     {"C", tensorType({batch, m, n})},
                                     {"F", flags}});
    SCOPED_TRACE(flags);
    checkGradients(source, {rng.tensor(a), rng.tensor(b)}, {0, 1}, rng);
  }
}

// A rank-2 rhs shared by every batch (x W): dW sums over the batch, which
// autodiff writes as one matmul of the flattened rows.
TEST(Gradient, MatmulWithSharedRhs) {
  Random rng(3);
  int64_t batch = rng.index(2, 3), m = rng.index(2, 4), k = rng.index(2, 4),
          n = rng.index(2, 4);
  std::string source = substitute(R"mlir(
func.func @fwd(%x: {X}, %w: {W}) -> {Y} {
  %y = tg.matmul %x, %w : {X}, {W} -> {Y}
  return %y : {Y}
}
func.func @bwd(%x: {X}, %w: {W}, %g: {Y}) -> ({X}, {W}) {
  %dx = tg.matmul %g, %w transpose_rhs : {Y}, {W} -> {X}
  %x2 = tg.reshape %x : {X} -> {X2}
  %g2 = tg.reshape %g : {Y} -> {Y2}
  %dw = tg.matmul %x2, %g2 transpose_lhs : {X2}, {Y2} -> {W}
  return %dx, %dw : {X}, {W}
}
)mlir",
                                  {{"X", tensorType({batch, m, k})},
                                   {"W", tensorType({k, n})},
                                   {"Y", tensorType({batch, m, n})},
                                   {"X2", tensorType({batch * m, k})},
                                   {"Y2", tensorType({batch * m, n})}});
  checkGradients(source, {rng.tensor({batch, m, k}), rng.tensor({k, n})},
                 {0, 1}, rng);
}

TEST(Gradient, Relu) {
  Random rng(4);
  std::vector<int64_t> shape{rng.index(2, 4), rng.index(2, 5)};
  HostTensor x = rng.tensor(shape);
  for (double &v : x.data) // keep the kink out of reach of the step
    if (std::fabs(v) < 0.05)
      v += v < 0 ? -0.05 : 0.05;
  std::string source = substitute(R"mlir(
func.func @fwd(%x: {X}) -> {X} {
  %y = tg.relu %x : {X}
  return %y : {X}
}
func.func @bwd(%x: {X}, %w: {X}) -> {X} {
  %d = tg.relu_grad %w, %x : {X}
  return %d : {X}
}
)mlir",
                                  {{"X", tensorType(shape)}});
  checkGradients(source, {x}, {0}, rng);
}

TEST(Gradient, SoftmaxOnEveryAxis) {
  Random rng(5);
  std::vector<int64_t> shape{rng.index(2, 3), rng.index(2, 4), rng.index(2, 5)};
  for (int axis = 0; axis < 3; ++axis) {
    std::string source =
        substitute(R"mlir(
func.func @fwd(%x: {X}) -> {X} {
  %y = tg.softmax %x axis {AXIS} : {X}
  return %y : {X}
}
func.func @bwd(%x: {X}, %w: {X}) -> {X} {
  %y = tg.softmax %x axis {AXIS} : {X}
  %d = tg.softmax_grad %y, %w axis {AXIS} : {X}
  return %d : {X}
}
)mlir",
                   {{"X", tensorType(shape)}, {"AXIS", std::to_string(axis)}});
    SCOPED_TRACE("axis " + std::to_string(axis));
    checkGradients(source, {rng.tensor(shape, -2, 2)}, {0}, rng);
  }
}

TEST(Gradient, LayerNorm) {
  Random rng(6);
  int64_t width = rng.index(3, 6);
  std::vector<int64_t> shape{rng.index(1, 3), rng.index(2, 3), width};
  std::string source =
      substitute(R"mlir(
func.func @fwd(%x: {X}, %g: {G}, %b: {G}) -> {X} {
  %y = tg.layer_norm %x, %g, %b eps 1.000000e-05 : {X}, {G}
  return %y : {X}
}
func.func @bwd(%x: {X}, %g: {G}, %b: {G}, %w: {X}) -> ({X}, {G}, {G}) {
  %dx, %dg, %db = tg.layer_norm_grad %w, %x, %g eps 1.000000e-05 : {X}, {G}
  return %dx, %dg, %db : {X}, {G}, {G}
}
)mlir",
                 {{"X", tensorType(shape)}, {"G", tensorType({width})}});
  checkGradients(source,
                 {rng.tensor(shape, -2, 2), rng.tensor({width}, 0.5, 1.5),
                  rng.tensor({width})},
                 {0, 1, 2}, rng);
}

TEST(Gradient, Dropout) {
  Random rng(7);
  std::vector<int64_t> shape{rng.index(2, 4), rng.index(3, 6)};
  std::string source = substitute(R"mlir(
func.func @fwd(%x: {X}, %key: tensor<2xi32>) -> {X} {
  %y = tg.dropout %x, %key rate 3.000000e-01 op_id 5 : {X}
  return %y : {X}
}
func.func @bwd(%x: {X}, %key: tensor<2xi32>, %w: {X}) -> {X} {
  %d = tg.dropout_grad %w, %key rate 3.000000e-01 op_id 5 : {X}
  return %d : {X}
}
)mlir",
                                  {{"X", tensorType(shape)}});
  checkGradients(source, {rng.tensor(shape), HostTensor::i32({2}, {1234, 17})},
                 {0}, rng);
}

TEST(Gradient, CrossEntropyWithSmoothingAndIgnoredTokens) {
  Random rng(8);
  int64_t vocab = rng.index(3, 6);
  std::vector<int64_t> targets{rng.index(2, 3), rng.index(3, 4)};
  HostTensor ids = rng.ids(targets, vocab);
  ids[0] = 0; // at least one ignored (id 0) and one counted position
  ids[1] = 1;
  std::string source =
      substitute(R"mlir(
func.func @fwd(%x: {X}, %t: {T}) -> tensor<f32> {
  %loss, %n = tg.cross_entropy %x, %t smoothing 1.000000e-01 ignore 0 : {X}, {T}
  return %loss : tensor<f32>
}
func.func @bwd(%x: {X}, %t: {T}, %w: tensor<f32>) -> {X} {
  %d = tg.cross_entropy_grad %w, %x, %t smoothing 1.000000e-01 ignore 0 : {X}, {T}
  return %d : {X}
}
)mlir",
                 {{"X", tensorType({targets[0], targets[1], vocab})},
                  {"T", tensorType(targets, "i32")}});
  checkGradients(source,
                 {rng.tensor({targets[0], targets[1], vocab}, -2, 2), ids}, {0},
                 rng);
}

/// Builds @fwd/@bwd for tg.attention with the given options; with a score
/// bias (a non-empty `bias` shape) @bwd returns its gradient too.
std::string attentionSource(const std::vector<int64_t> &q,
                            const std::vector<int64_t> &k,
                            const std::vector<int64_t> &v, bool mask,
                            bool causal, float dropout,
                            const std::vector<int64_t> &bias = {}) {
  std::vector<int64_t> out{q[0], q[1], q[2], v[3]};
  // The optional operands, shared by the forward and the gradient op.
  std::string extraOperands, extraTypes, extraParams;
  if (mask) {
    extraOperands += " mask %m";
    extraTypes += ", {M}";
    extraParams += ", %m: {M}";
  }
  std::string gradResults = "%dq, %dk, %dv",
              gradTypes = tensorType(q) + ", " + tensorType(k) + ", " +
                          tensorType(v);
  if (!bias.empty()) {
    extraOperands += " bias %bias";
    extraTypes += ", {B}";
    extraParams += ", %bias: {B}";
    gradResults += ", %db";
    gradTypes += ", " + tensorType(bias);
  }
  if (dropout > 0) {
    extraOperands += " key %key";
    extraTypes += ", tensor<2xi32>";
    extraParams += ", %key: tensor<2xi32>";
  }
  std::string attrs = std::string(causal ? " causal" : "") +
                      " scale 0.5 dropout " + std::to_string(dropout) +
                      " op_id 9";
  return substitute(R"mlir(
func.func @fwd({P}) -> {O} {
  %o, %lse = tg.attention {OPS}{ATTRS} : ({TYPES}) -> ({O}, {L})
  return %o : {O}
}
func.func @bwd({P}, %w: {O}) -> ({GT}) {
  %o, %lse = tg.attention {OPS}{ATTRS} : ({TYPES}) -> ({O}, {L})
  {GR} = tg.attention_grad %w, {GOPS}{ATTRS}
      : ({O}, {Q}, {K}, {V}, {O}, {L}{GTYPES}) -> ({GT})
  return {GR} : {GT}
}
)mlir",
                    {{"P", "%q: {Q}, %k: {K}, %v: {V}" + extraParams},
                     {"OPS", "%q, %k, %v" + extraOperands},
                     {"TYPES", "{Q}, {K}, {V}" + extraTypes},
                     {"GOPS", "%q, %k, %v, %o, %lse" + extraOperands},
                     {"GTYPES", extraTypes},
                     {"ATTRS", attrs},
                     {"Q", tensorType(q)},
                     {"K", tensorType(k)},
                     {"V", tensorType(v)},
                     {"M", tensorType({q[0], k[2]})},
                     {"B", bias.empty() ? "" : tensorType(bias)},
                     {"GR", gradResults},
                     {"GT", gradTypes},
                     {"O", tensorType(out)},
                     {"L", tensorType({q[0], q[1], q[2]})}});
}

struct AttentionCase {
  const char *name;
  bool mask, causal;
  float dropout;
};

TEST(Gradient, Attention) {
  const AttentionCase cases[] = {{"plain", false, false, 0.0f},
                                 {"causal", false, true, 0.0f},
                                 {"padding mask", true, false, 0.0f},
                                 {"dropout", false, false, 0.25f},
                                 {"all", true, true, 0.25f}};
  Random rng(9);
  for (const AttentionCase &c : cases) {
    SCOPED_TRACE(c.name);
    int64_t b = rng.index(1, 2), h = rng.index(1, 3), sq = rng.index(2, 4),
            sk = c.causal ? sq : rng.index(2, 5), dk = rng.index(2, 4),
            dv = rng.index(2, 4);
    std::vector<int64_t> q{b, h, sq, dk}, k{b, h, sk, dk}, v{b, h, sk, dv};
    std::vector<HostTensor> args{rng.tensor(q), rng.tensor(k), rng.tensor(v)};
    if (c.mask) {
      // Key 0 is never padding, so no row is fully masked.
      HostTensor m({b, sk});
      for (int64_t i = 0; i < b; ++i)
        for (int64_t j = 1; j < sk; ++j)
          m[i * sk + j] = rng.index(0, 1) ? -1e9 : 0.0;
      m[sk - 1] = -1e9;
      args.push_back(m);
    }
    if (c.dropout > 0)
      args.push_back(HostTensor::i32({2}, {77, 3}));
    checkGradients(attentionSource(q, k, v, c.mask, c.causal, c.dropout), args,
                   {0, 1, 2}, rng);
  }
}

// A score bias: per (batch, head), shared by the batch (relative positions)
// or by every head ([Sq, Sk]), with the masks and dropout; its gradient is
// summed over what it is broadcast along.
TEST(Gradient, AttentionScoreBias) {
  struct BiasCase {
    const char *name;
    bool perBatch, perHead, mask, causal;
    float dropout;
  };
  const BiasCase cases[] = {{"full", true, true, false, false, 0.0f},
                            {"per head", false, true, true, false, 0.25f},
                            {"shared, causal", false, false, false, true, 0.0f},
                            {"per batch", true, false, true, true, 0.25f}};
  Random rng(19);
  for (const BiasCase &c : cases) {
    SCOPED_TRACE(c.name);
    int64_t b = 2, h = rng.index(2, 3), sq = rng.index(2, 4),
            sk = c.causal ? sq : rng.index(2, 5), dk = rng.index(2, 4),
            dv = rng.index(2, 4);
    std::vector<int64_t> q{b, h, sq, dk}, k{b, h, sk, dk}, v{b, h, sk, dv},
        bias{c.perBatch ? b : 1, c.perHead ? h : 1, sq, sk};
    std::vector<HostTensor> args{rng.tensor(q), rng.tensor(k), rng.tensor(v)};
    if (c.mask) {
      HostTensor m({b, sk});
      m[sk - 1] = -1e9; // batch row 0's last key is padding
      args.push_back(m);
    }
    args.push_back(rng.tensor(bias, -2, 2));
    size_t biasArg = args.size() - 1;
    if (c.dropout > 0)
      args.push_back(HostTensor::i32({2}, {77, 3}));
    checkGradients(
        attentionSource(q, k, v, c.mask, c.causal, c.dropout, bias), args,
        {0, 1, 2, biasArg}, rng);
  }
}

TEST(Gradient, ResidualLayerNormWithDropout) {
  Random rng(10);
  int64_t width = rng.index(3, 6);
  std::vector<int64_t> shape{rng.index(1, 3), rng.index(2, 4), width};
  std::string source =
      substitute(R"mlir(
func.func @fwd(%x: {X}, %s: {X}, %g: {G}, %b: {G}, %key: tensor<2xi32>) -> {X} {
  %y, %mean, %rstd = tg.residual_layer_norm %x, %s, %g, %b, %key
      rate 3.000000e-01 op_id 4 eps 1.000000e-05 : {X}, {G}
  return %y : {X}
}
func.func @bwd(%x: {X}, %s: {X}, %g: {G}, %b: {G}, %key: tensor<2xi32>, %w: {X})
    -> ({X}, {X}, {G}, {G}) {
  %y, %mean, %rstd = tg.residual_layer_norm %x, %s, %g, %b, %key
      rate 3.000000e-01 op_id 4 eps 1.000000e-05 : {X}, {G}
  %dx, %ds, %dg, %db = tg.residual_layer_norm_grad %w, %y, %g, %b, %rstd, %key
      rate 3.000000e-01 op_id 4 eps 1.000000e-05 : {X}, {G}
  return %dx, %ds, %dg, %db : {X}, {X}, {G}, {G}
}
)mlir",
                 {{"X", tensorType(shape)}, {"G", tensorType({width})}});
  checkGradients(source,
                 {rng.tensor(shape, -2, 2), rng.tensor(shape, -2, 2),
                  rng.tensor({width}, 0.5, 1.5), rng.tensor({width}),
                  HostTensor::i32({2}, {99, 12})},
                 {0, 1, 2, 3}, rng);
}

} // namespace
