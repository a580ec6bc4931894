//===- TestContext.h - an MLIRContext with the tgc dialects loaded -*- C++ -*-===//
#ifndef TGC_TEST_UNIT_TESTCONTEXT_H
#define TGC_TEST_UNIT_TESTCONTEXT_H

#include "ir/TgDialect.h"
#include "ir/TgOps.h"
#include "tools/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <string>
#include <vector>

namespace tgc::test {

/// A context with tg and func loaded that records every diagnostic.
class TestContext {
public:
  TestContext() : context(makeRegistry()) {
    context.loadAllAvailableDialects();
    handler = context.getDiagEngine().registerHandler(
        [this](mlir::Diagnostic &diag) {
          messages.push_back(diag.str());
          return mlir::success();
        });
  }
  ~TestContext() { context.getDiagEngine().eraseHandler(handler); }

  mlir::RankedTensorType f32(llvm::ArrayRef<int64_t> shape) {
    return mlir::RankedTensorType::get(shape, mlir::Float32Type::get(&context));
  }
  mlir::RankedTensorType i32(llvm::ArrayRef<int64_t> shape) {
    return mlir::RankedTensorType::get(
        shape, mlir::IntegerType::get(&context, 32));
  }

  mlir::MLIRContext context;
  std::vector<std::string> messages;

private:
  static mlir::DialectRegistry makeRegistry() {
    mlir::DialectRegistry registry;
    registerAllDialects(registry);
    return registry;
  }
  mlir::DiagnosticEngine::HandlerID handler;
};

} // namespace tgc::test

#endif // TGC_TEST_UNIT_TESTCONTEXT_H
