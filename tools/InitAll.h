//===- InitAll.h - what the tgc tools register ---------------------*- C++ -*-===//
#ifndef TGC_TOOLS_INITALL_H
#define TGC_TOOLS_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace tgc {

/// The dialects a tgc module may hold, tg and func, with every concern's
/// models of the tg ops (gradients, decoder axes, reference execution,
/// kernel calls).
void registerAllDialects(mlir::DialectRegistry &registry);

/// Every tgc pass and pipeline, plus MLIR's generic cleanups (canonicalize,
/// cse, symbol-dce, ...) that the pipelines use.
void registerAllPasses();

} // namespace tgc

#endif // TGC_TOOLS_INITALL_H
