//===- GradientRulesTest.cpp - every gradient rule vs central differences -===//
//
// One small function per op with a rule: loss = sum(op(inputs) * r) for a
// random r, so every output element carries a different weight. The inputs
// are trainable variables set to random values; tg-autodiff's gradients are
// compared with central differences in f64 (h = 1e-6, min(abs, rel) error
// <= 1e-6) on the interpreter.
//
//===----------------------------------------------------------------------===//
#include "test/unit/passes/GradientCheck.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::test;

namespace {

struct RuleCase {
  std::string name;
  /// `tg.variable` declarations (trainable, any init: values are set here).
  std::string variables;
  /// Extra function arguments ("%ids: tensor<2x3xi32>, "), filled with ids
  /// in [0, idBound) or the dropout key {7, 3}.
  std::string arguments;
  /// Ops that define %y of type `outType` from the loaded variables.
  std::string body;
  std::string outType;
  /// Range of the variables' values (positive for log, sqrt, div).
  double lo = -1.0, hi = 1.0;
  int64_t idBound = 5;
};

/// Test listings name the case, not its bytes.
void PrintTo(const RuleCase &c, std::ostream *os) { *os << c.name; }

std::string moduleFor(const RuleCase &c) {
  // "tensor<2x3xf32>" has rank 2: one 'x' per dimension.
  int64_t rank = std::count(c.outType.begin(), c.outType.end(), 'x');
  std::string reduce;
  if (rank == 0) {
    reduce = "%l = tg.mul %y, %r : " + c.outType + "\n";
  } else {
    std::string dims;
    for (int64_t i = 0; i < rank; ++i)
      dims += (i ? ", " : "") + std::to_string(i);
    reduce = "%p = tg.mul %y, %r : " + c.outType + "\n" +
             "%l = tg.reduce_sum %p dims [" + dims + "] : " + c.outType +
             " -> tensor<f32>\n";
  }
  return c.variables + "func.func @loss(" + c.arguments + "%r: " + c.outType +
         ") -> tensor<f32> {\n" + c.body + "\n" + reduce +
         "return %l : tensor<f32>\n}\n";
}

class GradientRule : public ::testing::TestWithParam<RuleCase> {};

TEST_P(GradientRule, MatchesCentralDifferences) {
  const RuleCase &c = GetParam();
  std::string source = moduleFor(c);
  Program program(source, Precision::F64);
  ASSERT_TRUE(program.ok()) << source << program.diagnostics();
  ASSERT_TRUE(differentiate(*program.module, program.t)) << source;

  Random random(17);
  for (auto variable : program.module->getOps<tg::VariableOp>())
    for (double &x : program.interp->variable(variable.getSymName())->data)
      x = random.uniform(c.lo, c.hi);
  auto function = program.module->lookupSymbol<func::FuncOp>("loss");
  std::vector<HostTensor> args;
  for (BlockArgument arg : function.getArguments()) {
    auto type = cast<RankedTensorType>(arg.getType());
    std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
    if (type.getElementType().isInteger(32))
      args.push_back(shape == std::vector<int64_t>{2}
                         ? HostTensor::i32({2}, {7, 3})
                         : random.ids(shape, c.idBound));
    else
      args.push_back(random.tensor(shape));
  }
  double worst = checkGradients(*program.interp, *program.module, args);
  EXPECT_LE(worst, 1e-6) << source;
}

const char *kMatmulVars = R"(
tg.variable @a trainable init(zeros) : tensor<3x4xf32>
tg.variable @b trainable init(zeros) : tensor<4x5xf32>
)";

