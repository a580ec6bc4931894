//===- StateTest.cpp - variables, Adam, precision and error reporting ----===//
#include "runtime/program/train/Initializers.h"
#include "test/unit/interpreter/InterpreterTestUtil.h"

#include "mlir/IR/Diagnostics.h"

using namespace tgc;
using tgc::test::f32;
using tgc::test::Program;

namespace {

TEST(State, StoresPersistAcrossRuns) {
  Program p(R"mlir(
tg.variable @acc init(zeros) : tensor<2xf32>
tg.variable @count init(ones) : tensor<i32>
func.func @accumulate(%x: tensor<2xf32>, %n: tensor<i32>) -> tensor<2xf32> {
  %a = tg.load @acc : tensor<2xf32>
  %s = tg.add %a, %x : tensor<2xf32>
  tg.store %s, @acc : tensor<2xf32>
  tg.store %n, @count : tensor<i32>
  return %s : tensor<2xf32>
}
)mlir",
            Precision::F64);
  ASSERT_TRUE(p.ok()) << p.diagnostics();
  p.interp->initializeVariables(1);
  EXPECT_EQ(p.interp->variable("count")->data, std::vector<double>({1}));
  HostTensor x = f32({2}, {1.5, -2});
  p.run("accumulate", {x, HostTensor::scalar(7, ElementType::I32)});
  auto out = p.run("accumulate", {x, HostTensor::scalar(8, ElementType::I32)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data, std::vector<double>({3, -4}));
  EXPECT_EQ(p.interp->variable("acc")->data, std::vector<double>({3, -4}));
  EXPECT_EQ(p.interp->variable("count")->type, ElementType::I32);
  EXPECT_EQ(p.interp->variable("count")->data, std::vector<double>({8}));
  EXPECT_EQ(p.interp->variable("missing"), nullptr);
}

// evaluate() computes one result from the ops it needs: an op only another
// result needs is skipped (here one that would fail: its id is out of
// range), ops with side effects run in order (the load sees the store), and
// no variable changes.
TEST(State, EvaluateRunsOnlyWhatOneResultNeeds) {
  Program p(R"mlir(
tg.variable @acc init(ones) : tensor<2xf32>
func.func @f(%x: tensor<2xf32>, %t: tensor<3x2xf32>, %ids: tensor<2xi32>)
    -> (tensor<2xf32>, tensor<2x2xf32>) {
  %y = tg.embedding %t[%ids] : tensor<3x2xf32>, tensor<2xi32> -> tensor<2x2xf32>
  tg.store %x, @acc : tensor<2xf32>
  %a = tg.load @acc : tensor<2xf32>
  %s = tg.add %a, %x : tensor<2xf32>
  return %s, %y : tensor<2xf32>, tensor<2x2xf32>
}
)mlir",
            Precision::F64);
  ASSERT_TRUE(p.ok()) << p.diagnostics();
  p.interp->initializeVariables(1);
  std::vector<HostTensor> args = {f32({2}, {1.5, -2}), HostTensor({3, 2}),
                                  HostTensor::i32({2}, {1, 3})};
  mlir::FailureOr<HostTensor> sum = p.interp->evaluate("f", args, 0);
  ASSERT_TRUE(succeeded(sum)) << p.diagnostics();
  EXPECT_EQ(sum->data, std::vector<double>({3, -4}));
  EXPECT_EQ(p.interp->variable("acc")->data, std::vector<double>({1, 1}));
  // The result that needs the embedding fails as run() does.
  p.t.messages.clear();
  EXPECT_TRUE(failed(p.interp->evaluate("f", args, 1)));
  ASSERT_EQ(p.t.messages.size(), 1u) << p.diagnostics();
  EXPECT_EQ(p.t.messages[0],
            "'tg.embedding' op id 3 at flat index 1 is outside [0, 3)");
  EXPECT_TRUE(failed(p.interp->evaluate("f", args, 2)));
}

TEST(State, InitializeVariablesFollowsEachInitKind) {
  const char *source = R"mlir(
tg.variable @z init(zeros) : tensor<2x2xf32>
tg.variable @o init(ones) : tensor<3xf32>
tg.variable @n trainable init(normal, 2.000000e-02) : tensor<4x8xf32>
tg.variable @u trainable init(uniform, 1.000000e-01) : tensor<5xf32>
tg.variable @x trainable init(xavier_uniform) : tensor<6x10xf32>
)mlir";
  for (Precision precision : {Precision::F64, Precision::F32}) {
    Program p(source, precision);
    ASSERT_TRUE(p.ok()) << p.diagnostics();
    p.interp->initializeVariables(7);
    EXPECT_EQ(p.interp->variable("z")->data, std::vector<double>(4, 0.0));
    EXPECT_EQ(p.interp->variable("o")->data, std::vector<double>(3, 1.0));
    // Each matches the runtime's fill (which generated code uses too).
    struct Expected {
      const char *name;
      runtime::InitKind kind;
      double scale;
      std::vector<int64_t> shape;
    };
    for (const Expected &e :
         {Expected{"n", runtime::InitKind::Normal, 0.02, {4, 8}},
          Expected{"u", runtime::InitKind::Uniform, 0.1, {5}},
          Expected{"x", runtime::InitKind::XavierUniform, 0.0, {6, 10}}}) {
      std::vector<double> values(HostTensor::countOf(e.shape));
      ASSERT_TRUE(runtime::initializeTensor(values.data(), e.shape, e.kind,
                                            e.scale, 7, e.name));
      if (precision == Precision::F32)
        for (double &v : values)
          v = static_cast<float>(v);
      EXPECT_EQ(p.interp->variable(e.name)->data, values) << e.name;
    }
  }
}

