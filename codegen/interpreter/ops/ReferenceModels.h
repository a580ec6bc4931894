//===- ReferenceModels.h - how the interpreter runs each op -----*- C++ -*-===//
//
// The reference interpreter runs an op through its tg::ReferenceOpInterface
// model. The models live with the interpreter, not with the dialect, so a
// tool that runs the interpreter registers them on its DialectRegistry
// before it creates the context (the way MLIR's external models are).
//
//===----------------------------------------------------------------------===//
#ifndef TGC_CODEGEN_INTERPRETER_OPS_REFERENCEMODELS_H
#define TGC_CODEGEN_INTERPRETER_OPS_REFERENCEMODELS_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace tgc::interp {

/// Attaches tg::ReferenceOpInterface to every tg op the interpreter runs and
/// to func.return (which hands the function's results to the executor).
void registerReferenceModels(mlir::DialectRegistry &registry);

} // namespace tgc::interp

#endif // TGC_CODEGEN_INTERPRETER_OPS_REFERENCEMODELS_H