std::vector<RuleCase> cases() {
  std::vector<RuleCase> all;
  auto add = [&](RuleCase c) { all.push_back(std::move(c)); };

  // Matmul: every transpose combination, batched, and a shared rank-2 rhs.
  add({"matmul", kMatmulVars, "",
       "%a = tg.load @a : tensor<3x4xf32>\n%b = tg.load @b : tensor<4x5xf32>\n"
       "%y = tg.matmul %a, %b : tensor<3x4xf32>, tensor<4x5xf32> -> tensor<3x5xf32>",
       "tensor<3x5xf32>"});
  add({"matmul_transpose_lhs",
       "tg.variable @a trainable init(zeros) : tensor<4x3xf32>\n"
       "tg.variable @b trainable init(zeros) : tensor<4x5xf32>\n",
       "",
       "%a = tg.load @a : tensor<4x3xf32>\n%b = tg.load @b : tensor<4x5xf32>\n"
       "%y = tg.matmul %a, %b transpose_lhs : tensor<4x3xf32>, tensor<4x5xf32> -> tensor<3x5xf32>",
       "tensor<3x5xf32>"});
  add({"matmul_transpose_rhs",
       "tg.variable @a trainable init(zeros) : tensor<3x4xf32>\n"
       "tg.variable @b trainable init(zeros) : tensor<5x4xf32>\n",
       "",
       "%a = tg.load @a : tensor<3x4xf32>\n%b = tg.load @b : tensor<5x4xf32>\n"
       "%y = tg.matmul %a, %b transpose_rhs : tensor<3x4xf32>, tensor<5x4xf32> -> tensor<3x5xf32>",
       "tensor<3x5xf32>"});
  add({"matmul_transpose_both",
       "tg.variable @a trainable init(zeros) : tensor<4x3xf32>\n"
       "tg.variable @b trainable init(zeros) : tensor<5x4xf32>\n",
       "",
       "%a = tg.load @a : tensor<4x3xf32>\n%b = tg.load @b : tensor<5x4xf32>\n"
       "%y = tg.matmul %a, %b transpose_lhs transpose_rhs : tensor<4x3xf32>, tensor<5x4xf32> -> tensor<3x5xf32>",
       "tensor<3x5xf32>"});
  add({"matmul_batched",
       "tg.variable @a trainable init(zeros) : tensor<2x3x4xf32>\n"
       "tg.variable @b trainable init(zeros) : tensor<2x5x4xf32>\n",
       "",
       "%a = tg.load @a : tensor<2x3x4xf32>\n%b = tg.load @b : tensor<2x5x4xf32>\n"
       "%y = tg.matmul %a, %b transpose_rhs : tensor<2x3x4xf32>, tensor<2x5x4xf32> -> tensor<2x3x5xf32>",
       "tensor<2x3x5xf32>"});
  for (auto [suffix, attrs, lhsShape, rhsShape] :
       {std::tuple{"", "", "2x2x3x4", "4x5"},
        std::tuple{"_transpose_rhs", " transpose_rhs", "2x2x3x4", "5x4"},
        std::tuple{"_transpose_lhs", " transpose_lhs", "2x2x4x3", "4x5"},
        std::tuple{"_transpose_both", " transpose_lhs transpose_rhs", "2x2x4x3",
                   "5x4"}}) {
    std::string l = std::string("tensor<") + lhsShape + "xf32>";
    std::string r = std::string("tensor<") + rhsShape + "xf32>";
    add({std::string("matmul_shared_rhs") + suffix,
         "tg.variable @a trainable init(zeros) : " + l + "\n" +
             "tg.variable @b trainable init(zeros) : " + r + "\n",
         "",
         "%a = tg.load @a : " + l + "\n%b = tg.load @b : " + r + "\n" +
             "%y = tg.matmul %a, %b" + attrs + " : " + l + ", " + r +
             " -> tensor<2x2x3x5xf32>",
         "tensor<2x2x3x5xf32>"});
  }

  // Elementwise.
  const std::string two = "tg.variable @x trainable init(zeros) : tensor<2x3xf32>\n"
                          "tg.variable @z trainable init(zeros) : tensor<2x3xf32>\n";
  const std::string loadTwo = "%x = tg.load @x : tensor<2x3xf32>\n"
                              "%z = tg.load @z : tensor<2x3xf32>\n";
  for (const char *op : {"add", "sub", "mul", "div"})
    add({op, two, "",
         loadTwo + "%y = tg." + op + " %x, %z : tensor<2x3xf32>",
         "tensor<2x3xf32>", 0.5, 2.0});
  const std::string one = "tg.variable @x trainable init(zeros) : tensor<2x3xf32>\n";
  const std::string loadOne = "%x = tg.load @x : tensor<2x3xf32>\n";
  for (const char *op :
       {"neg", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "gelu",
        "gelu_tanh"})
    add({op, one, "", loadOne + "%y = tg." + op + " %x : tensor<2x3xf32>",
         "tensor<2x3xf32>", 0.5, 2.0});
  add({"relu", one, "", loadOne + "%y = tg.relu %x : tensor<2x3xf32>",
       "tensor<2x3xf32>"});
  // Both signs: where the activations bend, and abs's two sides.
  for (const char *op : {"sigmoid", "gelu", "gelu_tanh", "abs"})
    add({std::string(op) + "_signed", one, "",
         loadOne + "%y = tg." + op + " %x : tensor<2x3xf32>",
         "tensor<2x3xf32>", -3.0, 3.0});
  for (const char *op : {"maximum", "minimum"}) {
    add({op, two, "", loadTwo + "%y = tg." + op + " %x, %z : tensor<2x3xf32>",
         "tensor<2x3xf32>", -3.0, 3.0});
    // Every element tied: each side gets half of dy, d/dx max(x, x) = 1.
    add({std::string(op) + "_tied", one, "",
         loadOne + "%y = tg." + op + " %x, %x : tensor<2x3xf32>",
         "tensor<2x3xf32>", -3.0, 3.0});
  }
  // A comparison's mask passes no gradient; where passes dy to the chosen
  // side.
  add({"where", two, "",
       loadTwo + "%c = tg.greater %x, %z : tensor<2x3xf32>\n"
                 "%y = tg.where %c, %x, %z : tensor<2x3xf32>",
       "tensor<2x3xf32>", -3.0, 3.0});
  // (equal compares x with itself: random x and z are never equal)
  for (const char *op : {"less", "less_equal", "greater_equal", "equal",
                         "not_equal"})
    add({std::string("mask_") + op, two, "",
         loadTwo + "%c = tg." + op +
             (std::string(op) == "equal" ? " %x, %x" : " %x, %z") +
             " : tensor<2x3xf32>\n"
                   "%m = tg.mul %c, %x : tensor<2x3xf32>\n"
                   "%y = tg.add %m, %z : tensor<2x3xf32>",
         "tensor<2x3xf32>", -3.0, 3.0});
  for (auto [name, exponent] :
       {std::pair{"square", "2.000000e+00"}, std::pair{"cube", "3.000000e+00"},
        std::pair{"root", "5.000000e-01"}, std::pair{"neg", "-1.500000e+00"},
        std::pair{"zero", "0.000000e+00"}, std::pair{"one", "1.000000e+00"}})
    // (+ x: x^0's gradient is zero, which the check would call a bug)
    add({std::string("pow_") + name, one, "",
         loadOne + "%w = tg.pow %x, " + exponent + " : tensor<2x3xf32>\n" +
             "%y = tg.add %w, %x : tensor<2x3xf32>",
         "tensor<2x3xf32>", 0.5, 2.0});
  add({"scale", one, "",
       loadOne + "%y = tg.scale %x by 2.500000e+00 : tensor<2x3xf32>",
       "tensor<2x3xf32>"});
  add({"fan_out", one, "",
       loadOne + "%s = tg.mul %x, %x : tensor<2x3xf32>\n"
                 "%y = tg.add %s, %x : tensor<2x3xf32>",
       "tensor<2x3xf32>"});

  // Shapes and reductions.
  add({"broadcast",
       "tg.variable @x trainable init(zeros) : tensor<3x1xf32>\n", "",
       "%x = tg.load @x : tensor<3x1xf32>\n"
       "%y = tg.broadcast %x dims [1, 2] : tensor<3x1xf32> -> tensor<2x3x4xf32>",
       "tensor<2x3x4xf32>"});
  add({"reshape", one, "",
       loadOne + "%y = tg.reshape %x : tensor<2x3xf32> -> tensor<3x2xf32>",
       "tensor<3x2xf32>"});
  add({"transpose",
       "tg.variable @x trainable init(zeros) : tensor<2x3x4xf32>\n", "",
       "%x = tg.load @x : tensor<2x3x4xf32>\n"
       "%y = tg.transpose %x permutation [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>",
       "tensor<3x4x2xf32>"});
  const std::string three =
      "tg.variable @x trainable init(zeros) : tensor<2x3x4xf32>\n";
  const std::string loadThree = "%x = tg.load @x : tensor<2x3x4xf32>\n";
  add({"reduce_sum", three, "",
       loadThree + "%y = tg.reduce_sum %x dims [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>",
       "tensor<3xf32>"});
  add({"reduce_sum_keep_dims", three, "",
       loadThree + "%y = tg.reduce_sum %x dims [1] keep_dims : tensor<2x3x4xf32> -> tensor<2x1x4xf32>",
       "tensor<2x1x4xf32>"});
  add({"reduce_mean", three, "",
       loadThree + "%y = tg.reduce_mean %x dims [2] : tensor<2x3x4xf32> -> tensor<2x3xf32>",
       "tensor<2x3xf32>"});
  add({"reduce_max", three, "",
       loadThree + "%y = tg.reduce_max %x dims [2] keep_dims : tensor<2x3x4xf32> -> tensor<2x3x1xf32>",
       "tensor<2x3x1xf32>"});

  // Layers.
  add({"softmax", three, "",
       loadThree + "%y = tg.softmax %x axis 2 : tensor<2x3x4xf32>",
       "tensor<2x3x4xf32>"});
  add({"layer_norm",
       three + "tg.variable @g trainable init(zeros) : tensor<4xf32>\n"
               "tg.variable @b trainable init(zeros) : tensor<4xf32>\n",
       "",
       loadThree + "%g = tg.load @g : tensor<4xf32>\n%b = tg.load @b : tensor<4xf32>\n"
                   "%y = tg.layer_norm %x, %g, %b eps 1.000000e-05 : tensor<2x3x4xf32>, tensor<4xf32>",
       "tensor<2x3x4xf32>"});
  add({"rms_norm", three + "tg.variable @g trainable init(zeros) : tensor<4xf32>\n",
       "",
       loadThree + "%g = tg.load @g : tensor<4xf32>\n"
                   "%y = tg.rms_norm %x, %g eps 1.000000e-05 : tensor<2x3x4xf32>, tensor<4xf32>",
       "tensor<2x3x4xf32>"});
  add({"dropout", three, "%key: tensor<2xi32>, ",
       loadThree + "%y = tg.dropout %x, %key rate 3.000000e-01 op_id 4 : tensor<2x3x4xf32>",
       "tensor<2x3x4xf32>"});
  add({"embedding",
       "tg.variable @e trainable init(zeros) : tensor<5x4xf32>\n",
       "%ids: tensor<2x3xi32>, ",
       "%e = tg.load @e : tensor<5x4xf32>\n"
       "%y = tg.embedding %e[%ids] : tensor<5x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>",
       "tensor<2x3x4xf32>"});
  // Slices inside, at the start and at the end (no zeros on one side).
  add({"slice", three, "",
       loadThree + "%y = tg.slice %x dim 2 start 1 : tensor<2x3x4xf32> -> tensor<2x3x2xf32>",
       "tensor<2x3x2xf32>"});
  add({"slice_first", three, "",
       loadThree + "%y = tg.slice %x dim 0 start 0 : tensor<2x3x4xf32> -> tensor<1x3x4xf32>",
       "tensor<1x3x4xf32>"});
  add({"slice_last", three, "",
       loadThree + "%y = tg.slice %x dim 1 start 1 : tensor<2x3x4xf32> -> tensor<2x2x4xf32>",
       "tensor<2x2x4xf32>"});
  add({"concat", three + "tg.variable @z trainable init(zeros) : tensor<2x2x4xf32>\n",
       "",
       loadThree + "%z = tg.load @z : tensor<2x2x4xf32>\n"
                   "%y = tg.concat %x, %z, %x dim 1 : tensor<2x3x4xf32>, tensor<2x2x4xf32>, "
                   "tensor<2x3x4xf32> -> tensor<2x8x4xf32>",
       "tensor<2x8x4xf32>"});
  // Gathers along a middle dimension, by a vector and by a matrix of
  // indices, repeated ones among them (ids in [0, 3) or [0, 4)).
  add({"gather", three, "%ids: tensor<5xi32>, ",
       loadThree + "%y = tg.gather %x[%ids] dim 1 : tensor<2x3x4xf32>, tensor<5xi32> -> tensor<2x5x4xf32>",
       "tensor<2x5x4xf32>", -1.0, 1.0, /*idBound=*/3});
  add({"gather_matrix", three, "%ids: tensor<2x3xi32>, ",
       loadThree + "%y = tg.gather %x[%ids] dim 2 : tensor<2x3x4xf32>, tensor<2x3xi32> -> tensor<2x3x2x3xf32>",
       "tensor<2x3x2x3xf32>", -1.0, 1.0, /*idBound=*/4});
  // Exact ties: a max over the embeddings of a repeated token (6 positions
  // of ids in [0, 2)) has tied maxima that are one variable's element. The
  // maxima share dy: each tied one taking all of it would count it twice.
  add({"reduce_max_tied",
       "tg.variable @e trainable init(zeros) : tensor<5x4xf32>\n",
       "%ids: tensor<2x6xi32>, ",
       "%e = tg.load @e : tensor<5x4xf32>\n"
       "%x = tg.embedding %e[%ids] : tensor<5x4xf32>, tensor<2x6xi32> -> tensor<2x6x4xf32>\n"
       "%y = tg.reduce_max %x dims [1] : tensor<2x6x4xf32> -> tensor<2x4xf32>",
       "tensor<2x4xf32>", -1.0, 1.0, /*idBound=*/2});
  // Rotary embedding of [B, H, S, D], forward and inverse, from position 0
  // and from a runtime offset (an id in [0, 5)); a small base turns the last
  // pairs by whole radians.
  const std::string heads =
      "tg.variable @x trainable init(zeros) : tensor<2x2x3x4xf32>\n";
  const std::string loadHeads = "%x = tg.load @x : tensor<2x2x3x4xf32>\n";
  add({"rotary", heads, "",
       loadHeads + "%y = tg.rotary %x base 3.000000e+00 : tensor<2x2x3x4xf32>",
       "tensor<2x2x3x4xf32>"});
  add({"rotary_inverse_offset", heads, "%position: tensor<i32>, ",
       loadHeads + "%y = tg.rotary %x offset %position base 3.000000e+00 "
                   "inverse : tensor<2x2x3x4xf32>",
       "tensor<2x2x3x4xf32>"});
  add({"cross_entropy",
       "tg.variable @x trainable init(zeros) : tensor<2x3x5xf32>\n",
       "%t: tensor<2x3xi32>, ",
       "%x = tg.load @x : tensor<2x3x5xf32>\n"
       "%y, %n = tg.cross_entropy %x, %t smoothing 1.000000e-01 ignore 0 : tensor<2x3x5xf32>, tensor<2x3xi32>",
       "tensor<f32>"});

  // Fused ops.
  const std::string qkv =
      "tg.variable @q trainable init(zeros) : tensor<2x2x3x4xf32>\n"
      "tg.variable @k trainable init(zeros) : tensor<2x2x5x4xf32>\n"
      "tg.variable @v trainable init(zeros) : tensor<2x2x5x4xf32>\n";
  const std::string loadQkv = "%q = tg.load @q : tensor<2x2x3x4xf32>\n"
                              "%k = tg.load @k : tensor<2x2x5x4xf32>\n"
                              "%v = tg.load @v : tensor<2x2x5x4xf32>\n";
  add({"attention", qkv, "%ids: tensor<2x5xi32>, %key: tensor<2xi32>, ",
       loadQkv +
           "%m = tg.padding_mask %ids pad_id 0 : tensor<2x5xi32> -> tensor<2x5xf32>\n"
           "%y, %lse = tg.attention %q, %k, %v mask %m key %key scale 5.000000e-01 "
           "dropout 2.000000e-01 op_id 3 : (tensor<2x2x3x4xf32>, tensor<2x2x5x4xf32>, "
           "tensor<2x2x5x4xf32>, tensor<2x5xf32>, tensor<2xi32>) -> (tensor<2x2x3x4xf32>, "
           "tensor<2x2x3xf32>)",
       "tensor<2x2x3x4xf32>", -1.0, 1.0, 3});
  add({"attention_causal",
       "tg.variable @q trainable init(zeros) : tensor<2x2x5x4xf32>\n"
       "tg.variable @k trainable init(zeros) : tensor<2x2x5x4xf32>\n"
       "tg.variable @v trainable init(zeros) : tensor<2x2x5x4xf32>\n",
       "",
       "%q = tg.load @q : tensor<2x2x5x4xf32>\n%k = tg.load @k : tensor<2x2x5x4xf32>\n"
       "%v = tg.load @v : tensor<2x2x5x4xf32>\n"
       "%y, %lse = tg.attention %q, %k, %v causal scale 5.000000e-01 dropout 0.000000e+00 "
       "op_id 1 : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> "
       "(tensor<2x2x5x4xf32>, tensor<2x2x5xf32>)",
       "tensor<2x2x5x4xf32>"});
  add({"residual_layer_norm",
       three + "tg.variable @s trainable init(zeros) : tensor<2x3x4xf32>\n"
               "tg.variable @g trainable init(zeros) : tensor<4xf32>\n"
               "tg.variable @b trainable init(zeros) : tensor<4xf32>\n",
       "%key: tensor<2xi32>, ",
       loadThree + "%s = tg.load @s : tensor<2x3x4xf32>\n"
                   "%g = tg.load @g : tensor<4xf32>\n%b = tg.load @b : tensor<4xf32>\n"
                   "%y, %mean, %rstd = tg.residual_layer_norm %x, %s, %g, %b, %key rate "
                   "1.000000e-01 op_id 2 eps 1.000000e-05 : tensor<2x3x4xf32>, tensor<4xf32>",
       "tensor<2x3x4xf32>"});
  // The fused norms that keep the sum (pre-LN blocks): the loss reads the
  // result and the sum, so both gradients reach the backward.
  const std::string fusedVariables =
      three + "tg.variable @s trainable init(zeros) : tensor<2x3x4xf32>\n"
              "tg.variable @g trainable init(zeros) : tensor<4xf32>\n";
  const std::string loadFused = loadThree +
                                "%s = tg.load @s : tensor<2x3x4xf32>\n"
                                "%g = tg.load @g : tensor<4xf32>\n";
  add({"residual_layer_norm_sum",
       fusedVariables + "tg.variable @b trainable init(zeros) : tensor<4xf32>\n",
       "%key: tensor<2xi32>, ",
       loadFused + "%b = tg.load @b : tensor<4xf32>\n"
                   "%z, %mean, %rstd, %h = tg.residual_layer_norm %x, %s, %g, %b, %key rate "
                   "1.000000e-01 op_id 2 eps 1.000000e-05 : tensor<2x3x4xf32>, tensor<4xf32> "
                   "sum tensor<2x3x4xf32>\n"
                   "%y = tg.mul %z, %h : tensor<2x3x4xf32>",
       "tensor<2x3x4xf32>"});
  add({"residual_rms_norm", fusedVariables, "%key: tensor<2xi32>, ",
       loadFused + "%y, %rstd = tg.residual_layer_norm rms %x, %s, %g, %key rate "
                   "1.000000e-01 op_id 2 eps 1.000000e-05 : tensor<2x3x4xf32>, tensor<4xf32>",
       "tensor<2x3x4xf32>"});
  add({"residual_rms_norm_sum", fusedVariables, "%key: tensor<2xi32>, ",
       loadFused + "%z, %rstd, %h = tg.residual_layer_norm rms %x, %s, %g, %key rate "
                   "1.000000e-01 op_id 2 eps 1.000000e-05 : tensor<2x3x4xf32>, tensor<4xf32> "
                   "sum tensor<2x3x4xf32>\n"
                   "%y = tg.mul %z, %h : tensor<2x3x4xf32>",
       "tensor<2x3x4xf32>"});
  // Only the sum reaches the loss: the norm's part of h's gradient is zero
  // (gamma, which then gets none, is an argument).
  add({"residual_rms_norm_only_sum",
       three + "tg.variable @s trainable init(zeros) : tensor<2x3x4xf32>\n",
       "%key: tensor<2xi32>, %g: tensor<4xf32>, ",
       loadThree + "%s = tg.load @s : tensor<2x3x4xf32>\n"
                   "%z, %rstd, %y = tg.residual_layer_norm rms %x, %s, %g, %key rate "
                   "1.000000e-01 op_id 2 eps 1.000000e-05 : tensor<2x3x4xf32>, tensor<4xf32> "
                   "sum tensor<2x3x4xf32>",
       "tensor<2x3x4xf32>"});
  return all;
}