/// One Adam update of a 2-element parameter; lr and step are inputs.
const char *const kAdamStep = R"mlir(
tg.variable @w trainable init(ones) : tensor<2xf32>
tg.variable @m init(zeros) : tensor<2xf32>
tg.variable @v init(zeros) : tensor<2xf32>
func.func @step(%g: tensor<2xf32>, %lr: tensor<f32>, %t: tensor<i32>) {
  tg.adam_update @w, @m, @v grad %g lr %lr step %t
      beta1 0.899999976 beta2 9.800000e-01 eps 9.99999971e-10 : tensor<2xf32>
  return
}
)mlir";

// One Adam step from zero moments (t = 1), then one at t = 3 from given
// moments; betas and epsilon are the f32 attributes' values.
TEST(State, AdamMatchesTheHandComputedUpdate) {
  Program p(kAdamStep,
            Precision::F64);
  ASSERT_TRUE(p.ok()) << p.diagnostics();
  p.interp->initializeVariables(1);
  double b1 = 0.9f, b2 = 0.98f, eps = 1e-9f, lr = 0.1;
  std::vector<double> g{0.5, -2.0};
  p.run("step", {f32({2}, g), HostTensor::scalar(lr),
                 HostTensor::scalar(1, ElementType::I32)});
  for (int i = 0; i < 2; ++i) {
    double m = (1 - b1) * g[i], v = (1 - b2) * g[i] * g[i];
    EXPECT_DOUBLE_EQ(p.interp->variable("m")->data[i], m);
    EXPECT_DOUBLE_EQ(p.interp->variable("v")->data[i], v);
    // At t = 1 the bias correction gives m^ = g, v^ = g^2, so
    // w = 1 - lr g / (|g| + eps), i.e. a step of about lr against sign(g).
    double w = 1 - lr * (m / (1 - b1)) / (std::sqrt(v / (1 - b2)) + eps);
    EXPECT_DOUBLE_EQ(p.interp->variable("w")->data[i], w);
    EXPECT_NEAR(w, 1 - 0.1 * (g[i] > 0 ? 1 : -1), 1e-8);
  }

  *p.interp->variable("w") = f32({2}, {0.25, -0.5});
  *p.interp->variable("m") = f32({2}, {0.1, 0.2});
  *p.interp->variable("v") = f32({2}, {0.01, 0.05});
  g = {0.3, -0.1};
  p.run("step", {f32({2}, g), HostTensor::scalar(lr),
                 HostTensor::scalar(3, ElementType::I32)});
  double w0[] = {0.25, -0.5}, m0[] = {0.1, 0.2}, v0[] = {0.01, 0.05};
  for (int i = 0; i < 2; ++i) {
    double m = b1 * m0[i] + (1 - b1) * g[i];
    double v = b2 * v0[i] + (1 - b2) * g[i] * g[i];
    double mHat = m / (1 - b1 * b1 * b1), vHat = v / (1 - b2 * b2 * b2);
    EXPECT_NEAR(p.interp->variable("w")->data[i],
                w0[i] - lr * mHat / (std::sqrt(vHat) + eps), 1e-15);
  }
}

TEST(State, F32RoundsEveryResultAndF64DoesNot) {
  const char *source = R"mlir(
func.func @f(%x: tensor<1xf32>) -> tensor<1xf32> {
  %y = tg.scale %x by 1.000000e-01 : tensor<1xf32>
  return %y : tensor<1xf32>
}
)mlir";
  double third = 1.0 / 3.0, factor = 0.1f;
  Program single(source, Precision::F32), dbl(source, Precision::F64);
  ASSERT_TRUE(single.ok() && dbl.ok());
  auto s = single.run("f", {f32({1}, {third})});
  auto d = dbl.run("f", {f32({1}, {third})});
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(s[0][0], static_cast<float>(static_cast<float>(third) * factor));
  EXPECT_EQ(d[0][0], third * factor);
}

//===--- Errors: a diagnostic and a failed run, never a crash ------------===//

