//===- InterpreterTestUtil.h - helpers of the tests ---------*- C++ -*-===//
#ifndef TGC_TEST_UNIT_INTERPRETER_INTERPRETERTESTUTIL_H
#define TGC_TEST_UNIT_INTERPRETER_INTERPRETERTESTUTIL_H

#include "codegen/interpreter/GradientCheck.h" // mixedError
#include "codegen/interpreter/Interpreter.h"
#include "test/unit/TestContext.h"

#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>

namespace tgc::test {

/// Host tensors written as literals in the tests.
inline HostTensor f32(std::vector<int64_t> shape, std::vector<double> data) {
  return HostTensor::f32(std::move(shape), std::move(data));
}
inline HostTensor i32(std::vector<int64_t> shape, std::vector<double> data) {
  return HostTensor::i32(std::move(shape), std::move(data));
}

/// A parsed module and an interpreter over it.
struct Program {
  TestContext t;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::unique_ptr<Interpreter> interp;

  Program(const std::string &source, Precision precision) {
    t.context.allowUnregisteredDialects();
    module = mlir::parseSourceString<mlir::ModuleOp>(source, &t.context,
                                                     "model.mlir");
    if (module)
      interp = std::make_unique<Interpreter>(*module, precision);
  }
  bool ok() const { return static_cast<bool>(interp); }

  /// Runs `func` and fails the test (with the diagnostics) if it fails.
  std::vector<HostTensor> run(llvm::StringRef func,
                              llvm::ArrayRef<HostTensor> args) {
    auto results = interp->run(func, args);
    if (failed(results)) {
      ADD_FAILURE() << "run @" << func.str() << " failed: " << diagnostics();
      return {};
    }
    return std::move(*results);
  }
  std::string diagnostics() const {
    std::string all;
    for (const std::string &m : t.messages)
      all += m + "\n";
    return all;
  }
};

/// "tensor<2x3xf32>"; element "f32" or "i32".
inline std::string tensorType(const std::vector<int64_t> &shape,
                              const std::string &element = "f32") {
  std::string text = "tensor<";
  for (int64_t dim : shape)
    text += std::to_string(dim) + "x";
  return text + element + ">";
}

/// `text` with every "{NAME}" replaced by its value: module templates.
inline std::string
substitute(std::string text,
           std::initializer_list<std::pair<std::string, std::string>> values) {
  for (const auto &[name, value] : values) {
    std::string key = "{" + name + "}";
    for (size_t at = text.find(key); at != std::string::npos;
         at = text.find(key, at + value.size()))
      text.replace(at, key.size(), value);
  }
  return text;
}

/// Portable random numbers: mt19937_64's output is specified by the
/// standard, the distributions are not, so the mapping is done here.
class Random {
public:
  explicit Random(uint64_t seed) : engine(seed) {}
  double uniform(double lo, double hi) {
    double u = static_cast<double>(engine() >> 11) * 0x1.0p-53;
    return lo + (hi - lo) * u;
  }
  int64_t index(int64_t lo, int64_t hi) { // in [lo, hi]
    return lo +
           static_cast<int64_t>(engine() % static_cast<uint64_t>(hi - lo + 1));
  }
  HostTensor tensor(std::vector<int64_t> shape, double lo = -1.0,
                    double hi = 1.0) {
    HostTensor t(std::move(shape));
    for (double &x : t.data)
      x = uniform(lo, hi);
    return t;
  }
  HostTensor ids(std::vector<int64_t> shape, int64_t bound) {
    HostTensor t(std::move(shape), ElementType::I32);
    for (double &x : t.data)
      x = static_cast<double>(index(0, bound - 1));
    return t;
  }

private:
  std::mt19937_64 engine;
};

/// min(absolute, relative) error: small values compare absolutely, large
/// ones relatively.

inline void expectClose(const HostTensor &actual, const HostTensor &expected,
                        double tolerance, const std::string &what = "") {
  ASSERT_EQ(actual.shape, expected.shape) << what;
  double worst = 0.0;
  int64_t worstIndex = 0;
  for (int64_t i = 0; i < expected.numElements(); ++i) {
    double err = mixedError(actual[i], expected[i]);
    if (std::isnan(err)) {
      ADD_FAILURE() << what << ": element " << i << " is " << actual[i]
                    << ", expected " << expected[i];
      return;
    }
    if (err > worst) {
      worst = err;
      worstIndex = i;
    }
  }
  EXPECT_LE(worst, tolerance)
      << what << ": element " << worstIndex << " is " << actual[worstIndex]
      << ", expected " << expected[worstIndex];
}

} // namespace tgc::test

#endif // TGC_TEST_UNIT_INTERPRETER_INTERPRETERTESTUTIL_H