INSTANTIATE_TEST_SUITE_P(EveryRule, GradientRule, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<RuleCase> &info) {
                           return info.param.name;
                         });

// tg.stop_gradient is by design not the derivative, so central differences
// cannot check it: loss = sum(x * stop_gradient(x)) has derivative 2x, and
// its gradient must be the stopped factor alone, x.
TEST(StopGradient, PassesNoGradientToItsInput) {
  const std::string source = R"mlir(
tg.variable @x trainable init(zeros) : tensor<2x3xf32>
func.func @loss() -> tensor<f32> {
  %x = tg.load @x : tensor<2x3xf32>
  %s = tg.stop_gradient %x : tensor<2x3xf32>
  %p = tg.mul %x, %s : tensor<2x3xf32>
  %l = tg.reduce_sum %p dims [0, 1] : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
)mlir";
  Program program(source, Precision::F64);
  ASSERT_TRUE(program.ok()) << program.diagnostics();
  ASSERT_TRUE(differentiate(*program.module, program.t));
  Random random(5);
  std::vector<double> &x = program.interp->variable("x")->data;
  for (double &v : x)
    v = random.uniform(-1.0, 1.0);
  auto out = program.interp->run("loss", {});
  ASSERT_TRUE(succeeded(out)) << program.diagnostics();
  ASSERT_EQ(out->size(), 2u); // the loss, then the gradient of @x
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ((*out)[1].data[i], x[i]) << "element " << i;
}

} // namespace