TEST(Errors, UnknownOpIsReportedAtItsLocation) {
  Program p(R"mlir(
tg.variable @acc init(zeros) : tensor<2xf32>
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  tg.store %x, @acc : tensor<2xf32>
  %y = "foo.bar"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}
)mlir",
            Precision::F64);
  ASSERT_TRUE(p.ok()) << p.diagnostics();
  std::string location;
  auto handler =
      p.t.context.getDiagEngine().registerHandler([&](mlir::Diagnostic &diag) {
        llvm::raw_string_ostream os(location);
        os << diag.getLocation();
        return mlir::failure(); // let TestContext record the message too
      });
  p.t.messages.clear();
  auto result = p.interp->run("f", {f32({2}, {1, 2})});
  p.t.context.getDiagEngine().eraseHandler(handler);
  EXPECT_TRUE(failed(result));
  ASSERT_EQ(p.t.messages.size(), 1u);
  EXPECT_EQ(p.t.messages[0],
            "'foo.bar' op is not supported by the reference interpreter");
  EXPECT_EQ(location, "loc(\"model.mlir\":5:8)");
  // The store before it did not happen: a failed run changes no variable.
  EXPECT_EQ(p.interp->variable("acc")->data, std::vector<double>({0, 0}));
}

const char *kEmbed = R"mlir(
func.func @f(%t: tensor<3x2xf32>, %ids: tensor<2xi32>) -> tensor<2x2xf32> {
  %y = tg.embedding %t[%ids] : tensor<3x2xf32>, tensor<2xi32> -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}
)mlir";

/// Runs @f of kEmbed and returns the one diagnostic it must produce.
std::string embedError(llvm::ArrayRef<HostTensor> args,
                       llvm::StringRef func = "f") {
  Program p(kEmbed, Precision::F64);
  EXPECT_TRUE(p.ok()) << p.diagnostics();
  p.t.messages.clear();
  EXPECT_TRUE(failed(p.interp->run(func, args)));
  EXPECT_EQ(p.t.messages.size(), 1u) << p.diagnostics();
  return p.t.messages.empty() ? "" : p.t.messages[0];
}

TEST(Errors, WrongArgumentCount) {
  EXPECT_EQ(embedError({HostTensor({3, 2})}),
            "@f takes 2 arguments but was given 1");
}

TEST(Errors, WrongArgumentShapeOrType) {
  EXPECT_EQ(embedError({HostTensor({2, 3}), HostTensor({2}, ElementType::I32)}),
            "argument #0 of @f must be [3, 2] f32 but the given tensor is [2, "
            "3] f32");
  EXPECT_EQ(
      embedError({HostTensor({3, 2}), HostTensor({2})}),
      "argument #1 of @f must be [2] i32 but the given tensor is [2] f32");
  EXPECT_EQ(embedError({HostTensor({3, 2}), HostTensor::i32({2}, {0, 0.5})}),
            "argument #1 of @f is i32 but holds 0.5");
  HostTensor shortData({3, 2});
  shortData.data.pop_back();
  EXPECT_EQ(
      embedError({shortData, HostTensor({2}, ElementType::I32)}),
      "argument #0 of @f has shape [3, 2] (6 elements) but holds 5 values");
}

TEST(Errors, IdOutOfRange) {
  EXPECT_EQ(embedError({HostTensor({3, 2}), HostTensor::i32({2}, {1, 3})}),
            "'tg.embedding' op id 3 at flat index 1 is outside [0, 3)");
}

TEST(Errors, UnknownFunction) {
  EXPECT_EQ(embedError({}, "g"), "no function @g with a body to interpret");
}

TEST(Errors, VariableOverwrittenWithAnotherShape) {
  Program p(R"mlir(
tg.variable @w init(zeros) : tensor<2xf32>
func.func @f() -> tensor<2xf32> {
  %w = tg.load @w : tensor<2xf32>
  return %w : tensor<2xf32>
}
)mlir",
            Precision::F64);
  ASSERT_TRUE(p.ok()) << p.diagnostics();
  *p.interp->variable("w") = HostTensor({3});
  p.t.messages.clear();
  EXPECT_TRUE(failed(p.interp->run("f", {})));
  ASSERT_EQ(p.t.messages.size(), 1u);
  EXPECT_EQ(p.t.messages[0],
            "variable @w is declared [2] but holds [3] with 3 values");
}

TEST(Errors, AdamStepZero) {
  Program p(kAdamStep,
            Precision::F64);
  ASSERT_TRUE(p.ok()) << p.diagnostics();
  p.t.messages.clear();
  EXPECT_TRUE(
      failed(p.interp->run("step", {HostTensor({2}), HostTensor::scalar(0.1),
                                    HostTensor::scalar(0, ElementType::I32)})));
  ASSERT_EQ(p.t.messages.size(), 1u);
  EXPECT_EQ(p.t.messages[0],
            "'tg.adam_update' op step must be >= 1 (Adam's bias correction "
            "divides by 1 - beta^step) but is 0");
}

} // namespace
