//===- CompiledTransformer.h - a model through the passes -----*- C++ -*-===//
//
// The subject of the pass tests that run a whole model: a Transformer
// (models/Transformer.h) as the frontend builds its @loss module, after the
// passes a test adds.
//
//===----------------------------------------------------------------------===//
#ifndef TGC_TEST_UNIT_PASSES_COMPILEDTRANSFORMER_H
#define TGC_TEST_UNIT_PASSES_COMPILEDTRANSFORMER_H

#include "test/unit/TestContext.h"

#include "frontend/Builder.h"
#include "models/Transformer.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <gtest/gtest.h>

namespace tgc::test {

/// `config`'s Transformer as a @loss module after the passes `addPasses`
/// adds; null, with a test failure, where building or a pass fails.
inline mlir::OwningOpRef<mlir::ModuleOp>
compiledTransformer(TestContext &t, const models::TransformerConfig &config,
                    llvm::function_ref<void(mlir::PassManager &)> addPasses) {
  auto built = buildGraph(t.context, "loss", [&](Builder &b) {
    models::buildTransformer(b, config);
  });
  EXPECT_TRUE(mlir::succeeded(built));
  if (mlir::failed(built))
    return nullptr;
  mlir::PassManager pm(&t.context);
  addPasses(pm);
  EXPECT_TRUE(mlir::succeeded(pm.run(**built)))
      << ::testing::PrintToString(t.messages);
  return std::move(*built);
}

} // namespace tgc::test

#endif // TGC_TEST_UNIT_PASSES_COMPILEDTRANSFORMER_H
